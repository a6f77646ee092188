"""A batch of the annotation page's changes saved at once: applied completely or not at all, and once.

The page (static/js/annotation_outbox.js) keeps the annotator's answers and sends them, one change per
sentence, several at once when several wait, with the version of the slot they were made on. Each change goes
through ``sentence_save.annotation_save_sentence`` (the one write path: lock, replay by request id, version,
one audit event per step), all in one transaction.

A batch sent again after its answer was lost is recognised by its request ids: the changes applied then are
not applied again. Such a batch continues (the changes after it, made on the page's copy, are valid) only while
the slot's version is still the one its last change reached (its ``save`` event records it); once anything
moved the version since (another tab, a lead's split, merge, reset, reopen or release) it is ``ChangedSince``:
a queued change never rides on a write it has not seen, nor onto units it has not seen.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction

from ..models import AnnotationEvent, Assignment, Sentence
from .sentence_save import StepTaken, annotation_save_sentence
from .write import AnnotationError, Outcome, VersionConflict


@dataclass(frozen=True)
class SentenceChange:
    """What the page sends for one sentence: the steps taken, the path shown, note and evidence (None: unchanged)."""

    request_id: str
    sentence: Sentence
    steps: list[StepTaken]
    path: dict | None = None
    note: str | None = None
    evidence: list[tuple[int, int]] | None = None  # reference offsets
    seconds: float = 0.0


class ChangedSince(VersionConflict):
    """A batch applied before whose slot was written since: the page's queued changes were made on an old copy."""


class ChangeRefused(AnnotationError):
    """A change of the batch cannot be made (nothing of the batch is written); ``sentence`` says which."""

    def __init__(self, message: str, sentence: Sentence):
        super().__init__(message)
        self.sentence = sentence


def annotation_save_batch(assignment: Assignment, changes: list[SentenceChange], *, version: int,
                          actor) -> list[Outcome]:
    """Save ``changes`` made on ``version`` of ``assignment``, in order; one outcome per change.

    Raises ``VersionConflict`` (``ChangedSince`` for a batch sent again after something else was written),
    or ``ChangeRefused``; nothing is written then.
    """
    try:
        return _save(assignment, changes, version, actor)
    except IntegrityError:
        # A request id raced past the replay check (only possible without row locks): the batch was applied by
        # the other request; saved again, every change is found by its request id.
        return _save(assignment, changes, version, actor)


def _save(assignment, changes, version, actor) -> list[Outcome]:
    outcomes, current, reached = [], assignment, None
    # Every applied change moves the version past the one it was made on, and versions only grow: while the slot
    # (as read for this request) is still at the batch's version, no change of it was applied before, so the first
    # is new without looking its request id up (annotation_write's lock proves the version; a batch that raced in
    # between is found there as a replay).
    expected = version if assignment.version == version else None
    with transaction.atomic():
        for change in changes:
            if expected is None and not _seen(current, change.request_id):
                # The changes before this one were applied earlier (a batch sent again). This one is new, made on
                # the page's copy: only valid if nothing was written since the last of them.
                if current.version != reached:
                    raise VersionConflict(current.version)
                expected = current.version
            try:
                outcome = annotation_save_sentence(
                    current, change.sentence, steps=change.steps, path=change.path, note=change.note,
                    evidence=change.evidence, seconds=change.seconds, actor=actor, request_id=change.request_id,
                    expected_version=expected, in_batch=True)
            except VersionConflict:
                raise
            except AnnotationError as error:
                raise ChangeRefused(str(error), change.sentence) from None
            outcome.assignment.project, outcome.assignment.turn = assignment.project, assignment.turn
            current = outcome.assignment
            # After a replay, the next change is looked up by its request id (no version to compare).
            expected = None if outcome.replayed else current.version
            reached = version_reached(outcome)
            outcomes.append(outcome)
        if current.version != reached:
            # Every change was applied before, and the slot's version moved on since.
            raise ChangedSince(current.version)
    return outcomes


def version_reached(outcome: Outcome) -> int | None:
    """The version the change of ``outcome`` led to: now, or when it was first applied (its ``save`` event says)."""
    if not outcome.replayed:
        return outcome.assignment.version
    new = outcome.event.new if outcome.event is not None else None
    # A save recorded before versions were kept in its event cannot prove its chain: treated as changed since.
    return new.get("version") if isinstance(new, dict) else None


def _seen(assignment: Assignment, request_id: str) -> bool:
    return AnnotationEvent.objects.filter(assignment_id=assignment.pk, request_id=request_id).exists()
