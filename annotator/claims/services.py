"""Writes of the finer views: claim triplets and their labels, severity, error types, triplet gold.

Changes an annotator makes inside an assignment go through the one write
path of annotations (``annotation_write``): row lock, idempotent ``request_id``,
version check, refusal once submitted, and an ``AnnotationEvent`` with old ->
new. Leads manage triplets outside assignments (import, extraction, fixing a
bad extraction) directly; every gold change of a triplet is likewise recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from ..domain import claims
from ..domain.protocol.groups import reading
from ..projects.protocols import protocol_for
from ..access import can_adjudicate, is_lead
from ..corpus.turn_lock import turn_locked_with_project
from ..models import Assignment, ClaimTriplet, Sentence, SentenceAnnotation, TripletAdjudication, TripletAnnotation, TripletGold, Turn
from ..domain.vocabulary import GoldProvenance, TripletSource
from ..work.write import AnnotationError, Outcome, annotation_write


class ClaimsError(AnnotationError):
    """A change the rules refuse; the message is shown to the user."""


def claims_rule(call, *args):
    """``call(*args)``, a rule of ``domain.claims``; its refusal raised as ``ClaimsError``."""
    try:
        return call(*args)
    except claims.ClaimsRuleError as error:
        raise ClaimsError(str(error)) from None


def _snapshot(triplet: ClaimTriplet) -> dict:
    return {"triplet": triplet.pk, "head": triplet.head, "relation": triplet.relation, "tail": triplet.tail,
            "sentence": triplet.sentence_id}


def _require(project, flag: str, what: str):
    if not getattr(project, flag):
        raise ClaimsError(f"{what} are switched off for this project.")


def _sentence_of(turn_id: int, sentence) -> Sentence | None:
    if sentence in (None, ""):
        return None
    sentence_id = sentence.pk if isinstance(sentence, Sentence) else int(sentence)
    found = Sentence.objects.filter(pk=sentence_id, turn_id=turn_id).first()
    if found is None:
        raise ClaimsError("That sentence is not part of this turn.")
    return found


def triplet_next_index(turn_id: int) -> int:
    """The index the next triplet of a turn takes (after the others)."""
    top = ClaimTriplet.objects.filter(turn_id=turn_id).aggregate(top=Max("index"))["top"]
    return 0 if top is None else top + 1


# --------------------------------------------------------------------------- triplets by hand


def triplet_create(
    turn: Turn, *, head: str, relation: str, tail: str, actor=None, sentence=None,
    source: str = TripletSource.MANUAL, metadata: dict | None = None,
) -> ClaimTriplet:
    """A new triplet on a turn (optionally tied to one of its sentences), numbered after the others."""
    head, relation, tail = claims_rule(claims.clean_triplet, head, relation, tail)
    sentence = _sentence_of(turn.pk, sentence)
    with transaction.atomic():
        Turn.objects.select_for_update().filter(pk=turn.pk).first()  # serialise numbering
        return ClaimTriplet.objects.create(
            turn=turn, sentence=sentence, index=triplet_next_index(turn.pk), head=head, relation=relation, tail=tail,
            source=source, metadata=metadata or {}, created_by=actor,
        )


def _labelled_by_others(triplet: ClaimTriplet, assignment_id: int | None) -> int:
    return TripletAnnotation.objects.filter(triplet=triplet).exclude(assignment_id=assignment_id).count()


def triplet_update(triplet: ClaimTriplet, *, head: str, relation: str, tail: str, actor, sentence=None) -> ClaimTriplet:
    """A lead corrects a triplet nobody labelled yet (labels were given to the old wording)."""
    head, relation, tail = claims_rule(claims.clean_triplet, head, relation, tail)
    if not is_lead(actor, triplet.turn.dialogue.project):
        raise ClaimsError("Only a lead can edit triplets outside an assignment.")
    if TripletAnnotation.objects.filter(triplet=triplet).exists():
        raise ClaimsError("This triplet has labels already; delete it and add a corrected one instead.")
    triplet.head, triplet.relation, triplet.tail = head, relation, tail
    triplet.sentence = _sentence_of(triplet.turn_id, sentence)
    triplet.save(update_fields=["head", "relation", "tail", "sentence"])
    return triplet


def triplet_delete(triplet: ClaimTriplet, *, actor) -> None:
    """A lead removes a triplet, with its labels and gold (e.g. a bad extraction)."""
    if not is_lead(actor, triplet.turn.dialogue.project):
        raise ClaimsError("Only a lead can delete triplets outside an assignment.")
    triplet.delete()


def assignment_triplet_add(
    assignment: Assignment, *, head: str, relation: str, tail: str, sentence=None,
    actor, request_id: str = "", expected_version: int | None = None,
) -> Outcome:
    """An annotator adds a triplet the extraction missed, while working on the turn (audited)."""
    _require(assignment.project, "enable_triplets", "Claim triplets")
    parts = claims_rule(claims.clean_triplet, head, relation, tail)
    sentence = _sentence_of(assignment.turn_id, sentence)
    made = {}

    def mutate(locked, _):
        triplet = ClaimTriplet.objects.create(
            turn_id=locked.turn_id, sentence=sentence, index=triplet_next_index(locked.turn_id),
            head=parts[0], relation=parts[1], tail=parts[2], source=TripletSource.MANUAL, created_by=actor,
        )
        made["triplet"] = triplet
        return None, _snapshot(triplet)

    outcome = annotation_write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
                               action="triplet_add", sentence=None, mutate=mutate)
    outcome.extra["triplet"] = made.get("triplet")
    return outcome


def _own_triplet(assignment: Assignment, triplet_id: int, actor) -> ClaimTriplet:
    triplet = ClaimTriplet.objects.filter(pk=triplet_id, turn_id=assignment.turn_id).first()
    if triplet is None:
        raise ClaimsError("That triplet is not part of this turn.")
    if triplet.source != TripletSource.MANUAL or triplet.created_by_id != actor.pk:
        raise ClaimsError("You can only change triplets you added yourself; label the others.")
    if _labelled_by_others(triplet, assignment.pk):
        raise ClaimsError("Another annotator has labelled this triplet; ask a lead to change it.")
    return triplet


def assignment_triplet_edit(
    assignment: Assignment, triplet_id: int, *, head: str, relation: str, tail: str, sentence=None,
    actor, request_id: str = "", expected_version: int | None = None,
) -> Outcome:
    _require(assignment.project, "enable_triplets", "Claim triplets")
    parts = claims_rule(claims.clean_triplet, head, relation, tail)
    sentence = _sentence_of(assignment.turn_id, sentence)

    def mutate(locked, _):
        triplet = _own_triplet(locked, triplet_id, actor)
        old = _snapshot(triplet)
        triplet.head, triplet.relation, triplet.tail = parts
        triplet.sentence = sentence
        triplet.save(update_fields=["head", "relation", "tail", "sentence"])
        return old, _snapshot(triplet)

    return annotation_write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
                            action="triplet_edit", sentence=None, mutate=mutate)


def assignment_triplet_delete(
    assignment: Assignment, triplet_id: int, *, actor, request_id: str = "", expected_version: int | None = None,
) -> Outcome:
    _require(assignment.project, "enable_triplets", "Claim triplets")

    def mutate(locked, _):
        triplet = _own_triplet(locked, triplet_id, actor)
        old = _snapshot(triplet)
        triplet.delete()
        return old, None

    return annotation_write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
                            action="triplet_delete", sentence=None, mutate=mutate)


# --------------------------------------------------------------------------- labelling triplets


def triplet_label_set(
    assignment: Assignment, triplet_id: int, label: str, *,
    actor, request_id: str = "", expected_version: int | None = None,
) -> Outcome:
    """An annotator labels a triplet Entailment / Neutral / Contradiction / bad ("" clears the label)."""
    _require(assignment.project, "enable_triplets", "Claim triplets")
    label = claims_rule(claims.parse_triplet_label, label).value if label else ""
    triplet = ClaimTriplet.objects.filter(pk=triplet_id, turn_id=assignment.turn_id).first()
    if triplet is None:
        raise ClaimsError("That triplet is not part of this turn.")

    def mutate(locked, _):
        existing = TripletAnnotation.objects.filter(assignment_id=locked.pk, triplet=triplet).first()
        old = {"triplet": triplet.pk, "label": existing.label if existing else ""}
        if not label:
            if existing is not None:
                existing.delete()
        elif existing is None:
            TripletAnnotation.objects.create(assignment=locked, triplet=triplet, label=label)
        else:
            existing.label = label
            existing.save(update_fields=["label", "updated_at"])
        return old, {"triplet": triplet.pk, "label": label}

    outcome = annotation_write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
                               action="triplet_label", sentence=triplet.sentence, mutate=mutate)
    outcome.extra["triplet"] = triplet
    return outcome


def triplet_submit_problems(assignment: Assignment) -> list[str]:
    """Why an assignment cannot be submitted as far as triplets go: every triplet needs a label."""
    if not assignment.project.enable_triplets:
        return []
    total = ClaimTriplet.objects.filter(turn_id=assignment.turn_id).count()
    done = TripletAnnotation.objects.filter(assignment_id=assignment.pk).count()
    if done < total:
        return [f"{total - done} of {total} claim triplets have no label yet (press t to label them)."]
    return []


# --------------------------------------------------------------------------- severity and error types


def _labelled_annotation(assignment: Assignment, sentence: Sentence) -> SentenceAnnotation:
    annotation = SentenceAnnotation.objects.filter(assignment_id=assignment.pk, sentence_id=sentence.pk).first()
    if annotation is None or not annotation.label:
        raise ClaimsError("Label the sentence first.")
    return annotation


def annotation_set_severity(
    assignment: Assignment, sentence: Sentence, severity, justification: str = "", *,
    actor, request_id: str = "", expected_version: int | None = None,
) -> Outcome:
    """Severity 1-5 and a justification for a sentence whose label takes one (the protocol's severity group;
    None clears)."""
    _require(assignment.project, "enable_severity", "Severity ratings")
    _labelled_annotation(assignment, sentence)  # a clear message before taking the lock

    def mutate(_, annotation):
        value, text = claims_rule(claims.check_severity, reading(protocol_for(assignment.project)), annotation.label, severity, justification)
        old = {"severity": annotation.severity, "justification": annotation.justification}
        annotation.severity, annotation.justification = value, text
        return old, {"severity": value, "justification": text}

    return annotation_write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
                            action="severity", sentence=sentence, mutate=mutate)


def annotation_set_error_type(
    assignment: Assignment, sentence: Sentence, error_type: str, *,
    actor, request_id: str = "", expected_version: int | None = None,
) -> Outcome:
    """An error type from the project's list for a sentence whose label takes one ("" clears)."""
    project = assignment.project
    _require(project, "enable_error_types", "Error types")
    _labelled_annotation(assignment, sentence)

    def mutate(_, annotation):
        value = claims_rule(claims.check_error_type, reading(protocol_for(project)), annotation.label, error_type, list(project.error_types or []))
        old = {"error_type": annotation.error_type}
        annotation.error_type = value
        return old, {"error_type": value}

    return annotation_write(assignment, actor=actor, request_id=request_id, expected_version=expected_version,
                            action="error_type", sentence=sentence, mutate=mutate)


# --------------------------------------------------------------------------- triplet gold


@dataclass
class TripletDeriveResult:
    complete: bool = False
    agreed: list[int] = field(default_factory=list)
    disputed: list[int] = field(default_factory=list)


def _set_triplet_gold(triplet_id: int, *, label: str, provenance: str, actor=None, reason: str = "") -> TripletGold:
    gold, _ = TripletGold.objects.update_or_create(
        triplet_id=triplet_id,
        defaults={"label": label, "provenance": provenance, "reason": reason, "decided_by": actor},
    )
    return gold


@transaction.atomic(savepoint=False)
def triplet_gold_derive_for_turn(turn: Turn, *, locked: bool = False) -> TripletDeriveResult:
    """Once all ``overlap`` assignments of a turn are submitted: agreement gold or an open dispute per triplet.

    Triplets that already have gold or an open dispute are left alone, so a
    second call changes nothing. A triplet some annotator left unlabelled is
    disputed. Imported RefChecker labels are not gold: they are compared with
    it in the reports.

    ``locked``: ``turn`` is the caller's ``turn_locked_with_project`` in this transaction (not locked again).
    No savepoint of its own: it runs inside the submission that completed the turn, which fails as a whole.
    """
    if not locked:
        turn = turn_locked_with_project(turn.pk)
    project = turn.dialogue.project
    result = TripletDeriveResult()
    if turn.is_qualification or not project.enable_triplets:
        return result
    assignments = list(
        Assignment.objects.filter(turn=turn, is_qualification=False, status=Assignment.Status.SUBMITTED)
        .values_list("pk", flat=True)
    )
    if len(assignments) < max(project.overlap, 2):
        return result
    result.complete = True
    given: dict[int, list[str]] = {}
    for triplet_id, label in TripletAnnotation.objects.filter(assignment_id__in=assignments).values_list(
        "triplet_id", "label"
    ):
        given.setdefault(triplet_id, []).append(label)
    settled = set(TripletGold.objects.filter(triplet__turn=turn).values_list("triplet_id", flat=True))
    settled |= set(
        TripletAdjudication.objects.filter(turn=turn, status=TripletAdjudication.Status.OPEN)
        .values_list("triplet_id", flat=True)
    )
    for triplet_id in ClaimTriplet.objects.filter(turn=turn).values_list("pk", flat=True):
        if triplet_id in settled:
            continue
        labels = given.get(triplet_id, [])
        if len(labels) == len(assignments) and len(set(labels)) == 1:
            _set_triplet_gold(triplet_id, label=labels[0], provenance=GoldProvenance.AGREEMENT,
                              reason=f"{len(labels)} annotators agreed")
            result.agreed.append(triplet_id)
        else:
            TripletAdjudication.objects.create(triplet_id=triplet_id, turn=turn)
            result.disputed.append(triplet_id)
    return result


def _reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ClaimsError("Give a reason for the decision.")
    return reason


@transaction.atomic
def triplet_adjudication_resolve(adjudication: TripletAdjudication, adjudicator, *, label: str, reason: str) -> TripletGold:
    """A third person decides a disputed triplet; someone who annotated the turn may not."""
    reason = _reason(reason)
    label = claims_rule(claims.parse_triplet_label, label)
    adjudication = TripletAdjudication.objects.select_for_update().select_related("turn__dialogue__project").get(
        pk=adjudication.pk
    )
    if adjudication.status != TripletAdjudication.Status.OPEN:
        raise ClaimsError("This dispute was already decided.")
    if not can_adjudicate(adjudicator, adjudication.turn.dialogue.project):
        raise ClaimsError("Only an adjudicator or a lead can decide disputes.")
    if Assignment.objects.filter(turn=adjudication.turn, annotator=adjudicator).exists():
        raise ClaimsError("You annotated this turn, so someone else must adjudicate it.")
    adjudication.status = TripletAdjudication.Status.RESOLVED
    adjudication.adjudicator = adjudicator
    adjudication.label = label.value
    adjudication.reason = reason
    adjudication.resolved_at = timezone.now()
    adjudication.save()
    return _set_triplet_gold(adjudication.triplet_id, label=label.value, provenance=GoldProvenance.ADJUDICATION,
                             actor=adjudicator, reason=reason)


@transaction.atomic
def triplet_gold_override(triplet: ClaimTriplet, lead, *, label: str, reason: str) -> TripletGold:
    """A lead sets a triplet's gold; an open dispute on it is closed by the same decision."""
    reason = _reason(reason)
    label = claims_rule(claims.parse_triplet_label, label)
    if not is_lead(lead, triplet.turn.dialogue.project):
        raise ClaimsError("Only a lead can override gold.")
    TripletAdjudication.objects.filter(triplet=triplet, status=TripletAdjudication.Status.OPEN).update(
        status=TripletAdjudication.Status.RESOLVED, adjudicator=lead, label=label.value,
        reason=f"Lead override: {reason}", resolved_at=timezone.now(),
    )
    return _set_triplet_gold(triplet.pk, label=label.value, provenance=GoldProvenance.OVERRIDE, actor=lead,
                             reason=reason)
