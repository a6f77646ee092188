"""The QA pages through the test client: who sees what, and what each action does."""

import pytest
from django.urls import reverse

from annotator.models import Feedback, GuidelineExample, Question, QualificationResult
from annotator.qa import services as qa
from annotator.qa import qualification
from annotator.domain.vocabulary import Role
from tests.factories import ProjectFactory, TurnFactory, UserFactory, member
from tests.factories_qa import finish, gold_turn, submitted_work

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    project = ProjectFactory()
    turn = TurnFactory(dialogue__project=project)
    people = {
        "lead": member(project, Role.LEAD),
        "ann": member(project, Role.ANNOTATOR, username="ann"),
        "bob": member(project, Role.ANNOTATOR, username="bob"),
        "adj": member(project, Role.ADJUDICATOR),
        "outsider": UserFactory(),
    }
    return project, turn, people


def ask_as(client, user, project, turn, body="Is 'probably' cognitive?", path='{"relevance": "relevant"}', **extra):
    client.force_login(user)
    data = {"turn": turn.pk, "sentence": turn.sentences.get(index=1).pk, "path": path, "body": body}
    return client.post(reverse("qa:ask", args=[project.slug]), data, **extra)


def test_asking_from_the_annotation_screen_returns_the_turn_panel(client, world):
    project, turn, p = world
    response = ask_as(client, p["ann"], project, turn, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    question = Question.objects.get()
    assert (question.asked_by, question.step, question.path) == (p["ann"], "kind", {"relevance": "relevant"})
    assert b"Question sent to the leads" in response.content and b"Is &#x27;probably&#x27; cognitive?" in response.content


def test_a_bad_question_is_answered_with_the_reason_and_the_text_kept(client, world):
    project, turn, p = world
    response = ask_as(client, p["ann"], project, turn, path='{"kind": "factual"}', body="Keep me",
                      HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and response["HX-Retarget"] == "#ask-form"
    assert b"decision path is not valid" in response.content and b"Keep me" in response.content
    assert not Question.objects.exists()


def test_outsiders_cannot_ask_and_cannot_name_turns_of_other_projects(client, world):
    project, turn, p = world
    assert ask_as(client, p["outsider"], project, turn).status_code == 404
    foreign = TurnFactory()
    client.force_login(p["ann"])
    response = client.post(reverse("qa:ask", args=[project.slug]),
                           {"turn": foreign.pk, "body": "?", "path": ""})
    assert response.status_code == 404
    assert not Question.objects.exists()


def test_an_annotator_sees_only_their_own_questions(client, world):
    project, turn, p = world
    ask_as(client, p["ann"], project, turn, body="Ann's question")
    question = Question.objects.get()
    client.force_login(p["bob"])
    assert client.get(reverse("qa:question", args=[question.pk])).status_code == 404
    assert client.get(reverse("qa:question_messages", args=[question.pk])).status_code == 404
    assert client.post(reverse("qa:question", args=[question.pk]), {"body": "hijack"}).status_code == 404
    assert b"Ann&#x27;s question" not in client.get(reverse("qa:my_questions")).content
    panel = client.get(reverse("qa:turn_questions", args=[project.slug, turn.pk]))
    assert panel.status_code == 200 and b"Ann&#x27;s question" not in panel.content
    client.force_login(p["ann"])
    assert b"Ann&#x27;s question" in client.get(reverse("qa:my_questions")).content
    assert client.get(reverse("qa:question", args=[question.pk])).status_code == 200


@pytest.mark.parametrize("who", ["ann", "bob", "adj", "outsider"])
def test_only_leads_reach_the_inbox_answer_close_and_promote(client, world, who):
    project, turn, p = world
    ask_as(client, p["ann"], project, turn)
    question = Question.objects.get()
    client.force_login(p[who])
    assert client.get(reverse("qa:inbox")).status_code == 404
    assert client.post(reverse("qa:question_close", args=[question.pk])).status_code == 404
    assert client.post(reverse("qa:question_promote", args=[question.pk]),
                       {"step": "kind", "expected_answer": "cognitive"}).status_code == 404
    if who != "ann":
        assert client.post(reverse("qa:question", args=[question.pk]), {"body": "my answer"}).status_code == 404
    question.refresh_from_db()
    assert question.status == Question.Status.OPEN and question.messages.count() == 1
    assert not GuidelineExample.objects.exists()


def test_lead_inbox_badge_answer_close_and_promote(client, world):
    project, turn, p = world
    ask_as(client, p["ann"], project, turn, body="<script>alert(1)</script> is this cognitive?")
    question = Question.objects.get()
    client.force_login(p["lead"])
    home = client.get(reverse("home")).content.decode()
    assert 'aria-label="1 open questions"' in home
    inbox = client.get(reverse("qa:inbox")).content.decode()
    assert f"#{question.pk}" in inbox
    page = client.get(reverse("qa:question", args=[question.pk])).content.decode()
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    response = client.post(reverse("qa:question", args=[question.pk]), {"body": "Yes, an evaluation."})
    assert response.status_code == 302
    question.refresh_from_db()
    assert question.status == Question.Status.ANSWERED and question.unread_by_asker
    assert 'aria-label="1 open questions"' not in client.get(reverse("home")).content.decode()
    client.post(reverse("qa:question_promote", args=[question.pk]),
                {"step": "kind", "expected_answer": "cognitive", "text": "", "explanation": ""})
    example = GuidelineExample.objects.get()
    assert (example.step, example.is_positive, example.source_question) == ("kind", False, question)
    client.post(reverse("qa:question_close", args=[question.pk]))
    question.refresh_from_db()
    assert question.status == Question.Status.CLOSED


def test_the_asker_gets_a_badge_until_they_read_the_answer(client, world):
    project, turn, p = world
    ask_as(client, p["ann"], project, turn)
    question = Question.objects.get()
    qa.question_answer(question=question, lead=p["lead"], body="Factual.")
    client.force_login(p["ann"])
    badges = client.get(reverse("qa:nav_badges")).content.decode()
    assert 'aria-label="1 new answers"' in badges
    panel = client.get(reverse("qa:turn_questions", args=[project.slug, turn.pk])).content.decode()
    assert "Factual." in panel and ">new<" in panel
    assert 'aria-label="1 new answers"' not in client.get(reverse("qa:nav_badges")).content.decode()


def test_review_modes_and_feedback(client, world):
    project, _, p = world
    disputed = gold_turn(project, ["speculative", "faithful", "irrelevant"], reasons=["Unsupported hedge.", "", ""])
    ann_work = submitted_work(disputed, p["ann"], ["reliable", "faithful", "irrelevant"])
    submitted_work(disputed, p["bob"], ["speculative", "faithful", "irrelevant"])
    client.force_login(p["lead"])
    url = reverse("qa:review", args=[project.slug])
    sample = client.get(url, {"mode": "sample", "annotator": p["ann"].pk}).content.decode()
    assert sample.count('data-testid="review-row"') == 3
    disagreements = client.get(url, {"mode": "disagreements"}).content.decode()
    assert disagreements.count('data-testid="review-row"') == 2  # ann's and bob's answer on the one sentence
    gold = client.get(url, {"mode": "gold"}).content.decode()
    assert gold.count('data-testid="review-row"') == 1 and "Unsupported hedge." in gold
    annotation = ann_work.sentence_annotations.get(sentence__index=0)
    response = client.post(reverse("qa:feedback_give", args=[project.slug, annotation.pk]),
                           {"expected_label": "speculative", "comment": "No support in the reference."},
                           HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and b"Feedback sent" in response.content
    feedback = Feedback.objects.get()
    assert (feedback.lead, feedback.expected_label, feedback.annotation) == (p["lead"], "speculative", annotation)
    # Annotators, adjudicators and outsiders cannot review nor give feedback.
    for who in ("ann", "bob", "adj", "outsider"):
        client.force_login(p[who])
        assert client.get(url).status_code == 404
        assert client.post(reverse("qa:feedback_give", args=[project.slug, annotation.pk]),
                           {"comment": "x"}).status_code == 404
    assert Feedback.objects.count() == 1


def test_feedback_inbox_is_the_annotators_own_and_acknowledging_clears_the_badge(client, world):
    project, turn, p = world
    work = submitted_work(turn, p["ann"], ["faithful", "reliable", "irrelevant"])
    feedback = qa.feedback_give(annotation=work.sentence_annotations.get(sentence__index=1), lead=p["lead"],
                                comment="Hedged: speculative.", expected_label="speculative")
    client.force_login(p["bob"])
    assert b"Hedged" not in client.get(reverse("qa:feedback_inbox")).content
    assert client.post(reverse("qa:feedback_acknowledge", args=[feedback.pk])).status_code == 404
    client.force_login(p["lead"])  # the lead gave it but it is not theirs to acknowledge
    assert client.post(reverse("qa:feedback_acknowledge", args=[feedback.pk])).status_code == 404
    client.force_login(p["ann"])
    assert 'aria-label="1 feedback items to acknowledge"' in client.get(reverse("qa:nav_badges")).content.decode()
    inbox = client.get(reverse("qa:feedback_inbox")).content.decode()
    assert "Hedged: speculative." in inbox and "Acknowledge" in inbox
    response = client.post(reverse("qa:feedback_acknowledge", args=[feedback.pk]), HTTP_HX_REQUEST="true")
    assert b"Acknowledged" in response.content
    feedback.refresh_from_db()
    assert feedback.acknowledged_at is not None
    assert "feedback items to acknowledge" not in client.get(reverse("qa:nav_badges")).content.decode()


def test_qualification_pages(client, world):
    project, _, p = world
    first = gold_turn(project, ["faithful", "speculative"], reasons=["", "Not in the reference."])
    client.force_login(p["lead"])
    setup = reverse("qa:qualification", args=[project.slug])
    assert f'value="{first.pk}"' in client.get(setup).content.decode()
    response = client.post(setup, {"turns": [first.pk], "pass_mark": "90"})
    assert response.status_code == 302
    first.refresh_from_db(), project.refresh_from_db()
    assert first.is_qualification and project.qualification_pass_mark == pytest.approx(0.9)
    # Ann takes it and gets one sentence wrong.
    client.force_login(p["ann"])
    score_url = reverse("qa:qualification_score", args=[project.slug])
    assert b"1 of 1 turn(s) left" in client.get(score_url).content
    finish(qualification.qualification_assignment_next(project, p["ann"]), ["faithful", "reliable"])
    page = client.get(score_url).content.decode()
    assert "1 of 2 sentences right (50%)" in page and "Not passed" in page
    assert "Not in the reference." in page and 'data-testid="diverged-at">Is it grounded in the reference?' in page
    result = QualificationResult.objects.get()
    # Bob may not see Ann's result, nor allow her a retry.
    client.force_login(p["bob"])
    assert client.get(reverse("qa:qualification_result", args=[project.slug, result.pk])).status_code == 404
    assert client.post(reverse("qa:qualification_retry", args=[project.slug, result.pk])).status_code == 404
    assert client.get(setup).status_code == 404
    # The lead sees the results per annotator and allows a retry.
    client.force_login(p["lead"])
    listing = client.get(setup).content.decode()
    assert "ann" in listing and "1 / 2" in listing and "Allow a retry" in listing
    assert client.get(reverse("qa:qualification_result", args=[project.slug, result.pk])).status_code == 200
    client.post(reverse("qa:qualification_retry", args=[project.slug, result.pk]))
    result.refresh_from_db()
    assert result.retry_allowed
    client.force_login(p["ann"])
    assert qualification.qualification_turns_for(project, p["ann"]) == [first]


def test_qualification_setup_errors_are_shown(client, world):
    project, turn, p = world
    client.force_login(p["lead"])
    response = client.post(reverse("qa:qualification", args=[project.slug]),
                           {"turns": [turn.pk], "pass_mark": "85"}, follow=True)
    assert "lacks a gold label" in response.content.decode()


def test_project_page_links(client, world):
    project, _, p = world
    client.force_login(p["lead"])
    page = client.get(reverse("project_detail", args=[project.slug])).content.decode()
    assert reverse("qa:review", args=[project.slug]) in page
    client.force_login(p["ann"])
    page = client.get(reverse("project_detail", args=[project.slug])).content.decode()
    assert reverse("qa:review", args=[project.slug]) not in page
    assert reverse("qa:feedback_inbox") in page


def test_the_queue_shows_new_answers_and_feedback_with_badges(client, world):
    project, turn, p = world
    ask_as(client, p["ann"], project, turn)
    qa.question_answer(question=Question.objects.get(), lead=p["lead"], body="Cognitive.")
    work = submitted_work(TurnFactory(dialogue__project=project), p["ann"], ["faithful", "reliable", "irrelevant"])
    qa.feedback_give(annotation=work.sentence_annotations.first(), lead=p["lead"], comment="Fine.")
    client.force_login(p["ann"])
    queue = client.get(reverse("workspace_queue", args=[project.slug])).content.decode()
    assert 'data-testid="queue-unread-answers">1<' in queue
    assert 'data-testid="queue-pending-feedback">1<' in queue
    client.force_login(p["bob"])
    queue = client.get(reverse("workspace_queue", args=[project.slug])).content.decode()
    assert "queue-unread-answers" not in queue and "queue-pending-feedback" not in queue


def test_the_navigation_badges_cost_the_same_queries_whatever_the_data(client, world):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    project, turn, p = world
    url = reverse("qa:nav_badges")

    def queries():
        client.force_login(p["lead"])
        with CaptureQueriesContext(connection) as captured:
            page = client.get(url).content.decode()
        return len(captured), page

    before, _ = queries()
    for _ in range(15):
        ask_as(client, p["ann"], project, turn)
    after, page = queries()
    assert 'aria-label="15 open questions"' in page
    assert after == before


def test_polled_fragments_answer_204_once_the_session_is_over(client, world):
    project, turn, p = world
    ask_as(client, p["ann"], project, turn)
    question = Question.objects.get()
    client.logout()
    for url in (reverse("qa:nav_badges"), reverse("qa:turn_questions", args=[project.slug, turn.pk]),
                reverse("qa:question_messages", args=[question.pk])):
        response = client.get(url, HTTP_HX_REQUEST="true")
        assert response.status_code == 204 and response.content == b""
    # Pages still send anonymous visitors to the login page.
    assert client.get(reverse("qa:my_questions")).status_code == 302


def test_a_wrong_answer_on_gold_without_a_reason_is_explained_by_the_protocol(client, world):
    """Imported gold carries no reason: the score says what the protocol asks at the step the annotator left the
    gold's path, instead of "No reason was recorded" on every such sentence (issue 17)."""
    from annotator.domain.definitions import STEP_DEFINITIONS
    from annotator.domain.vocabulary import Step

    project, _, p = world
    first = gold_turn(project, ["faithful", "speculative"], reasons=["", "Not in the reference."])
    qualification.qualification_set(project=project, actor=p["lead"], turn_ids=[first.pk], pass_mark=0.9)
    finish(qualification.qualification_assignment_next(project, p["ann"]), ["invented", "speculative"])
    client.force_login(p["ann"])
    page = client.get(reverse("qa:qualification_score", args=[project.slug])).content.decode()
    assert "No reason was recorded" not in page
    explanation = page.split('data-testid="gold-explanation">')[1].split("</p>")[0]
    assert f"At “{Step.FAITHFULNESS.label}”" in explanation.replace("&#x27;", "'")
    assert "<strong>Faithful</strong>" in explanation
    assert STEP_DEFINITIONS[Step.FAITHFULNESS][:40] in explanation.replace("&#x27;", "'").replace("&quot;", '"')
