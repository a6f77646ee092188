"""One sentence saved at once: the walk the annotator took in the page, its note, evidence and time.

The annotation page keeps the answers in the browser and sends one change per
finished sentence (or per sentence left for another), batched when several are
waiting (annotator/work/sync_views.py). Each change goes through the
one write path of annotations (``annotation_write``: the assignment's lock,
replay by request id, the version check, refusal once submitted), so it is
applied once or refused as a whole. Inside it, every step the annotator took
is replayed through the protocol and written to the audit history as it is
today (an ``answer`` / ``pick`` / ``undo`` event per step, old -> new, with the
time the annotator answered), followed by note and evidence events, then one
``save`` event carrying the change's request id.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from ..domain.protocol.groups import reading
from ..domain.protocol.document import ProtocolError
from ..projects.protocols import protocol_for_assignment
from ..models import AnnotationEvent, Assignment, EvidenceSpan, Sentence
from ..domain.vocabulary import ProtocolMode
from .services import (
    MAX_NOTE_LENGTH, answered_in_independent_mode, clear_stale_extras, evidence_bounds, label_snapshot, undone_path,
)
from .write import AnnotationError, Outcome, annotation_write

STEP_ACTIONS = ("answer", "pick", "undo")


@dataclass(frozen=True)
class StepTaken:
    """One key the annotator pressed on a sentence: answer a step, pick a label (independent mode) or undo."""

    action: str
    step: str = ""
    value: str | list[str] | int = ""  # the step's kind's value (protocol.kinds): str, list of str or int
    at: datetime | None = None


def annotation_save_sentence(
    assignment: Assignment, sentence: Sentence, *, steps: list[StepTaken], path: dict | None = None,
    note: str | None = None, evidence: list[tuple[int, int]] | None = None, seconds: float = 0.0,
    actor, request_id: str = "", expected_version: int | None = None, in_batch: bool = False,
) -> Outcome:
    """Apply the steps taken on ``sentence``, then the note and the evidence (both None: unchanged).

    ``path``, when given, is the path the page shows after the steps; it must be
    a path the protocol allows and the one the steps lead to (otherwise nothing
    is written). ``evidence`` is the whole list of (start, end) reference offsets
    the sentence keeps: spans not in it are removed, new ones attached.
    ``in_batch``: one of several changes saved together (``batch_save``; see ``annotation_write``).
    """
    independent = assignment.project.protocol_mode == ProtocolMode.INDEPENDENT
    protocol = protocol_for_assignment(assignment)
    if path is not None:
        try:
            protocol.validate(path)
        except ProtocolError as error:
            raise AnnotationError(f"Sentence {sentence.index + 1}: {error}") from None
    if note is not None:
        note = note.strip()
        if len(note) > MAX_NOTE_LENGTH:
            raise AnnotationError(f"A note may have at most {MAX_NOTE_LENGTH} characters.")
    wanted = None
    if evidence is not None:
        reference = assignment.turn.dialogue.reference
        wanted = {}
        for start, end in evidence:
            bounds = evidence_bounds(reference, start, end)
            wanted[bounds] = reference[bounds[0]:bounds[1]]
    now = timezone.now()

    def mutate(locked, annotation):
        old = {**label_snapshot(annotation, protocol), "note": annotation.note}
        events = []
        for number, taken in enumerate(steps, start=1):
            before = label_snapshot(annotation, protocol)
            new = _take(protocol, annotation, taken, independent)
            answered_at = min(taken.at or now, now)
            events.append(AnnotationEvent(
                assignment=locked, sentence=sentence, actor=actor, action=taken.action, old=before,
                new={**new, "answered_at": answered_at.isoformat()}, request_id=f"{request_id}:{number}"))
        if path is not None and protocol.ordered(path) != protocol.ordered(annotation.path):
            raise AnnotationError(f"Sentence {sentence.index + 1}: the answers sent do not lead to the path shown. "
                                  "Reload the page.")
        if note is not None and note != annotation.note:
            events.append(AnnotationEvent(assignment=locked, sentence=sentence, actor=actor, action="note",
                                          old={"note": annotation.note}, new={"note": note},
                                          request_id=f"{request_id}:note"))
            annotation.note = note
        if wanted is not None:
            events.extend(_replace_evidence(locked, sentence, annotation, wanted, actor, request_id))
        # The version this change leads to (``locked`` is the row before the write's bump): a batch sent again
        # after its answer was lost is chained onto it only if the slot is still there (sync_views).
        return old, {**label_snapshot(annotation, protocol), "note": annotation.note, "steps": len(steps),
                     "version": locked.version + 1}, events

    return annotation_write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
                            action="save", sentence=sentence, mutate=mutate, seconds=seconds, in_batch=in_batch)


def _take(protocol, annotation, taken: StepTaken, independent: bool) -> dict:
    """Apply one step of the project's ``protocol`` to the annotation in memory; its new snapshot."""
    if taken.action == "undo":
        if not annotation.path:
            raise AnnotationError("Nothing to undo on this sentence.")
        annotation.path = undone_path(protocol, annotation.path, independent)
        extra = {}
    elif taken.action == "pick":
        if not independent:
            raise AnnotationError("This project uses the sequential protocol: answer the questions one at a time.")
        if taken.value not in reading(protocol).labels:
            raise AnnotationError(f"Unknown label {taken.value!r}.")
        annotation.path = protocol.path_for_label(taken.value) or {}
        extra = {}
    elif taken.action == "answer":
        if independent and not answered_in_independent_mode(protocol, taken.step):
            raise AnnotationError("This project uses independent mode: pick one of its protocol's labels.")
        try:
            annotation.path = protocol.ordered(protocol.answer(protocol.ordered(annotation.path), taken.step, taken.value))
        except ProtocolError as error:
            raise AnnotationError(str(error)) from None
        extra = {"step": taken.step, "answer": taken.value}
    else:
        raise AnnotationError(f"Unknown step action {taken.action!r}.")
    annotation.path = {str(k): v for k, v in annotation.path.items()}  # a kind's list or int stays one
    label = protocol.label_of(annotation.path) if annotation.path else None
    annotation.label = str(label) if label else ""
    clear_stale_extras(annotation, protocol)
    return {**label_snapshot(annotation, protocol), **extra}


def _replace_evidence(locked, sentence, annotation, wanted: dict, actor, request_id: str) -> list[AnnotationEvent]:
    """Make the sentence's evidence spans exactly ``wanted`` ((start, end) -> text); the events of the change."""
    if annotation.pk is None:
        annotation.save()
    events = []
    kept = set()
    for span in EvidenceSpan.objects.filter(annotation=annotation):
        if (span.start, span.end) in wanted and (span.start, span.end) not in kept:
            kept.add((span.start, span.end))
            continue
        events.append(AnnotationEvent(
            assignment=locked, sentence=sentence, actor=actor, action="evidence_remove",
            old={"evidence": span.pk, "start": span.start, "end": span.end, "text": span.text}, new=None,
            request_id=f"{request_id}:-{span.pk}"))
        span.delete()
    for number, ((start, end), text) in enumerate(sorted(wanted.items()), start=1):
        if (start, end) in kept:
            continue
        span = EvidenceSpan.objects.create(annotation=annotation, start=start, end=end, text=text)
        events.append(AnnotationEvent(
            assignment=locked, sentence=sentence, actor=actor, action="evidence_add", old=None,
            new={"evidence": span.pk, "start": start, "end": end, "text": text}, request_id=f"{request_id}:+{number}"))
    return events
