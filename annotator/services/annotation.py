"""Every change an annotator makes to an assignment, saved at once and audited.

Each write service:

1. locks the assignment row (``SELECT … FOR UPDATE``; on SQLite the IMMEDIATE
   transaction serialises writers), so the checks below cannot race; in the
   usual case (the request carries the version the caller's copy has) one
   conditional ``UPDATE`` locks the row and proves 2-4 at once;
2. returns the earlier result, writing nothing, when ``request_id`` was seen
   before on this assignment (a replayed or double-submitted request; looked up
   only when the request's version is not the current one, since applying a
   request moves the version past the one it carried);
3. refuses changes to a submitted or released assignment;
4. raises ``VersionConflict`` when ``expected_version`` is not the current
   ``Assignment.version`` (two tabs on the same item: the later one is told,
   never silently overwrites);
5. applies the change, bumps the version and writes an ``AnnotationEvent``
   (who, when, old -> new, request_id).

The number of SQL queries is the same whatever the length of the turn or the
size of the reference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from ..domain import protocol
from ..domain.assignment import UNFINISHED
from ..models import AnnotationEvent, Assignment, EvidenceSpan, Sentence, SentenceAnnotation
from ..selectors.joined import JoinedSelect
from ..domain.vocabulary import Answer, Label, ProtocolMode, Step
from .gold import gold_derive_for_turn, gold_rederive_sentence
from .qualification import qualification_score_attempt
from .statements import instance_update, row_insert, row_update

# Every decision reads and writes these rows: statements written once (services/statements.py says why).
ANNOTATION_FIELDS = ("path", "label", "note", "seconds_spent", "severity", "justification", "error_type", "updated_at")
EVENT_FIELDS = ("assignment", "sentence", "actor", "action", "old", "new", "request_id", "created_at")
# Locked as it is read: a time beacon (annotation_record_time) adds to seconds_spent without the
# assignment's lock, and its addition must not be overwritten by this write's copy of the row.
_ANNOTATION_OF_SENTENCE = JoinedSelect(SentenceAnnotation, "x", joins=[], extra_columns=[],
                                       where="x.assignment_id = %s AND x.sentence_id = %s", for_update=True)

MAX_NOTE_LENGTH = 5000
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


class SubmitRefused(AnnotationError):
    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("The turn cannot be submitted yet: " + " ".join(problems))


@dataclass
class Outcome:
    """The result of a write: the assignment as saved, the sentence annotation touched, the event."""

    assignment: Assignment
    annotation: SentenceAnnotation | None = None
    event: AnnotationEvent | None = None
    replayed: bool = False
    extra: dict = field(default_factory=dict)


def evidence_required(path: dict) -> bool:
    """Whether an answer on this path needs evidence when the project requires it."""
    return path.get(Step.FAITHFULNESS) == Answer.FAITHFUL or path.get(Step.GROUNDED) == Answer.YES



def _snapshot(annotation: SentenceAnnotation) -> dict:
    return {"path": protocol.ordered(annotation.path), "label": annotation.label}


def _clamp_seconds(seconds) -> float:
    try:
        value = float(seconds or 0)
    except (TypeError, ValueError):
        return 0.0
    if value != value or value < 0:  # NaN or negative
        return 0.0
    return min(value, MAX_SECONDS_PER_ACTION)


def _write(
    assignment: Assignment,
    *,
    actor,
    request_id: str,
    expected_version: int | None,
    action: str,
    sentence: Sentence | None,
    mutate: Callable[[Assignment, SentenceAnnotation | None], tuple[dict | None, dict | None]],
    seconds: float = 0.0,
) -> Outcome:
    """The common frame of every write (see the module docstring)."""
    request_id = (request_id or "")[:64]
    if sentence is not None and sentence.turn_id != assignment.turn_id:
        raise AnnotationError("That sentence is not part of this turn.")
    try:
        with transaction.atomic():
            now = timezone.now()
            locked, updates = assignment, _lock_if_unchanged(assignment, expected_version, action, now)
            if updates is None:
                locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
                locked.project = assignment.project  # already loaded by the caller; no query
                # A request that was applied bumped the version past the one it carried, so only a
                # request whose version is not the current one (or that carries none) can be a replay.
                if request_id and (expected_version is None or int(expected_version) != locked.version):
                    prior = AnnotationEvent.objects.filter(assignment_id=locked.pk, request_id=request_id).first()
                    if prior is not None:
                        return _replayed(locked, sentence, prior)
                if locked.status not in UNFINISHED:
                    raise AssignmentClosed(
                        "This assignment was submitted and can no longer be changed."
                        if locked.status == Assignment.Status.SUBMITTED
                        else "This assignment was released by a project lead and can no longer be changed."
                    )
                if expected_version is not None and int(expected_version) != locked.version:
                    raise VersionConflict(locked.version)
                updates = _next_version(locked, action, now)
                row_update(Assignment, updates, {"pk": locked.pk}, increment=("version",))
            annotation = None
            if sentence is not None:
                found = _ANNOTATION_OF_SENTENCE.fetch_one([locked.pk, sentence.pk])
                annotation = found[0] if found else SentenceAnnotation(assignment=locked, sentence=sentence)
            old, new = mutate(locked, annotation)
            if annotation is not None:
                annotation.seconds_spent += _clamp_seconds(seconds)
                if annotation._state.adding:
                    row_insert(annotation, ("assignment", "sentence", *ANNOTATION_FIELDS))
                else:
                    instance_update(annotation, ANNOTATION_FIELDS)
            event = AnnotationEvent(assignment=locked, sentence=sentence, actor=actor, action=action,
                                    old=old, new=new, request_id=request_id)
            row_insert(event, EVENT_FIELDS)
            # Only now: ``mutate`` saw the assignment as it was before this write.
            _apply(locked, updates)
            return Outcome(locked, annotation, event)
    except IntegrityError:
        # The same request_id raced past the check (only possible without row locks): it was applied once.
        if not request_id:
            raise
        prior = AnnotationEvent.objects.filter(assignment_id=assignment.pk, request_id=request_id).first()
        if prior is None:
            raise
        fresh = Assignment.objects.get(pk=assignment.pk)
        fresh.project = assignment.project
        return _replayed(fresh, sentence, prior)


def _lock_if_unchanged(assignment: Assignment, expected_version, action: str, now) -> dict | None:
    """The usual case in one statement: lock the row and take the next version, if nothing changed.

    When the caller's copy of the assignment has the version the request
    carries and is still open, a conditional UPDATE (same id, version, status
    and holder) both locks the row and proves that no other write came in
    between (every write bumps the version), so the checks of ``_write`` hold
    without reading the row again. Anything else (no version, a stale one, a
    closed assignment, a replay) returns None: ``_write`` then locks and
    checks the row the long way. Returns the changes written.
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


def _clear_stale_extras(annotation: SentenceAnnotation) -> list[str]:
    """A final label that takes no severity / error type clears them (annotator.claims.stale_extras)."""
    from ..domain.claims import stale_extras

    cleared = stale_extras(annotation.label, annotation.severity, annotation.justification, annotation.error_type)
    for name, value in cleared.items():
        setattr(annotation, name, value)
    return list(cleared)


def _require_mode(assignment: Assignment, mode: str):
    if assignment.project.protocol_mode != mode:
        if mode == ProtocolMode.SEQUENTIAL:
            raise AnnotationError("This project uses independent mode: pick one of the seven labels.")
        raise AnnotationError("This project uses the sequential protocol: answer the questions one at a time.")


def annotation_answer_step(
    assignment: Assignment, sentence: Sentence, step: str, value: str, *,
    actor, request_id: str = "", expected_version: int | None = None, seconds: float = 0.0,
) -> Outcome:
    """Answer one protocol question for a sentence; changing an earlier answer clears the later ones."""
    _require_mode(assignment, ProtocolMode.SEQUENTIAL)

    def mutate(_, annotation):
        old = _snapshot(annotation)
        try:
            path = protocol.answer(protocol.ordered(annotation.path), step, value)
        except protocol.ProtocolError as error:
            raise AnnotationError(str(error)) from None
        annotation.path = {k: str(v) for k, v in protocol.ordered(path).items()}
        label = protocol.label_of(annotation.path)
        annotation.label = label.value if label else ""
        _clear_stale_extras(annotation)
        return old, {**_snapshot(annotation), "step": str(step), "answer": str(value)}

    return _write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
                  action="answer", sentence=sentence, mutate=mutate, seconds=seconds)


def annotation_pick_label(
    assignment: Assignment, sentence: Sentence, label: str, *,
    actor, request_id: str = "", expected_version: int | None = None, seconds: float = 0.0,
) -> Outcome:
    """Independent mode: pick one of the seven labels at once (stored as the path that yields it)."""
    _require_mode(assignment, ProtocolMode.INDEPENDENT)
    try:
        label = Label(label)
    except ValueError:
        raise AnnotationError(f"Unknown label {label!r}.") from None

    def mutate(_, annotation):
        old = _snapshot(annotation)
        annotation.path = protocol.path_for_label(label)
        annotation.label = label.value
        _clear_stale_extras(annotation)
        return old, _snapshot(annotation)

    return _write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
                  action="pick", sentence=sentence, mutate=mutate, seconds=seconds)


def annotation_undo(
    assignment: Assignment, sentence: Sentence, *,
    actor, request_id: str = "", expected_version: int | None = None, seconds: float = 0.0,
) -> Outcome:
    """Take back the last answer of a sentence (independent mode: clear its label)."""

    def mutate(_, annotation):
        if not annotation.path:
            raise AnnotationError("Nothing to undo on this sentence.")
        old = _snapshot(annotation)
        if assignment.project.protocol_mode == ProtocolMode.INDEPENDENT:
            annotation.path = {}
        else:
            annotation.path = protocol.ordered(protocol.undo(protocol.ordered(annotation.path)))
        label = protocol.label_of(annotation.path) if annotation.path else None
        annotation.label = label.value if label else ""
        _clear_stale_extras(annotation)
        return old, _snapshot(annotation)

    return _write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
                  action="undo", sentence=sentence, mutate=mutate, seconds=seconds)


def annotation_set_note(
    assignment: Assignment, sentence: Sentence, note: str, *,
    actor, request_id: str = "", expected_version: int | None = None, seconds: float = 0.0,
) -> Outcome:
    note = (note or "").strip()
    if len(note) > MAX_NOTE_LENGTH:
        raise AnnotationError(f"A note may have at most {MAX_NOTE_LENGTH} characters.")

    def mutate(_, annotation):
        old = {"note": annotation.note}
        annotation.note = note
        return old, {"note": note}

    return _write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
                  action="note", sentence=sentence, mutate=mutate, seconds=seconds)


def annotation_evidence_add(
    assignment: Assignment, sentence: Sentence, start: int, end: int, *,
    actor, request_id: str = "", expected_version: int | None = None, seconds: float = 0.0,
) -> Outcome:
    """Attach ``reference[start:end]`` (character offsets into Dialogue.reference) as evidence."""
    reference = assignment.turn.dialogue.reference
    start, end = evidence_bounds(reference, start, end)
    created = {}

    def mutate(_, annotation):
        if annotation.pk is None:
            annotation.save()
        elif EvidenceSpan.objects.filter(annotation=annotation, start=start, end=end).exists():
            raise AnnotationError("That span is already attached to this sentence.")
        span = EvidenceSpan.objects.create(annotation=annotation, start=start, end=end, text=reference[start:end])
        created["span"] = span
        return None, {"evidence": span.pk, "start": start, "end": end, "text": span.text}

    outcome = _write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
                     action="evidence_add", sentence=sentence, mutate=mutate, seconds=seconds)
    outcome.extra["span"] = created.get("span")
    return outcome


def evidence_bounds(reference: str, start, end) -> tuple[int, int]:
    """``(start, end)`` as offsets of a non-empty span of ``reference``, surrounding white space trimmed."""
    try:
        start, end = int(start), int(end)
    except (TypeError, ValueError):
        raise AnnotationError("Evidence needs a start and an end offset.") from None
    # Offsets outside the reference are refused before they index it (a negative one would count from its end).
    if not 0 <= start < end <= len(reference):
        raise AnnotationError("Select some text in the reference first, then press e to attach it.")
    # Trim surrounding white space so that spans compare equal whatever the selection caught.
    while start < end and end <= len(reference) and reference[start].isspace():
        start += 1
    while end > start and end <= len(reference) and reference[end - 1].isspace():
        end -= 1
    if not 0 <= start < end <= len(reference):
        raise AnnotationError("Select some text in the reference first, then press e to attach it.")
    return start, end


def annotation_evidence_remove(
    assignment: Assignment, sentence: Sentence, evidence_id: int, *,
    actor, request_id: str = "", expected_version: int | None = None, seconds: float = 0.0,
) -> Outcome:
    def mutate(_, annotation):
        span = None
        if annotation.pk is not None:
            span = EvidenceSpan.objects.filter(pk=evidence_id, annotation=annotation).first()
        if span is None:
            raise AnnotationError("That evidence span is not attached to this sentence.")
        old = {"evidence": span.pk, "start": span.start, "end": span.end, "text": span.text}
        span.delete()
        return old, None

    return _write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
                  action="evidence_remove", sentence=sentence, mutate=mutate, seconds=seconds)


def annotation_record_time(assignment: Assignment, sentence: Sentence, seconds: float) -> None:
    """Add time spent looking at a sentence (sent when the annotator moves on); not a change, so no event."""
    seconds = _clamp_seconds(seconds)
    if seconds <= 0 or sentence.turn_id != assignment.turn_id or assignment.status not in UNFINISHED:
        return
    with transaction.atomic():
        updated = SentenceAnnotation.objects.filter(assignment_id=assignment.pk, sentence_id=sentence.pk).update(
            seconds_spent=F("seconds_spent") + seconds
        )
        if not updated:
            try:
                with transaction.atomic():
                    SentenceAnnotation.objects.create(assignment=assignment, sentence=sentence, seconds_spent=seconds)
            except IntegrityError:
                SentenceAnnotation.objects.filter(assignment_id=assignment.pk, sentence_id=sentence.pk).update(
                    seconds_spent=F("seconds_spent") + seconds
                )


def submit_problems(assignment: Assignment) -> list[str]:
    """Why the assignment cannot be submitted yet (empty when it can)."""
    sentences = list(Sentence.objects.filter(turn_id=assignment.turn_id).order_by("index").values_list("id", "index"))
    annotations = {
        a.sentence_id: a
        for a in SentenceAnnotation.objects.filter(assignment_id=assignment.pk).only("id", "sentence_id", "path", "label")
    }
    problems = []
    missing = [index + 1 for sid, index in sentences if not getattr(annotations.get(sid), "label", "")]
    if missing:
        numbers = ", ".join(str(n) for n in missing[:12]) + ("…" if len(missing) > 12 else "")
        problems.append(f"{len(missing)} of {len(sentences)} sentences have no label yet (sentence {numbers}).")
    if assignment.project.require_evidence:
        needing = {a.pk: a for a in annotations.values() if a.label and evidence_required(a.path or {})}
        with_evidence = set(
            EvidenceSpan.objects.filter(annotation_id__in=needing).values_list("annotation_id", flat=True)
        ) if needing else set()
        index_of = dict(sentences)
        lacking = sorted(index_of[a.sentence_id] + 1 for pk, a in needing.items() if pk not in with_evidence)
        if lacking:
            numbers = ", ".join(str(n) for n in lacking)
            problems.append(
                f"This project requires evidence for faithful and grounded answers: sentence {numbers} "
                f"has none (select the supporting text in the reference and press e)."
            )
    from .claims import triplet_submit_problems  # claims builds on this module

    problems.extend(triplet_submit_problems(assignment))
    return problems


def assignment_submit(
    assignment: Assignment, *, actor, request_id: str = "", expected_version: int | None = None,
) -> Outcome:
    """Submit a turn whose sentences all have a label (and the evidence the project requires).

    Runs in one transaction: the status change, the audit event and whatever
    must happen with it (gold derivation) commit together or not at all.
    """

    def mutate(locked, _):
        problems = submit_problems(locked)
        if problems:
            raise SubmitRefused(problems)
        return {"status": locked.status}, {"status": Assignment.Status.SUBMITTED.value}

    with transaction.atomic():
        outcome = _write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
                         action="submit", sentence=None, mutate=mutate)
        if not outcome.replayed:
            from .claims import triplet_gold_derive_for_turn  # claims builds on this module

            # Triplet labels of a complete turn become gold or disputes, like sentence labels.
            triplet_gold_derive_for_turn(outcome.assignment.turn)
            if outcome.assignment.is_qualification:
                # The last turn of a qualification attempt scores it (idempotent).
                qualification_score_attempt(outcome.assignment.project, outcome.assignment.annotator)
            else:
                # The last of the turn's `overlap` submissions makes gold or disputes (idempotent).
                gold_derive_for_turn(outcome.assignment.turn)
    return outcome


def annotation_amend(
    assignment: Assignment, sentence: Sentence, label: str, *,
    actor, request_id: str = "", reason: str = "", expected_version: int | None = None,
) -> Outcome:
    """Change the label of one sentence of a *submitted* turn (after a lead's feedback).

    Allowed while the turn is not adjudicated: no adjudication of the turn is
    resolved and no gold label of this sentence was decided by an adjudicator
    or a lead. The sentence gets the one path that yields ``label``; the
    change is an ``amend`` event in the audit history, old -> new, with the reason.
    """
    from ..models import Adjudication, GoldLabel
    from ..domain.vocabulary import GoldProvenance

    try:
        label = Label(label)
    except ValueError:
        raise AnnotationError(f"Unknown label {label!r}.") from None
    request_id = (request_id or "")[:64]
    if sentence.turn_id != assignment.turn_id:
        raise AnnotationError("That sentence is not part of this turn.")
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
        if request_id:
            prior = AnnotationEvent.objects.filter(assignment_id=locked.pk, request_id=request_id).first()
            if prior is not None:
                return _replayed(locked, sentence, prior)
        if locked.status != Assignment.Status.SUBMITTED or locked.is_qualification:
            raise AnnotationError("Only a submitted turn of real work is amended; change it on the annotation screen.")
        if expected_version is not None and int(expected_version) != locked.version:
            raise VersionConflict(locked.version)
        if Adjudication.objects.filter(turn_id=locked.turn_id, status=Adjudication.Status.RESOLVED).exists() or \
                GoldLabel.objects.filter(sentence=sentence, provenance__in=[
                    GoldProvenance.ADJUDICATION, GoldProvenance.OVERRIDE]).exists():
            raise AnnotationError("This turn has been adjudicated; its annotations can no longer be amended.")
        annotation = SentenceAnnotation.objects.filter(assignment_id=locked.pk, sentence_id=sentence.pk).first()
        if annotation is None:
            raise AnnotationError("There is no answer on this sentence to amend.")
        old = _snapshot(annotation)
        annotation.path = protocol.path_for_label(label)
        annotation.label = label.value
        cleared = _clear_stale_extras(annotation)
        annotation.save(update_fields=["path", "label", "updated_at", *cleared])
        Assignment.objects.filter(pk=locked.pk).update(version=F("version") + 1)
        locked.version += 1
        event = AnnotationEvent.objects.create(
            assignment=locked, sentence=sentence, actor=actor, action="amend",
            old=old, new={**_snapshot(annotation), "reason": (reason or "")[:MAX_NOTE_LENGTH]},
            request_id=request_id,
        )
        # Agreement gold (or a dispute) follows the amended label.
        gold_rederive_sentence(sentence, actor, reason or "amended after feedback")
    return Outcome(locked, annotation, event)
