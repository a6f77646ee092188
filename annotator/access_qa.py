"""Access getters for questions, feedback and qualification results (see ``annotator.access``).

The rule everywhere: an annotator reaches only their own questions, feedback and
results; a lead reaches those of the projects they lead. Anything else is a 404,
so that ids do not reveal what exists.
"""

from django.http import Http404

from .access import is_lead
from .models import Feedback, QualificationResult, Question, SentenceAnnotation


def access_question(user, question_id: int) -> Question:
    """A question the user asked, or one in a project they lead."""
    question = Question.objects.select_related("project", "turn__dialogue", "sentence", "asked_by").filter(
        pk=question_id
    ).first()
    if question is None or not (question.asked_by_id == user.pk or is_lead(user, question.project)):
        raise Http404("No such question")
    return question


def access_question_as_lead(user, question_id: int) -> Question:
    question = access_question(user, question_id)
    if not is_lead(user, question.project):
        raise Http404("No such question")
    return question


def access_feedback(user, feedback_id: int) -> Feedback:
    """Feedback addressed to the user, or given in a project they lead."""
    feedback = Feedback.objects.select_related(
        "project", "annotation__assignment", "annotation__sentence__turn__dialogue", "lead"
    ).filter(pk=feedback_id).first()
    if feedback is None or not (
        feedback.annotation.assignment.annotator_id == user.pk or is_lead(user, feedback.project)
    ):
        raise Http404("No such feedback")
    return feedback


def access_own_feedback(user, feedback_id: int) -> Feedback:
    """Feedback addressed to the user (acknowledge, amend)."""
    feedback = access_feedback(user, feedback_id)
    if feedback.annotation.assignment.annotator_id != user.pk:
        raise Http404("No such feedback")
    return feedback


def access_annotation_as_lead(user, project, annotation_id: int) -> SentenceAnnotation:
    """A sentence annotation of ``project`` (already fetched as lead)."""
    annotation = SentenceAnnotation.objects.select_related(
        "assignment__annotator", "assignment__project", "sentence__turn__dialogue"
    ).filter(pk=annotation_id, assignment__project=project).first()
    if annotation is None or not is_lead(user, project):
        raise Http404("No such annotation")
    return annotation


def access_qualification_result(user, project, result_id: int) -> QualificationResult:
    """The user's own result, or any result of a project they lead."""
    result = QualificationResult.objects.select_related("annotator").filter(pk=result_id, project=project).first()
    if result is None or not (result.annotator_id == user.pk or is_lead(user, project)):
        raise Http404("No such result")
    return result
