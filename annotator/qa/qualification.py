"""The qualification set: a lead picks turns with known gold; a new annotator
annotates them before any real work, is scored by sentence accuracy against
gold, and may be allowed a retry.

Write side only; no request objects. Callers check access first (views through
``annotator.access``); the lead-only actions check the role again here so that
the API and management commands cannot skip it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction

from ..domain import qualification as qualification_rules
from ..projects.protocols import protocol_for
from ..access import is_lead, known_qualification_set, qualification_turn_condition, remember_qualification_set, role_in
from ..fastsql.joined import JoinedSelect
from ..models import AnnotationEvent, Assignment, Project, QualificationResult, Sentence, SentenceAnnotation, Turn
from .selectors import turns_with_qualification_counts
from ..domain.vocabulary import Role


class QualificationError(ValueError):
    """A qualification action the rules do not allow; the message says why."""


class Status(enum.Enum):
    NOT_REQUIRED = "not_required"  # no qualification set, or not an annotator
    IN_PROGRESS = "in_progress"  # turns of the current attempt still to annotate (or to score)
    FAILED = "failed"  # last attempt below the pass mark; waiting for a lead to allow a retry
    PASSED = "passed"


@dataclass
class QualificationState:
    status: Status
    turns_left: list[Turn] = field(default_factory=list)
    turn_count: int = 0
    latest: QualificationResult | None = None
    auto_retries: int = 0  # the project's automatic retries

    @property
    def may_work(self) -> bool:
        """Whether real (non-qualification) work may be assigned."""
        return self.status in (Status.NOT_REQUIRED, Status.PASSED)

    @property
    def failed_attempts(self) -> int:
        # Attempts follow one another only after a failure: every attempt before the latest failed.
        if self.latest is None:
            return 0
        return self.latest.attempt - (1 if self.latest.passed else 0)

    @property
    def attempt(self) -> int:
        """The number of the attempt open now (or the last one, once passed or failed)."""
        if self.status == Status.IN_PROGRESS:
            return self.failed_attempts + 1
        return self.latest.attempt if self.latest else 0

    @property
    def is_retry(self) -> bool:
        """An attempt after a failed one is open."""
        return self.status == Status.IN_PROGRESS and self.latest is not None

    @property
    def automatic_retries_left(self) -> int:
        """How many failed attempts after the open one would still open another by themselves."""
        return qualification_rules.automatic_retries_left(self.failed_attempts, self.auto_retries)


def qualification_turns(project: Project):
    return Turn.objects.filter(dialogue__project=project, is_qualification=True).order_by("dialogue_id", "index", "id")


# ``qualification_turns``' list, read by every Start of an annotator: a statement written once (fastsql/joined.py
# says why), through the partial index of the qualification turns. No ORDER BY (see qualification_turn_condition):
# the few rows are put in ``qualification_turns``' order here.
_QUALIFICATION_TURNS = JoinedSelect(Turn, "t", joins=[], extra_columns=[], where=qualification_turn_condition("%s"))


def qualification_turn_list(project: Project) -> list[Turn]:
    """``list(qualification_turns(project))``; no statement when the project was read with the answer (none)."""
    if known_qualification_set(project) is False:
        return []
    turns = [turn for turn, _ in _QUALIFICATION_TURNS.fetch_all([project.pk])]
    return sorted(turns, key=lambda turn: (turn.dialogue_id, turn.index, turn.pk))


def latest_result(project: Project, user) -> QualificationResult | None:
    return QualificationResult.objects.filter(project=project, annotator=user).order_by("-attempt").first()


def qualification_state(project: Project, user) -> QualificationState:
    """Where ``user`` stands with the project's qualification set."""
    if role_in(user, project) != Role.ANNOTATOR:
        return QualificationState(Status.NOT_REQUIRED)
    turns = qualification_turn_list(project)
    if not turns:
        return QualificationState(Status.NOT_REQUIRED)
    latest = latest_result(project, user)
    retries = project.qualification_auto_retries
    if latest is not None and latest.passed:
        return QualificationState(Status.PASSED, turn_count=len(turns), latest=latest, auto_retries=retries)
    if latest is not None and not latest.retry_allowed:
        return QualificationState(Status.FAILED, turn_count=len(turns), latest=latest, auto_retries=retries)
    submitted = set(
        Assignment.objects.filter(
            annotator=user, turn__in=turns, is_qualification=True, status=Assignment.Status.SUBMITTED
        ).values_list("turn_id", flat=True)
    )
    left = [turn for turn in turns if turn.pk not in submitted]
    return QualificationState(Status.IN_PROGRESS, turns_left=left, turn_count=len(turns), latest=latest,
                              auto_retries=retries)


def qualification_turns_for(project: Project, user) -> list[Turn]:
    """The qualification turns ``user`` must still annotate before real work; empty once passed."""
    state = qualification_state(project, user)
    return state.turns_left if state.status == Status.IN_PROGRESS else []


def qualification_may_work(project: Project, user) -> bool:
    return qualification_state(project, user).may_work


@transaction.atomic
def qualification_set(*, project: Project, actor, turn_ids, pass_mark: float) -> list[Turn]:
    """Make exactly ``turn_ids`` the project's qualification set, with ``pass_mark`` (0-1]."""
    if not is_lead(actor, project):
        raise PermissionDenied("Only a project lead sets the qualification set.")
    try:
        pass_mark = float(pass_mark)
    except (TypeError, ValueError):
        raise QualificationError("The pass mark must be a number (a share of the sentences, above 0% and at most 100%).") from None
    if not 0 < pass_mark <= 1:
        raise QualificationError("The pass mark must be above 0% and at most 100%.")
    turn_ids = {int(pk) for pk in turn_ids}
    turns = list(turns_with_qualification_counts(project).filter(pk__in=turn_ids))
    unknown = turn_ids - {turn.pk for turn in turns}
    if unknown:
        raise QualificationError(f"Turn(s) {sorted(unknown)} are not part of this project.")
    for turn in turns:
        name = f"{turn.dialogue.external_id} turn {turn.index}"
        if turn.sentence_count == 0:
            raise QualificationError(f"{name} has no sentences to score.")
        if turn.gold_count < turn.sentence_count:
            missing = turn.sentence_count - turn.gold_count
            raise QualificationError(f"{name} lacks a gold label for {missing} of its {turn.sentence_count} sentences.")
        if turn.real_slots and not turn.is_qualification:
            raise QualificationError(f"{name} is already assigned as real work; pick a turn nobody annotates yet.")
    Turn.objects.filter(dialogue__project=project, is_qualification=True).exclude(pk__in=turn_ids).update(
        is_qualification=False
    )
    Turn.objects.filter(pk__in=turn_ids).update(is_qualification=True)
    remember_qualification_set(project, bool(turn_ids))
    project.qualification_pass_mark = pass_mark
    project.save(update_fields=["qualification_pass_mark"])
    return list(qualification_turns(project))


def qualification_assignment_next(project: Project, user) -> Assignment | None:
    """The qualification assignment ``user`` should work on now, created if needed; None if none is due."""
    return _assignment_for(project, user, qualification_state(project, user))


def qualification_gate(project: Project, user) -> tuple[bool, Assignment | None]:
    """``(blocked, assignment)`` for the work queue.

    ``blocked``: real work is withheld (qualification not passed); ``assignment``:
    the qualification turn due now (None after a failed attempt, until a lead
    allows a retry). An attempt whose last turn was submitted but not scored (an
    interrupted request) is scored here.
    """
    state = qualification_state(project, user)
    if state.status == Status.IN_PROGRESS and not state.turns_left:
        qualification_score_attempt(project, user)
        state = qualification_state(project, user)
    if state.may_work:
        return False, None
    return True, _assignment_for(project, user, state)


def _assignment_for(project: Project, user, state: QualificationState) -> Assignment | None:
    if state.status != Status.IN_PROGRESS or not state.turns_left:
        return None
    turn = state.turns_left[0]
    with transaction.atomic():
        assignment, created = Assignment.objects.get_or_create(
            turn=turn, annotator=user, defaults={"project": project, "is_qualification": True}
        )
        if created:
            AnnotationEvent.objects.create(
                assignment=assignment, actor=user, action="assign", new={"qualification": True}
            )
        elif assignment.status == Assignment.Status.RELEASED:
            # A lead released it; the qualification set still has to be done.
            AnnotationEvent.objects.create(
                assignment=assignment, actor=user, action="qualification_resume",
                old={"status": assignment.status}, new={"status": Assignment.Status.ASSIGNED},
            )
            assignment.status = Assignment.Status.ASSIGNED
            assignment.version += 1
            assignment.save(update_fields=["status", "version"])
    return assignment


def qualification_score_attempt(project: Project, user) -> QualificationResult | None:
    """Score the user's finished attempt; idempotent. None while turns are left to annotate.

    Called after every submitted qualification turn (and again by the queue, which
    heals an attempt whose scoring was interrupted).
    """
    state = qualification_state(project, user)
    if state.status in (Status.PASSED, Status.FAILED):
        return state.latest
    if state.status != Status.IN_PROGRESS or state.turns_left:
        return None
    attempt = state.latest.attempt + 1 if state.latest else 1
    sentences = list(
        Sentence.objects.filter(turn__dialogue__project=project, turn__is_qualification=True, gold__isnull=False)
        .select_related("gold", "turn__dialogue")
        .order_by("turn__dialogue_id", "turn__index", "index")
    )
    answers = {
        a.sentence_id: qualification_rules.Answered(a.label, a.path)
        for a in SentenceAnnotation.objects.filter(
            assignment__annotator=user, assignment__is_qualification=True, sentence__in=sentences
        )
    }
    gold_sentences = [
        qualification_rules.GoldSentence(
            id=s.pk, turn_id=s.turn_id, turn_name=f"{s.turn.dialogue.external_id} turn {s.turn.index}", index=s.index,
            text=s.text, gold_label=s.gold.label, gold_path=s.gold.path or {}, gold_reason=s.gold.reason,
        )
        for s in sentences
    ]
    score = qualification_rules.score_attempt(protocol_for(project), gold_sentences, answers, project.qualification_pass_mark)
    try:
        with transaction.atomic():
            result = QualificationResult.objects.create(
                project=project, annotator=user, attempt=attempt, correct=score.correct, total=score.total,
                passed=score.passed, details=score.details,
            )
            # Every attempt before this one failed; the project may open the next by itself.
            auto_retries = project.qualification_auto_retries
            if not result.passed and qualification_rules.retry_opens_by_itself(attempt, auto_retries):
                _reopen_for_retry(result, actor=None)
            return result
    except IntegrityError:
        # A concurrent submit scored the same attempt first.
        return QualificationResult.objects.get(project=project, annotator=user, attempt=attempt)


@transaction.atomic
def qualification_allow_retry(*, result: QualificationResult, actor) -> QualificationResult:
    """Let the annotator take the set again: their qualification work is reset (kept in the audit history)."""
    project = result.project
    if not is_lead(actor, project):
        raise PermissionDenied("Only a project lead allows a retry.")
    result = QualificationResult.objects.select_for_update().get(pk=result.pk)
    if result.passed:
        raise QualificationError("This attempt passed; there is nothing to retry.")
    if latest_result(project, result.annotator).pk != result.pk:
        raise QualificationError("Only the latest attempt can be retried.")
    if result.retry_allowed:
        return result
    return _reopen_for_retry(result, actor=actor)


def _reopen_for_retry(result: QualificationResult, *, actor) -> QualificationResult:
    """Reset the annotator's qualification work (kept in the audit history) so the next attempt opens.

    ``actor`` None: the project's automatic retries opened it, and ``retry_allowed_by`` stays empty.
    """
    assignments = Assignment.objects.select_for_update().filter(
        project=result.project, annotator=result.annotator, is_qualification=True
    )
    for assignment in assignments:
        old = [
            {"sentence": a.sentence_id, "path": a.path, "label": a.label, "note": a.note}
            for a in assignment.sentence_annotations.all()
        ]
        AnnotationEvent.objects.create(
            assignment=assignment, actor=actor, action="qualification_retry",
            old={"status": assignment.status, "annotations": old, "attempt": result.attempt},
            new={"status": Assignment.Status.ASSIGNED, "automatic": actor is None},
        )
        assignment.sentence_annotations.all().delete()
        assignment.status = Assignment.Status.ASSIGNED
        assignment.started_at = None
        assignment.submitted_at = None
        assignment.version += 1
        assignment.save(update_fields=["status", "started_at", "submitted_at", "version"])
    result.retry_allowed = True
    result.retry_allowed_by = actor
    result.save(update_fields=["retry_allowed", "retry_allowed_by"])
    return result
