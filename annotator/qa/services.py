"""Real-time questions and post-hoc feedback: the write side.

No request objects: views, API views and commands fetch objects through the
access getters, then call these functions. Rules about *who* may act (only a
lead answers, only the asker follows up, only the annotator acknowledges) are
checked here as well, so that no entry point can skip them.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from ..access import is_lead, role_in
from ..models import Assignment, Feedback, GuidelineExample, Project, Question, QuestionMessage, Sentence, SentenceAnnotation, Turn
from ..domain.protocol.document import ProtocolError
from ..projects.protocols import protocol_for
from ..work.services import annotation_amend
from ..work.write import AnnotationError

MAX_BODY = 5000


class QAError(ValueError):
    """A question or feedback action the rules do not allow; the message says why."""


def _clean_body(body: str, what: str = "The message") -> str:
    body = (body or "").strip()
    if not body:
        raise QAError(f"{what} is empty.")
    if len(body) > MAX_BODY:
        raise QAError(f"{what} is longer than {MAX_BODY} characters.")
    return body


def question_step_for(protocol, path) -> str | None:
    """The protocol step a question asked with ``path`` concerns: the one being asked, or the last one answered."""
    step = protocol.next_step(path)
    if step is None:
        answered = protocol.steps_of(path)
        step = answered[-1] if answered else None
    return step


@transaction.atomic
def question_ask(*, project: Project, user, turn: Turn, body: str, sentence: Sentence | None = None,
                 path: dict | None = None) -> Question:
    """An annotator asks about a sentence (or the whole turn) with their current decision path."""
    if role_in(user, project) is None:
        raise PermissionDenied("Only members of the project ask questions.")
    if turn.dialogue.project_id != project.pk:
        raise QAError("That turn is not part of this project.")
    if sentence is not None and sentence.turn_id != turn.pk:
        raise QAError("That sentence is not part of this turn.")
    body = _clean_body(body, "The question")
    protocol = protocol_for(project)
    # Stored paths come back from PostgreSQL's jsonb in any key order: put them in protocol order
    # (unknown keys last, where validate() rejects them).
    path = protocol.ordered(dict(path or {}))
    try:
        protocol.validate(path)
    except ProtocolError as error:
        raise QAError(f"The decision path is not valid: {error}") from None
    step = question_step_for(protocol, path) if sentence is not None else None
    question = Question.objects.create(
        project=project, turn=turn, sentence=sentence, asked_by=user,
        path={str(k): v for k, v in path.items()}, step=step or "",
    )
    QuestionMessage.objects.create(question=question, author=user, body=body)
    return question


@transaction.atomic
def question_answer(*, question: Question, lead, body: str) -> QuestionMessage:
    """A lead answers in the thread; the asker gets an unread badge."""
    if not is_lead(lead, question.project):
        raise PermissionDenied("Only a project lead answers questions.")
    message = QuestionMessage.objects.create(question=question, author=lead, body=_clean_body(body, "The answer"))
    question.status = Question.Status.ANSWERED
    question.unread_by_asker = question.asked_by_id != lead.pk
    question.save(update_fields=["status", "unread_by_asker", "updated_at"])
    return message


@transaction.atomic
def question_follow_up(*, question: Question, user, body: str) -> QuestionMessage:
    """The asker adds to their own question; it goes back to the leads' inbox."""
    if question.asked_by_id != user.pk:
        raise PermissionDenied("Only the person who asked adds to a question.")
    message = QuestionMessage.objects.create(question=question, author=user, body=_clean_body(body))
    question.status = Question.Status.OPEN
    question.save(update_fields=["status", "updated_at"])
    return message


def question_close(*, question: Question, actor) -> Question:
    if not is_lead(actor, question.project):
        raise PermissionDenied("Only a project lead closes questions.")
    if question.status != Question.Status.CLOSED:
        question.status = Question.Status.CLOSED
        question.save(update_fields=["status", "updated_at"])
    return question


def question_mark_read(*, question: Question, user) -> None:
    """The asker has seen the answer."""
    if question.asked_by_id == user.pk and question.unread_by_asker:
        Question.objects.filter(pk=question.pk).update(unread_by_asker=False)
        question.unread_by_asker = False


def _default_explanation(question: Question) -> str:
    messages = list(question.messages.select_related("author"))
    asked = next((m.body for m in messages if m.author_id == question.asked_by_id), "")
    answers = [m.body for m in messages if m.author_id != question.asked_by_id]
    if not answers:
        raise QAError("Answer the question before promoting it to a guideline example.")
    return f"Q: {asked}\nA: {answers[-1]}"


@transaction.atomic
def question_promote_to_guideline(*, question: Question, actor, expected_answer: str, step: str | None = None,
                                  text: str | None = None, explanation: str | None = None) -> GuidelineExample:
    """Attach the question and its answer to the project's guideline examples at the step it concerns.

    ``expected_answer`` is the right answer at that step for the example sentence;
    the example is positive when it is the step's first option (yes / relevant /
    factual / faithful). Promoting the same question again updates its example.
    """
    project = question.project
    if not is_lead(actor, project):
        raise PermissionDenied("Only a project lead edits the guideline examples.")
    protocol = protocol_for(project)
    step = step or question.step
    if step not in protocol.steps:
        raise QAError("Choose the protocol step this example belongs to.")
    if protocol.step_kind(step) != "choice":  # an example shows one answer of a choice step (first: positive)
        raise QAError(f"At step '{protocol.step_question(step)}' ({protocol.step_kind(step)}) there is no single "
                      "expected answer: guideline examples are kept for choice steps.")
    answers = protocol.answers(step)
    if expected_answer not in answers:
        allowed = " or ".join(answers)
        raise QAError(f"At step '{protocol.step_question(step)}' the expected answer is {allowed}, "
                      f"not {expected_answer!r}.")
    default_text = question.sentence.text if question.sentence_id else question.messages.first().body
    text = _clean_body(text if text is not None and text.strip() else default_text, "The example text")
    explanation = (explanation or "").strip() or _default_explanation(question)
    values = {
        "step": step,
        "text": text,
        "is_positive": expected_answer == answers[0],
        "explanation": explanation,
    }
    example = GuidelineExample.objects.filter(project=project, source_question=question).first()
    if example is None:
        last = GuidelineExample.objects.filter(project=project, step=step).aggregate(m=Max("position"))["m"]
        example = GuidelineExample.objects.create(
            project=project, source_question=question, position=(last or 0) + 1, **values
        )
    else:
        for key, value in values.items():
            setattr(example, key, value)
        example.save()
    return example


@transaction.atomic
def feedback_give(*, annotation: SentenceAnnotation, lead, comment: str, expected_label: str = "") -> Feedback:
    """A lead's post-hoc feedback on one submitted sentence annotation."""
    assignment = annotation.assignment
    project = assignment.project
    if not is_lead(lead, project):
        raise PermissionDenied("Only a project lead gives feedback.")
    if assignment.status != Assignment.Status.SUBMITTED:
        raise QAError("Feedback is given on submitted work only; this turn is still being annotated.")
    if expected_label and expected_label not in protocol_for(project).labels:
        raise QAError(f"{expected_label!r} is not a label of this project's protocol.")
    return Feedback.objects.create(
        project=project, annotation=annotation, lead=lead, expected_label=expected_label or "",
        comment=_clean_body(comment, "The comment"),
    )


def feedback_acknowledge(*, feedback: Feedback, user) -> Feedback:
    """The annotator confirms they read the feedback. Acknowledging twice keeps the first time."""
    if feedback.annotation.assignment.annotator_id != user.pk:
        raise PermissionDenied("Only the annotator the feedback is for acknowledges it.")
    if feedback.acknowledged_at is None:
        feedback.acknowledged_at = timezone.now()
        feedback.save(update_fields=["acknowledged_at"])
    return feedback


def feedback_amend(*, feedback: Feedback, user, label: str, request_id: str = "", path: dict | None = None):
    """The annotator changes the label the feedback is about (audited by the annotation service).

    Amending counts as reading the feedback, so it is acknowledged too.
    """
    annotation = feedback.annotation
    if annotation.assignment.annotator_id != user.pk:
        raise PermissionDenied("Only the annotator amends their own annotation.")
    try:
        outcome = annotation_amend(
            annotation.assignment, annotation.sentence, label, actor=user, request_id=request_id,
            reason=f"feedback #{feedback.pk}", path=path,
        )
    except AnnotationError as error:
        raise QAError(str(error)) from None
    feedback_acknowledge(feedback=feedback, user=user)
    return outcome
