"""Gold labels: derived from agreement, decided by adjudication, overridden by a lead.

Every change to a sentence's gold writes a GoldEvent (old -> new, who, why), so
the history survives reopenings and overrides.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from ..domain.gold_paths import carried_walk, gold_path_problem
from ..domain.protocol.groups import reading
from ..domain.protocol.document import ProtocolError
from ..projects.protocol_mapping import version_carry
from ..projects.protocols import protocol_for
from ..access import can_adjudicate, is_lead
from ..models import Adjudication, AnnotationEvent, Assignment, EvidenceSpan, GoldEvent, GoldLabel, GoldVersion, Sentence, SentenceAnnotation
from ..domain.vocabulary import GoldProvenance
from ..fastsql.statements import row_update


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


def set_gold(sentence_id, *, label, path, provenance, actor=None, reason="", severity=None, error_type="",
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


def clear_gold(gold: GoldLabel, *, actor, reason):
    GoldEvent.objects.create(
        sentence_id=gold.sentence_id, old_label=gold.label, new_label="", provenance="", reason=reason, actor=actor
    )
    gold.delete()


def gold_version_bump(project_id: int) -> None:
    """Mark the project's gold as changed, so cached reports are recomputed."""
    if not row_update(GoldVersion, {}, {"project": project_id}, increment=("version",)):
        GoldVersion.objects.get_or_create(project_id=project_id)
        row_update(GoldVersion, {}, {"project": project_id}, increment=("version",))


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
    texts: dict[str, str] | None = None,
) -> GoldLabel:
    """Decide a disputed sentence: walk the protocol (``path``), name a ``label``, or side with an annotator.

    ``side`` is the assignment whose answer the adjudicator adopts. The reason is
    required. Someone who annotated the turn may not adjudicate it.
    ``texts``: the gold text of text steps (step -> text) the adjudicator wrote or picked from a side; it replaces
    the decision's own text there (text never decides gold: the label and the other steps are the decision's).
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
            # An answer of an older version: its label as the mapping carries it over, with every answer of its
            # walk that the current version still takes on the way to that label (domain.gold_paths).
            label = carry.carry(chosen.assignment.protocol_version_id, chosen.label)
            if label is None:
                raise GoldError(f"That annotator's label {chosen.label!r} (an older protocol version) does not carry "
                                "over to the current version: walk the protocol or name a label instead.")
            path = carried_walk(protocol, label, chosen.path)
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
        # The walk itself (a label may have two), with its steps' values as the protocol checked them (a list, a
        # point, a text: issue 42); a choice answer is its string, as it always was.
        path = {str(step): value for step, value in path.items()}
    else:
        label = known_label(protocol, label)
        path = protocol.path_for_label(label) or {}
    if texts:
        path = with_gold_texts(protocol, label, path, texts)
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
    return set_gold(
        adjudication.sentence_id,
        label=str(label),
        path=path,
        provenance=GoldProvenance.ADJUDICATION,
        actor=adjudicator,
        reason=reason,
        severity=chosen.severity if chosen else None,
        error_type=chosen.error_type if chosen else "",
    )


def with_gold_texts(protocol, label, path: dict, texts: dict[str, str]) -> dict:
    """``path`` with the adjudicator's gold text at each of ``texts``' steps, checked by the protocol (a text step
    the walk does not reach, a text too long, a NUL are refused)."""
    path = dict(path)
    for step, text in texts.items():
        if step not in protocol.kind_steps() or protocol.step_kind(step) != "text":
            raise GoldError(f"{step!r} is not a text step of this project's protocol.")
        path[step] = text
    path = protocol.ordered(path)
    # A gold path, as every gold's (domain.gold_paths): a side's walk that lacks a step stays valid with its text.
    problem = gold_path_problem(protocol, label, path)
    if problem is not None:
        raise GoldError(problem)
    return path


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
    return set_gold(
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
    return set_gold(sentence.pk, label=gold.label, path=gold.path, provenance=gold.provenance, actor=lead,
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
        clear_gold(gold, actor=lead, reason=cleared_because)
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
