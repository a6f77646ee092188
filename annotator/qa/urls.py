"""URLs of the QA loop (namespace ``qa``): questions, feedback, review, measures, qualification."""

from django.urls import path

from . import views as qa
from . import qualification_views as qualification

app_name = "qa"

urlpatterns = [
    path("qa/questions/", qa.inbox, name="inbox"),
    path("qa/questions/<int:pk>/", qa.question_detail, name="question"),
    path("qa/questions/<int:pk>/messages/", qa.question_messages, name="question_messages"),
    path("qa/questions/<int:pk>/close/", qa.question_close, name="question_close"),
    path("qa/questions/<int:pk>/promote/", qa.question_promote, name="question_promote"),
    path("qa/mine/", qa.my_questions, name="my_questions"),
    path("qa/feedback/", qa.feedback_inbox, name="feedback_inbox"),
    path("qa/feedback/<int:pk>/acknowledge/", qa.feedback_acknowledge, name="feedback_acknowledge"),
    path("qa/feedback/<int:pk>/amend/", qa.feedback_amend, name="feedback_amend"),
    path("qa/badges/", qa.nav_badges, name="nav_badges"),
    path("p/<slug:slug>/qa/ask/", qa.question_ask, name="ask"),
    path("p/<slug:slug>/qa/turns/<int:turn_id>/questions/", qa.turn_questions, name="turn_questions"),
    path("p/<slug:slug>/qa/review/", qa.review, name="review"),
    path("p/<slug:slug>/qa/annotations/<int:annotation_id>/feedback/", qa.feedback_give, name="feedback_give"),
    path("p/<slug:slug>/qa/measures/", qa.measures, name="measures"),
    path("p/<slug:slug>/qa/qualification/", qualification.setup, name="qualification"),
    path("p/<slug:slug>/qa/qualification/score/", qualification.score, name="qualification_score"),
    path("p/<slug:slug>/qa/qualification/results/<int:pk>/", qualification.score, name="qualification_result"),
    path("p/<slug:slug>/qa/qualification/results/<int:pk>/retry/", qualification.allow_retry,
         name="qualification_retry"),
    path("p/<slug:slug>/qa/qualification/retries/", qualification.retries, name="qualification_retries"),
    path("p/<slug:slug>/qa/qualification/sentences/<int:sentence_id>/reason/", qualification.gold_reason,
         name="qualification_gold_reason"),
]
