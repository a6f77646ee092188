"""Access getters for questions, feedback and qualification results (see ``annotator.access``).

The rule everywhere: a member of the project reaches only their own questions,
feedback and results; a lead reaches those of the projects they lead, except
another person's question or feedback on a turn the lead holds an unsubmitted
slot on (they are blind there). Someone no longer a member of the project
reaches nothing of it, their own threads included. Anything else is a 404, so
that ids do not reveal what exists.
"""

from django.http import Http404

from ..access import is_blind_on, is_lead, role_in
from ..models import Feedback, QualificationResult, Question, SentenceAnnotation


def _reaches(user, project, owner_id, turn_id) -> bool:
    """A member reaches their own record; a lead those of others too, but not on a turn they are blind on."""
    if role_in(user, project) is None:
        return False
    if owner_id == user.pk:
        return True
    return is_lead(user, project) and not is_blind_on(user, turn_id)


def access_question(user, question_id: int) -> Question:
    """A question the user asked in a project they still belong to, or one in a project they lead."""
    question = Question.objects.select_related("project", "turn__dialogue", "sentence", "asked_by").filter(
        pk=question_id
    ).first()
    if question is None or not _reaches(user, question.project, question.asked_by_id, question.turn_id):
        raise Http404("No such question")
    return question


def access_question_as_lead(user, question_id: int) -> Question:
    question = access_question(user, question_id)
    if not is_lead(user, question.project):
        raise Http404("No such question")
    return question


def access_feedback(user, feedback_id: int) -> Feedback:
    """Feedback addressed to the user in a project they still belong to, or given in a project they lead."""
    feedback = Feedback.objects.select_related(
        "project", "annotation__assignment", "annotation__sentence__turn__dialogue", "lead"
    ).filter(pk=feedback_id).first()
    if feedback is None or not _reaches(user, feedback.project, feedback.annotation.assignment.annotator_id,
                                        feedback.annotation.sentence.turn_id):
        raise Http404("No such feedback")
    return feedback


def access_own_feedback(user, feedback_id: int) -> Feedback:
    """Feedback addressed to the user (acknowledge, amend)."""
    feedback = access_feedback(user, feedback_id)
    if feedback.annotation.assignment.annotator_id != user.pk:
        raise Http404("No such feedback")
    return feedback


def access_annotation_as_lead(user, project, annotation_id: int) -> SentenceAnnotation:
    """A sentence annotation of ``project`` (already fetched as lead), not on a turn the lead is blind on."""
    annotation = SentenceAnnotation.objects.select_related(
        "assignment__annotator", "assignment__project", "sentence__turn__dialogue"
    ).filter(pk=annotation_id, assignment__project=project).first()
    if annotation is None or not is_lead(user, project) or is_blind_on(user, annotation.sentence.turn_id):
        raise Http404("No such annotation")
    return annotation


def access_qualification_result(user, project, result_id: int) -> QualificationResult:
    """The user's own result in a project they still belong to, or any result of a project they lead."""
    result = QualificationResult.objects.select_related("annotator").filter(pk=result_id, project=project).first()
    if result is None or role_in(user, project) is None or not (result.annotator_id == user.pk or is_lead(user, project)):
        raise Http404("No such result")
    return result
