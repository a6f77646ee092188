"""Every change an annotator makes to an assignment, saved at once and audited.

Each service checks what the change needs (the protocol mode, a known label,
evidence inside the reference, ...) and makes it through the one write path,
``annotation_write`` (services/annotation_write.py: the assignment's lock,
replay by request id, the version check, refusal once submitted, the audit
event old -> new). Submitting a turn, and amending one after a lead's
feedback, go through the same path.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import F

from ..domain.assignment import UNFINISHED
from ..domain.claims import stale_extras
from ..domain.protocol.groups import reading
from ..domain.protocol.document import ProtocolError
from ..projects.protocols import protocol_for_assignment
from ..domain.vocabulary import GoldProvenance, ProtocolMode
from ..fastsql.compiled import CompiledQuery
from ..fastsql.joined import JoinedSelect
from ..models import Adjudication, Assignment, EvidenceSpan, GoldLabel, Sentence, SentenceAnnotation
from .write import AnnotationError, Outcome, annotation_write, clamp_seconds
from ..claims.services import triplet_gold_derive_for_turn, triplet_submit_problems
from ..corpus.turn_lock import turn_locked_with_project
from ..gold.derivation import gold_derive_for_turn, gold_rederive_sentence
from ..qa.qualification import qualification_score_attempt

MAX_NOTE_LENGTH = 5000


class SubmitRefused(AnnotationError):
    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("The turn cannot be submitted yet: " + " ".join(problems))


def evidence_required(protocol, path: dict) -> bool:
    """Whether an answer on this path (or the label it reached) needs evidence when the project requires it."""
    return reading(protocol).evidence_required(path, protocol.label_of(path) if path else None)


def label_snapshot(annotation: SentenceAnnotation, protocol) -> dict:
    """What the audit history keeps of a sentence's answer: its path (in protocol order) and label."""
    return {"path": protocol.ordered(annotation.path), "label": annotation.label}


def known_label(protocol, label: str) -> str:
    """``label`` if the project's protocol has it; an AnnotationError naming the ones it has otherwise."""
    labels = reading(protocol).labels
    if label not in labels:
        raise AnnotationError(f"Unknown label {label!r}: this project's protocol has {', '.join(labels)}.")
    return str(label)


def clear_stale_extras(annotation: SentenceAnnotation, protocol) -> list[str]:
    """A final label that takes no severity / error type clears them (domain.claims.stale_extras); their names."""
    cleared = stale_extras(reading(protocol), annotation.label, annotation.severity, annotation.justification,
                           annotation.error_type)
    for name, value in cleared.items():
        setattr(annotation, name, value)
    return list(cleared)


def _require_mode(assignment: Assignment, mode: str):
    if assignment.project.protocol_mode != mode:
        if mode == ProtocolMode.SEQUENTIAL:
            raise AnnotationError("This project uses independent mode: pick one of the labels.")
        raise AnnotationError("This project uses the sequential protocol: answer the questions one at a time.")


def answered_in_independent_mode(protocol, step) -> bool:
    """In independent mode the pick gives a label's choice answers (its shape); the multiple, scale and text steps
    on its walk are then answered one by one, as in sequential mode (docs/protocols.md, *Step kinds*)."""
    return step in protocol.steps and protocol.step_kind(step) != "choice"


def undone_path(protocol, path: dict, independent: bool) -> dict:
    """The path without its last answer; in independent mode, without the pick when no kind step follows it."""
    steps = protocol.steps_of(protocol.ordered(path))
    if independent and not (steps and answered_in_independent_mode(protocol, steps[-1])):
        return {}
    return protocol.ordered(protocol.undo(protocol.ordered(path)))


def annotation_answer_step(
    assignment: Assignment, sentence: Sentence, step: str, value: str | list[str] | int, *,
    actor, request_id: str = "", expected_version: int | None = None, seconds: float = 0.0,
) -> Outcome:
    """Answer one protocol question for a sentence; changing an earlier answer clears the later ones."""
    protocol = protocol_for_assignment(assignment)
    if not answered_in_independent_mode(protocol, step):
        _require_mode(assignment, ProtocolMode.SEQUENTIAL)

    def mutate(_, annotation):
        old = label_snapshot(annotation, protocol)
        try:
            path = protocol.answer(protocol.ordered(annotation.path), step, value)
        except ProtocolError as error:
            raise AnnotationError(str(error)) from None
        annotation.path = {str(k): v for k, v in protocol.ordered(path).items()}  # a kind's list or int stays one
        label = protocol.label_of(annotation.path)
        annotation.label = str(label) if label else ""
        clear_stale_extras(annotation, protocol)
        return old, {**label_snapshot(annotation, protocol), "step": str(step),
                     "answer": str(value) if isinstance(value, str) else value}

    return annotation_write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
                            action="answer", sentence=sentence, mutate=mutate, seconds=seconds)


def annotation_pick_label(
    assignment: Assignment, sentence: Sentence, label: str, *,
    actor, request_id: str = "", expected_version: int | None = None, seconds: float = 0.0,
) -> Outcome:
    """Independent mode: pick one of the protocol's labels at once (stored as the path that yields it)."""
    _require_mode(assignment, ProtocolMode.INDEPENDENT)
    protocol = protocol_for_assignment(assignment)
    label = known_label(protocol, label)

    def mutate(_, annotation):
        old = label_snapshot(annotation, protocol)
        annotation.path = protocol.path_for_label(label) or {}
        # The label once its walk's kind steps (if any) are answered too: label_of is None until then.
        annotation.label = protocol.label_of(annotation.path) or ""
        clear_stale_extras(annotation, protocol)
        return old, label_snapshot(annotation, protocol)

    return annotation_write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
                            action="pick", sentence=sentence, mutate=mutate, seconds=seconds)


def annotation_undo(
    assignment: Assignment, sentence: Sentence, *,
    actor, request_id: str = "", expected_version: int | None = None, seconds: float = 0.0,
) -> Outcome:
    """Take back the last answer of a sentence (independent mode: clear its label)."""
    protocol = protocol_for_assignment(assignment)

    def mutate(_, annotation):
        if not annotation.path:
            raise AnnotationError("Nothing to undo on this sentence.")
        old = label_snapshot(annotation, protocol)
        annotation.path = undone_path(protocol, annotation.path,
                                      assignment.project.protocol_mode == ProtocolMode.INDEPENDENT)
        label = protocol.label_of(annotation.path) if annotation.path else None
        annotation.label = str(label) if label else ""
        clear_stale_extras(annotation, protocol)
        return old, label_snapshot(annotation, protocol)

    return annotation_write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
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

    return annotation_write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
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

    outcome = annotation_write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
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

    return annotation_write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
                            action="evidence_remove", sentence=sentence, mutate=mutate, seconds=seconds)


def annotation_record_time(assignment: Assignment, sentence: Sentence, seconds: float) -> None:
    """Add time spent looking at a sentence (sent when the annotator moves on); not a change, so no event."""
    seconds = clamp_seconds(seconds)
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


# Every submit reads these: compiled or written once per process (fastsql; docs/benchmarks.md).
_SENTENCE_INDEXES = CompiledQuery(lambda turn_id: Sentence.objects.filter(turn_id=turn_id).order_by("index")
                                  .values_list("id", "index"), "turn_id")
_ANNOTATIONS_OF_ASSIGNMENT = JoinedSelect(SentenceAnnotation, "x", joins=[], extra_columns=[],
                                          where="x.assignment_id = %s")


def submit_problems(assignment: Assignment) -> list[str]:
    """Why the assignment cannot be submitted yet (empty when it can)."""
    sentences = _SENTENCE_INDEXES.fetch_all(turn_id=assignment.turn_id)
    annotations = {a.sentence_id: a for a, _ in _ANNOTATIONS_OF_ASSIGNMENT.fetch_all([assignment.pk])}
    problems = []
    missing = [index + 1 for sid, index in sentences if not getattr(annotations.get(sid), "label", "")]
    if missing:
        numbers = ", ".join(str(n) for n in missing[:12]) + ("…" if len(missing) > 12 else "")
        problems.append(f"{len(missing)} of {len(sentences)} sentences have no label yet (sentence {numbers}).")
    if assignment.project.require_evidence and assignment.turn.dialogue.reference.strip():
        protocol = protocol_for_assignment(assignment)
        needing = {a.pk: a for a in annotations.values() if a.label and evidence_required(protocol, a.path or {})}
        with_evidence = set(
            EvidenceSpan.objects.filter(annotation_id__in=needing).values_list("annotation_id", flat=True)
        ) if needing else set()
        index_of = dict(sentences)
        lacking = sorted(index_of[a.sentence_id] + 1 for pk, a in needing.items() if pk not in with_evidence)
        if lacking:
            numbers = ", ".join(str(n) for n in lacking)
            problems.append(
                f"This project requires evidence for the answers its protocol marks: sentence {numbers} "
                f"has none (select the supporting text in the reference and press e)."
            )
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

    def decide(outcome: Outcome) -> None:
        # Locked once for both derivations, so that two last submissions of one turn decide it one after the other.
        turn = turn_locked_with_project(outcome.assignment.turn_id)
        # Triplet labels of a complete turn become gold or disputes, like sentence labels.
        triplet_gold_derive_for_turn(turn, locked=True)
        if outcome.assignment.is_qualification:
            # The last turn of a qualification attempt scores it (idempotent).
            qualification_score_attempt(outcome.assignment.project, outcome.assignment.annotator)
        else:
            # The last of the turn's `overlap` submissions makes gold or disputes (idempotent).
            gold_derive_for_turn(turn, locked=True)

    return annotation_write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
                            action="submit", sentence=None, mutate=mutate, then=decide)


def amended_path(protocol, label: str, annotation: SentenceAnnotation, path: dict | None) -> dict:
    """The walk an amendment to ``label`` stores: the one sent, the label's own one when its walk asks only choices,
    or the sentence's walk when it already ends there; else an AnnotationError (issue 42's kind steps)."""
    if path is not None:
        return protocol.ordered(path)
    shape = protocol.path_for_label(label) or {}
    if protocol.label_of(shape) == label:
        return shape
    try:
        if annotation.label == label and protocol.label_of(dict(annotation.path or {})) == label:
            return protocol.ordered(annotation.path)
    except (ProtocolError, TypeError):  # a walk of another protocol version: not kept
        pass
    asked = protocol.next_step(shape)
    question = f"“{protocol.step(asked).question}” and what follows" if asked else "more questions"
    raise AnnotationError(f"{reading(protocol).label_name(label)} also asks {question}: amend with the answers of its "
                          "walk (Amend my answer walks them). Nothing was changed.")


def annotation_amend(
    assignment: Assignment, sentence: Sentence, label: str, *,
    actor, request_id: str = "", reason: str = "", expected_version: int | None = None, path: dict | None = None,
) -> Outcome:
    """Change the label of one sentence of a *submitted* turn (after a lead's feedback).

    Allowed while the turn is not adjudicated: no adjudication of the turn is
    resolved and no gold label of this sentence was decided by an adjudicator
    or a lead. The sentence gets the one path that yields ``label``; the
    change is an ``amend`` event in the audit history, old -> new, with the reason.

    A label whose walk asks multiple, scale or text steps (issue 42) needs their answers: ``path``, the walk
    that ends on it (checked here). Without one, the sentence keeps its own walk when it already ends on
    ``label``; otherwise the amendment is refused and nothing changes (the annotator's values stay).
    """
    protocol = protocol_for_assignment(assignment)
    label = known_label(protocol, label)
    if path is not None:
        try:
            protocol.validate(path)
        except ProtocolError as error:
            raise AnnotationError(str(error)) from None
        if protocol.label_of(path) != label:
            raise AnnotationError(f"The walk sent does not end on {reading(protocol).label_name(label)}: answer every "
                                  "question of its walk. Nothing was changed.")

    def mutate(locked, annotation):
        if Adjudication.objects.filter(turn_id=locked.turn_id, status=Adjudication.Status.RESOLVED).exists() or \
                GoldLabel.objects.filter(sentence=sentence, provenance__in=[
                    GoldProvenance.ADJUDICATION, GoldProvenance.OVERRIDE]).exists():
            raise AnnotationError("This turn has been adjudicated; its annotations can no longer be amended.")
        if annotation.pk is None:
            raise AnnotationError("There is no answer on this sentence to amend.")
        old = label_snapshot(annotation, protocol)
        annotation.path = amended_path(protocol, label, annotation, path)
        annotation.label = label
        clear_stale_extras(annotation, protocol)
        return old, {**label_snapshot(annotation, protocol), "reason": (reason or "")[:MAX_NOTE_LENGTH]}

    with transaction.atomic():
        outcome = annotation_write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
                                   action="amend", sentence=sentence, mutate=mutate, amending=True)
        if not outcome.replayed:
            # Agreement gold (or a dispute) follows the amended label.
            gold_rederive_sentence(sentence, actor, reason or "amended after feedback")
    return outcome
