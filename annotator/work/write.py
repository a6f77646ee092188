"""The one write path of an assignment's annotations: every change an annotator makes goes through it.

``annotation_write`` is the frame of every write service (sentence answers,
notes, evidence, submit, claim triplets and their labels, severity, error
types, the sentence saves of the annotation page, and the amend after a
lead's feedback). It:

1. locks the assignment row (``SELECT … FOR UPDATE``; on SQLite the IMMEDIATE
   transaction serialises writers), so the checks below cannot race; in the
   usual case (the request carries the version the caller's copy has) one
   conditional ``UPDATE`` locks the row and proves 2-4 at once;
2. returns the earlier result, writing nothing, when ``request_id`` was seen
   before on this assignment (a replayed or double-submitted request; looked up
   only when the request's version is not the current one, since applying a
   request moves the version past the one it carried);
3. refuses changes to a submitted or released assignment (an amend: to
   anything but a submitted turn of real work);
4. raises ``VersionConflict`` when ``expected_version`` is not the current
   ``Assignment.version`` (two tabs on the same item: the later one is told,
   never silently overwrites);
5. applies the change, bumps the version and writes an ``AnnotationEvent``
   (who, when, old -> new, request_id);
6. runs ``then`` (what must commit with the write, e.g. a submission's gold) in the same transaction.

The number of SQL queries is the same whatever the length of the turn or the
size of the reference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.utils import timezone

from ..domain.assignment import UNFINISHED
from ..models import AnnotationEvent, Assignment, Sentence, SentenceAnnotation
from ..fastsql.joined import JoinedSelect
from ..fastsql.statements import instance_update, row_insert, row_update, rows_insert

# Every decision reads and writes these rows: statements written once (services/statements.py says why).
# Taken from the models, so that a field added to them is written too: every column of an annotation
# but its identity (id, assignment, sentence), every column of an event but its id.
ANNOTATION_FIELDS = tuple(f.name for f in SentenceAnnotation._meta.concrete_fields
                          if f.name not in ("id", "assignment", "sentence"))
EVENT_FIELDS = tuple(f.name for f in AnnotationEvent._meta.concrete_fields if f.name != "id")
# Locked as it is read: a time beacon (annotation_record_time) adds to seconds_spent without the
# assignment's lock, and its addition must not be overwritten by this write's copy of the row.
_ANNOTATION_OF_SENTENCE = JoinedSelect(SentenceAnnotation, "x", joins=[], extra_columns=[],
                                       where="x.assignment_id = %s AND x.sentence_id = %s", for_update=True)

MAX_SECONDS_PER_ACTION = 3600.0


class AnnotationError(Exception):
    """A change that cannot be made; the message is shown to the annotator."""


class AssignmentClosed(AnnotationError):
    pass


class VersionConflict(AnnotationError):
    def __init__(self, current_version: int):
        self.current_version = current_version
        super().__init__(
            "This turn was changed in another tab or window. The panel now shows what is saved; "
            "check it and repeat your last action if it is still needed."
        )


@dataclass
class Outcome:
    """The result of a write: the assignment as saved, the sentence annotation touched, the event."""

    assignment: Assignment
    annotation: SentenceAnnotation | None = None
    event: AnnotationEvent | None = None
    replayed: bool = False
    extra: dict = field(default_factory=dict)


# (old, new) of the write's event, optionally with the events that come before it (written in the same statement).
Mutate = Callable[[Assignment, SentenceAnnotation | None], tuple]


def clamp_seconds(seconds) -> float:
    """Time an annotator reports for one action, as a number of seconds between 0 and an hour."""
    try:
        value = float(seconds or 0)
    except (TypeError, ValueError):
        return 0.0
    if value != value or value < 0:  # NaN or negative
        return 0.0
    return min(value, MAX_SECONDS_PER_ACTION)


def annotation_write(
    assignment: Assignment,
    *,
    actor,
    request_id: str,
    expected_version: int | None,
    action: str,
    sentence: Sentence | None,
    mutate: Mutate,
    seconds: float = 0.0,
    amending: bool = False,
    in_batch: bool = False,
    then: Callable[[Outcome], None] | None = None,
) -> Outcome:
    """Apply one change to ``assignment`` (and ``sentence``'s annotation) under the rules of the module docstring.

    ``mutate(locked_assignment, annotation)`` makes the change once the row is
    locked and the checks passed; ``annotation`` is the sentence's annotation
    (read and locked, or new and unsaved) or None when ``sentence`` is None. It
    returns the event's ``(old, new)`` and raises ``AnnotationError`` to refuse
    (nothing is written then). The annotation is saved after it, with
    ``seconds`` added to its time.

    ``amending``: the change is an amend of a *submitted* turn of real work
    (after a lead's feedback) instead of work on an open one; it moves the
    version only (an amend is neither activity on the turn nor a status change).

    ``in_batch``: the caller's transaction holds several writes that succeed or fail together (a batch of the
    page's changes, ``batch_save``): no savepoint of this write's own, and a request id that raced past the
    replay check raises ``IntegrityError`` for the caller to save the batch again.

    ``then(outcome)``: what must commit with this write or not at all (a submission's gold), run in its
    transaction once it is written, never on a replay. The write's own transaction holds it, so a caller needs
    no transaction around the write, and none of its own savepoints (statements every submission paid).
    """
    request_id = (request_id or "")[:64]
    if sentence is not None and sentence.turn_id != assignment.turn_id:
        raise AnnotationError("That sentence is not part of this turn.")
    try:
        with transaction.atomic(savepoint=not in_batch):
            now = timezone.now()
            updates = None if amending else _lock_if_unchanged(assignment, expected_version, action, now)
            locked = assignment
            if updates is None:
                locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
                locked.project = assignment.project  # already loaded by the caller; no query
                # A request that was applied bumped the version past the one it carried, so only a
                # request whose version is not the current one (or that carries none) can be a replay.
                if request_id and (expected_version is None or int(expected_version) != locked.version):
                    prior = AnnotationEvent.objects.filter(assignment_id=locked.pk, request_id=request_id).first()
                    if prior is not None:
                        return _replayed(locked, sentence, prior)
                _check_status(locked, amending)
                if expected_version is not None and int(expected_version) != locked.version:
                    raise VersionConflict(locked.version)
                updates = {} if amending else _next_version(locked, action, now)
                row_update(Assignment, updates, {"pk": locked.pk}, increment=("version",))
            annotation = None
            if sentence is not None:
                found = _ANNOTATION_OF_SENTENCE.fetch_one([locked.pk, sentence.pk])
                annotation = found[0] if found else SentenceAnnotation(assignment=locked, sentence=sentence)
            old, new, *preceding = mutate(locked, annotation)
            if annotation is not None:
                annotation.seconds_spent += clamp_seconds(seconds)
                if annotation._state.adding:
                    row_insert(annotation, ("assignment", "sentence", *ANNOTATION_FIELDS))
                else:
                    instance_update(annotation, ANNOTATION_FIELDS)
            event = AnnotationEvent(assignment=locked, sentence=sentence, actor=actor, action=action,
                                    old=old, new=new, request_id=request_id)
            # The mutation's own events (the steps of a sentence) and this one in one statement, in that order.
            rows_insert([*preceding[0], event] if preceding else [event], EVENT_FIELDS)
            # Only now: ``mutate`` saw the assignment as it was before this write.
            _apply(locked, updates)
            outcome = Outcome(locked, annotation, event)
            if then is not None:
                then(outcome)
            return outcome
    except IntegrityError:
        # The same request_id raced past the check (only possible without row locks): it was applied once.
        if not request_id or in_batch:
            raise
        prior = AnnotationEvent.objects.filter(assignment_id=assignment.pk, request_id=request_id).first()
        if prior is None:
            raise
        fresh = Assignment.objects.get(pk=assignment.pk)
        fresh.project = assignment.project
        return _replayed(fresh, sentence, prior)


def _check_status(locked: Assignment, amending: bool) -> None:
    """Work changes an open assignment; an amend, a submitted turn of real work."""
    if amending:
        if locked.status != Assignment.Status.SUBMITTED or locked.is_qualification:
            raise AnnotationError("Only a submitted turn of real work is amended; change it on the annotation screen.")
    elif locked.status not in UNFINISHED:
        raise AssignmentClosed(
            "This assignment was submitted and can no longer be changed."
            if locked.status == Assignment.Status.SUBMITTED
            else "This assignment was released by a project lead and can no longer be changed."
        )


def _lock_if_unchanged(assignment: Assignment, expected_version, action: str, now) -> dict | None:
    """The usual case in one statement: lock the row and take the next version, if nothing changed.

    When the caller's copy of the assignment has the version the request
    carries and is still open, a conditional UPDATE (same id, version, status
    and holder) both locks the row and proves that no other write came in
    between (every write bumps the version), so the checks of ``annotation_write``
    hold without reading the row again. Anything else (no version, a stale one,
    a closed assignment, a replay) returns None: ``annotation_write`` then locks
    and checks the row the long way. Returns the changes written.
    """
    if expected_version is None or int(expected_version) != assignment.version or assignment.status not in UNFINISHED:
        return None
    updates = _next_version(assignment, action, now)
    unchanged = {"pk": assignment.pk, "version": assignment.version, "status": assignment.status,
                 "annotator": assignment.annotator_id}
    return updates if row_update(Assignment, updates, unchanged, increment=("version",)) else None


def _next_version(assignment: Assignment, action: str, now) -> dict:
    """The fields a write changes on its assignment besides the version: activity, the status it moves to."""
    updates = {"last_activity_at": now}
    if assignment.status == Assignment.Status.ASSIGNED and action != "submit":
        updates["status"] = Assignment.Status.IN_PROGRESS
        updates["started_at"] = now
    if action == "submit":
        updates["status"] = Assignment.Status.SUBMITTED
        updates["submitted_at"] = now
    return updates


def _apply(assignment: Assignment, updates: dict) -> None:
    """The saved values of ``updates`` and the next version on the object in memory."""
    assignment.version += 1
    for name, value in updates.items():
        setattr(assignment, name, value)


def _replayed(assignment: Assignment, sentence: Sentence | None, prior: AnnotationEvent) -> Outcome:
    annotation = None
    if sentence is not None:
        annotation = SentenceAnnotation.objects.filter(assignment_id=assignment.pk, sentence_id=sentence.pk).first()
    return Outcome(assignment, annotation, prior, replayed=True)
