"""Gold labels: derived from agreement, decided by adjudication, overridden by a lead.

Every change to a sentence's gold writes a GoldEvent (old -> new, who, why), so
the history survives reopenings and overrides.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from ..domain import gold as gold_rules
from ..domain.protocol_groups import reading
from ..domain.protocol_document import ProtocolError
from ..projects.protocol_mapping import carried_note, carry_for_slots, version_carry
from ..projects.protocols import protocol_for
from ..access import can_adjudicate, is_lead
from ..models import Adjudication, AnnotationEvent, Assignment, DrawnTurn, EvidenceSpan, GoldEvent, GoldLabel, GoldVersion, Sentence, SentenceAnnotation, Turn
from ..domain.vocabulary import DrawnTurnReview, GoldProvenance, ImportedGold


class GoldError(Exception):
    """A gold decision the rules refuse; the message says why, for the user."""


# Gold that came from the annotators and is recomputed when one of them reopens.
DERIVED_PROVENANCES = frozenset({GoldProvenance.AGREEMENT, GoldProvenance.ADJUDICATION, GoldProvenance.REVIEW})
# Gold that follows an annotator's answer directly, so it is derived again when they amend it.
FOLLOWS_ANSWERS = frozenset({GoldProvenance.AGREEMENT, GoldProvenance.REVIEW})


def known_label(protocol, label) -> str:
    """``label`` if the project's protocol has it, else a GoldError naming the labels it has."""
    labels = reading(protocol).labels
    if label not in labels:
        raise GoldError(f"Unknown label {label!r}: this project's protocol has {', '.join(labels)}.")
    return str(label)


@dataclass
class DeriveResult:
    complete: bool = False
    agreed: list[int] = field(default_factory=list)
    disputed: list[int] = field(default_factory=list)


def _set_gold(sentence_id, *, label, path, provenance, actor=None, reason="", severity=None, error_type="",
              keep_decider=False):
    """Create or replace a sentence's gold and record the change (``keep_decider``: ``actor`` only explains the
    gold, the label stays the decision of whoever made it)."""
    gold = GoldLabel.objects.filter(sentence_id=sentence_id).first()
    old_label = gold.label if gold else ""
    if gold is None:
        gold = GoldLabel(sentence_id=sentence_id)
    gold.label = label
    gold.path = path
    gold.provenance = provenance
    gold.reason = reason
    if not keep_decider:
        gold.decided_by = actor
    gold.severity = severity
    gold.error_type = error_type
    gold.save()
    GoldEvent.objects.create(
        sentence_id=sentence_id, old_label=old_label, new_label=label, provenance=provenance, reason=reason, actor=actor
    )
    return gold


def _clear_gold(gold: GoldLabel, *, actor, reason):
    GoldEvent.objects.create(
        sentence_id=gold.sentence_id, old_label=gold.label, new_label="", provenance="", reason=reason, actor=actor
    )
    gold.delete()


def gold_version_bump(project_id: int) -> None:
    """Mark the project's gold as changed, so cached reports are recomputed."""
    if not GoldVersion.objects.filter(project_id=project_id).update(version=F("version") + 1):
        GoldVersion.objects.get_or_create(project_id=project_id)
        GoldVersion.objects.filter(project_id=project_id).update(version=F("version") + 1)



@transaction.atomic
def gold_derive_for_turn(turn: Turn) -> DeriveResult:
    """Compare the annotators of a fully annotated turn and give each sentence gold or a dispute.

    Runs once all ``project.overlap`` (non-qualification) assignments of the turn
    are submitted; before that, and for qualification turns, it does nothing. A turn
    drawn for human checks under single review (``Project.drawn_turn_review``) needs
    one submission: its labels become gold with provenance REVIEW.
    Sentences that already have gold keep it, and a sentence with an open
    adjudication gets no second one, so calling it again changes nothing. The rule
    itself is ``domain.gold.decide_turn``; this reads the answers and writes its decision.
    """
    turn = Turn.objects.select_for_update().select_related("dialogue__project").get(pk=turn.pk)
    project = turn.dialogue.project
    result = DeriveResult()
    if turn.is_qualification:
        return result
    assignments = list(
        Assignment.objects.filter(turn=turn, is_qualification=False, status=Assignment.Status.SUBMITTED)
        .order_by("submitted_at", "id")
    )
    single_review = (project.drawn_turn_review == DrawnTurnReview.SINGLE
                     and DrawnTurn.objects.filter(turn=turn, draw__project=project).exists())
    if gold_rules.decided_by_review(len(assignments), project.overlap, single_review):
        return _gold_from_review(turn, project, assignments[0])
    if not gold_rules.turn_is_complete(len(assignments), project.overlap):
        return result
    result.complete = True
    answers, note = _answers_as_current(project, assignments)
    _clear_agreement_that_no_longer_holds(turn, answers)
    settled, imported = _settled_and_imported(turn)
    # One annotator's review gold does not settle a turn that several annotators completed: they decide it
    # (a disagreement with the reviewer is a dispute, not hidden behind the reviewer's label).
    reviewed = {gold.sentence_id: gold for gold in GoldLabel.objects.filter(
        sentence__turn=turn, provenance=GoldProvenance.REVIEW)}
    settled -= set(reviewed)
    sentence_ids = list(Sentence.objects.filter(turn=turn).values_list("id", flat=True))
    decision = gold_rules.decide_turn(protocol_for(project), sentence_ids, answers, len(assignments), settled, imported,
                                      imported_is_final=project.imported_gold == ImportedGold.FINAL)
    for agreed in decision.agreed:
        _set_gold(agreed.sentence_id, label=agreed.label, path=agreed.path, provenance=GoldProvenance.AGREEMENT,
                  reason=agreed.reason + note, severity=agreed.severity, error_type=agreed.error_type)
        result.agreed.append(agreed.sentence_id)
    for sentence_id in decision.disputed:
        if sentence_id in reviewed:
            _clear_gold(reviewed[sentence_id], actor=None,
                        reason="The turn's annotators disagree with the single review: adjudication decides.")
        Adjudication.objects.create(sentence_id=sentence_id, turn=turn)
        result.disputed.append(sentence_id)
    if result.agreed or result.disputed:
        gold_version_bump(project.pk)
    return result


def _answers_as_current(project, assignments) -> tuple[dict[int, list[gold_rules.GivenAnswer]], str]:
    """Each sentence's answers as labels of the project's current protocol version, and a note for gold's reason
    (projects.protocol_mapping: an answer whose label does not carry over is left out, so the sentence is disputed)."""
    carry = carry_for_slots(project, assignments)
    answers: dict[int, list[gold_rules.GivenAnswer]] = {}
    for annotation in SentenceAnnotation.objects.filter(assignment__in=assignments).select_related("assignment"):
        label = carry.carry(annotation.assignment.protocol_version_id, annotation.label) if carry else annotation.label
        if label is not None:
            answers.setdefault(annotation.sentence_id, []).append(
                gold_rules.GivenAnswer(label, annotation.severity, annotation.error_type))
    return answers, carried_note(carry, assignments)


def _clear_agreement_that_no_longer_holds(turn: Turn, answers: dict) -> None:
    """Gold by agreement whose annotators no longer all give its label (a reset of the turn's units reopened
    their slots and one of them changed an answer on a unit it kept, or a third annotator came with a raised
    overlap) is cleared, in gold's history, so that the unit is decided again like any other. Gold an
    adjudicator, a lead or an import decided stays: it never rested on the annotators agreeing."""
    for gold in GoldLabel.objects.filter(sentence__turn=turn, provenance=GoldProvenance.AGREEMENT):
        given = answers.get(gold.sentence_id, [])
        if any(answer.label != gold.label for answer in given):
            _clear_gold(gold, actor=None, reason="The annotators' answers changed since they agreed: decided again.")


def _gold_from_review(turn: Turn, project, assignment: Assignment) -> DeriveResult:
    """A drawn turn under single review: the one annotator's labels become gold (provenance REVIEW)."""
    result = DeriveResult(complete=True)
    given, note = _answers_as_current(project, [assignment])
    answers = {sentence_id: answer[0] for sentence_id, answer in given.items()}
    settled, imported = _settled_and_imported(turn)
    sentence_ids = list(Sentence.objects.filter(turn=turn).values_list("id", flat=True))
    for reviewed in gold_rules.decide_reviewed_turn(protocol_for(project), sentence_ids, answers, settled, imported,
                                                    imported_is_final=project.imported_gold == ImportedGold.FINAL):
        _set_gold(reviewed.sentence_id, label=reviewed.label, path=reviewed.path, provenance=GoldProvenance.REVIEW,
                  actor=assignment.annotator, reason=reviewed.reason + note, severity=reviewed.severity,
                  error_type=reviewed.error_type)
        result.agreed.append(reviewed.sentence_id)
    if result.agreed:
        gold_version_bump(project.pk)
    return result


def _settled_and_imported(turn: Turn) -> tuple[set[int], dict[int, str]]:
    """Sentences whose gold the project decided (or that wait in an open dispute), and imported gold labels."""
    gold = dict(GoldLabel.objects.filter(sentence__turn=turn).values_list("sentence_id", "provenance"))
    imported = dict(GoldLabel.objects.filter(sentence__turn=turn, provenance=GoldProvenance.IMPORTED)
                    .values_list("sentence_id", "label"))
    settled = {sentence_id for sentence_id, provenance in gold.items() if provenance != GoldProvenance.IMPORTED}
    settled |= set(
        Adjudication.objects.filter(turn=turn, status=Adjudication.Status.OPEN).values_list("sentence_id", flat=True)
    )
    return settled, imported


def _require_reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise GoldError("Give a reason for the decision.")
    return reason


def has_annotated(user, turn) -> bool:
    return Assignment.objects.filter(turn=turn, annotator=user).exists()


@transaction.atomic
def adjudication_resolve(
    adjudication: Adjudication,
    adjudicator,
    *,
    reason: str,
    path: dict | None = None,
    label: str | None = None,
    side: Assignment | int | None = None,
    evidence: list[tuple[int, int]] | None = None,
) -> GoldLabel:
    """Decide a disputed sentence: walk the protocol (``path``), name a ``label``, or side with an annotator.

    ``side`` is the assignment whose answer the adjudicator adopts. The reason is
    required. Someone who annotated the turn may not adjudicate it.
    """
    reason = _require_reason(reason)
    adjudication = _open_for(adjudication, adjudicator)
    protocol = protocol_for(adjudication.turn.dialogue.project)
    if sum(x is not None for x in (path, label, side)) != 1:
        raise GoldError("Decide by walking the protocol, naming a label, or picking one side.")
    chosen = None
    if side is not None:
        side_id = side.pk if isinstance(side, Assignment) else int(side)
        chosen = SentenceAnnotation.objects.filter(
            assignment_id=side_id,
            assignment__turn=adjudication.turn,
            assignment__status=Assignment.Status.SUBMITTED,
            sentence=adjudication.sentence_id,
        ).select_related("assignment").first()
        if chosen is None or not chosen.label:
            raise GoldError("That annotator gave no label for this sentence.")
        carry = version_carry(adjudication.turn.dialogue.project)
        if carry.is_older(chosen.assignment.protocol_version_id):
            # An answer of an older version: its label as the mapping carries it over, with that label's path.
            label = carry.carry(chosen.assignment.protocol_version_id, chosen.label)
            if label is None:
                raise GoldError(f"That annotator's label {chosen.label!r} (an older protocol version) does not carry "
                                "over to the current version: walk the protocol or name a label instead.")
            path = protocol.path_for_label(label) or {}
        else:
            # The side's own walk (a label two paths reach keeps the one the annotator took).
            label = chosen.label
            path = protocol.ordered(chosen.path or {}) or protocol.path_for_label(label) or {}
    elif path is not None:
        path = protocol.ordered(path)
        try:
            protocol.validate(path)
        except ProtocolError as error:
            raise GoldError(str(error)) from None
        label = protocol.label_of(path)
        if label is None:
            raise GoldError("Answer every question of the protocol before saving.")
        path = {str(step): str(value) for step, value in path.items()}  # the walk itself: a label may have two
    else:
        label = known_label(protocol, label)
        path = protocol.path_for_label(label) or {}
    adjudication.status = Adjudication.Status.RESOLVED
    adjudication.adjudicator = adjudicator
    adjudication.label = label
    adjudication.path = path
    adjudication.chosen_assignment = chosen.assignment if chosen else None
    adjudication.reason = reason
    adjudication.resolved_at = timezone.now()
    adjudication.save()
    reference = adjudication.turn.dialogue.reference
    for start, end in evidence or []:
        if not 0 <= start < end <= len(reference):
            raise GoldError(f"Evidence {start}-{end} lies outside the reference.")
        EvidenceSpan.objects.create(adjudication=adjudication, start=start, end=end, text=reference[start:end])
    gold_version_bump(adjudication.turn.dialogue.project_id)
    return _set_gold(
        adjudication.sentence_id,
        label=str(label),
        path=path,
        provenance=GoldProvenance.ADJUDICATION,
        actor=adjudicator,
        reason=reason,
        severity=chosen.severity if chosen else None,
        error_type=chosen.error_type if chosen else "",
    )


@transaction.atomic
def gold_override(sentence: Sentence, lead, label: str, reason: str) -> GoldLabel:
    """A lead sets a sentence's gold, whatever it was; an open dispute on it is closed by the same decision."""
    reason = _require_reason(reason)
    project = sentence.turn.dialogue.project
    if not is_lead(lead, project):
        raise GoldError("Only a lead can override gold.")
    label = known_label(protocol_for(project), label)
    path = protocol_for(project).path_for_label(label) or {}
    for adjudication in Adjudication.objects.select_for_update().filter(
        sentence=sentence, status=Adjudication.Status.OPEN
    ):
        adjudication.status = Adjudication.Status.RESOLVED
        adjudication.adjudicator = lead
        adjudication.label = label
        adjudication.path = path
        adjudication.reason = f"Lead override: {reason}"
        adjudication.resolved_at = timezone.now()
        adjudication.save()
    gold_version_bump(project.pk)
    return _set_gold(
        sentence.pk, label=label, path=path, provenance=GoldProvenance.OVERRIDE, actor=lead, reason=reason
    )


@transaction.atomic
def gold_reason_set(sentence: Sentence, lead, reason: str) -> GoldLabel:
    """A lead writes, rewrites or clears why a sentence's gold is what it is (imported gold comes without a
    reason); the label, its path and who decided it stay. The change is in GoldEvent like any other."""
    if not is_lead(lead, sentence.turn.dialogue.project):
        raise GoldError("Only a lead writes the reason of a gold label.")
    gold = GoldLabel.objects.select_for_update().filter(sentence=sentence).first()
    if gold is None:
        raise GoldError("This sentence has no gold label to explain.")
    reason = (reason or "").strip()
    if reason == gold.reason:
        return gold
    return _set_gold(sentence.pk, label=gold.label, path=gold.path, provenance=gold.provenance, actor=lead,
                     reason=reason, severity=gold.severity, error_type=gold.error_type, keep_decider=True)


@transaction.atomic
def annotation_reopen(assignment: Assignment, lead, reason: str) -> Assignment:
    """A lead sends a submitted annotation back to its annotator.

    The gold that came from it (agreement or adjudication) is cleared, with the
    change recorded in GoldEvent, and open disputes on the turn are withdrawn;
    gold is derived again when the annotator submits. A lead's override stays.
    """
    reason = _require_reason(reason)
    assignment = Assignment.objects.select_for_update().select_related("project").get(pk=assignment.pk)
    if not is_lead(lead, assignment.project):
        raise GoldError("Only a lead can reopen an annotation.")
    if assignment.status != Assignment.Status.SUBMITTED:
        raise GoldError("Only a submitted annotation can be reopened.")
    old_status = assignment.status
    assignment.status = Assignment.Status.IN_PROGRESS
    assignment.submitted_at = None
    assignment.version += 1
    assignment.save(update_fields=["status", "submitted_at", "version"])
    AnnotationEvent.objects.create(
        assignment=assignment,
        actor=lead,
        action="reopen",
        old={"status": old_status},
        new={"status": assignment.status, "reason": reason},
    )
    cleared_because = f"Reopened {assignment.annotator}'s annotation: {reason}"
    for gold in GoldLabel.objects.select_for_update().filter(
        sentence__turn_id=assignment.turn_id, provenance__in=DERIVED_PROVENANCES
    ):
        _clear_gold(gold, actor=lead, reason=cleared_because)
    Adjudication.objects.filter(turn_id=assignment.turn_id, status=Adjudication.Status.OPEN).delete()
    gold_version_bump(assignment.project_id)
    return assignment


def _open_for(adjudication: Adjudication, adjudicator) -> Adjudication:
    adjudication = Adjudication.objects.select_for_update().select_related("turn__dialogue__project").filter(
        pk=adjudication.pk
    ).first()
    if adjudication is None:
        # A lead's reset of the turn's units removed it (kept in that change's audit) while it was open here.
        raise GoldError("This dispute no longer exists: a lead changed the turn's units and reset its annotations.")
    if has_annotated(adjudicator, adjudication.turn):
        raise GoldError("You annotated this turn, so someone else must adjudicate it.")
    if not can_adjudicate(adjudicator, adjudication.turn.dialogue.project):
        raise GoldError("Only adjudicators and leads decide disputes.")
    if adjudication.status != Adjudication.Status.OPEN:
        raise GoldError("This dispute has already been decided.")
    return adjudication


@transaction.atomic
def gold_rederive_sentence(sentence: Sentence, actor, reason: str) -> DeriveResult:
    """Derive a sentence's gold again after one of its submitted annotations changed (an amendment).

    Gold from agreement (or a single review) is cleared (recorded in GoldEvent) and an open dispute on
    the sentence withdrawn; then the turn is compared again, which gives the
    sentence agreement gold or a new dispute. Gold an adjudicator or a lead
    decided is left alone.
    """
    gold = GoldLabel.objects.select_for_update().filter(sentence=sentence).first()
    if gold is not None and gold.provenance not in FOLLOWS_ANSWERS:
        return DeriveResult(complete=True)
    if gold is not None:
        _clear_gold(gold, actor=actor, reason=reason)
    Adjudication.objects.filter(sentence=sentence, status=Adjudication.Status.OPEN).delete()
    gold_version_bump(sentence.turn.dialogue.project_id)
    return gold_derive_for_turn(sentence.turn)
