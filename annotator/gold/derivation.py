"""Gold from the annotators: once a turn's annotators have all submitted, each sentence gets gold or a dispute.

The rule is ``domain.gold`` (``decide_turn``, ``decide_reviewed_turn``); this module reads the answers, the
gold already decided and the open disputes, and writes the decision. It runs inside every submission of real
work (``work.services.assignment_submit``), so it reads and writes a turn in a fixed number of statements: the
turn locked with its project, the submitted slots, and once the turn is complete its answers, its gold, its
open disputes and its sentences, then the new gold rows, their history and the disputes each in one insert.
Every change of a sentence's gold still has its GoldEvent (old -> new, who, why).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache

from django.db import transaction

from ..corpus.turn_lock import turn_locked_with_project
from ..domain import gold as gold_rules
from ..domain.gold_kinds import agreement_holds
from ..domain.vocabulary import DrawnTurnReview, GoldProvenance, ImportedGold
from ..fastsql.compiled import CompiledQuery
from ..fastsql.joined import JoinedSelect
from ..fastsql.statements import rows_insert
from ..models import Adjudication, Assignment, DrawnTurn, GoldEvent, GoldLabel, Sentence, SentenceAnnotation, Turn
from ..projects.protocol_mapping import carried_note, carry_for_slots
from ..projects.protocols import protocol_for
from .services import FOLLOWS_ANSWERS, clear_gold, gold_version_bump, set_gold

# The turn's submitted slots of real work, in the order they were submitted (written once: every submission reads it).
_SUBMITTED_WORK = JoinedSelect(Assignment, "a", joins=[], extra_columns=[],
                               where="a.turn_id = %s AND a.is_qualification = %s AND a.status = %s "
                                     "ORDER BY a.submitted_at, a.id")
# What a submission that completes its turn reads and writes, compiled once per process from the querysets that
# define it (fastsql; the ORM compiled each anew at every such submission, a tenth of the annotation flow's CPU).
_GOLD_OF_TURN = JoinedSelect(GoldLabel, "g", joins=[], extra_columns=[], where=(
    f"g.sentence_id IN (SELECT s.id FROM {Sentence._meta.db_table} s WHERE s.turn_id = %s)"))
_OPEN_DISPUTES_OF_TURN = CompiledQuery(lambda turn_id: Adjudication.objects.filter(
    turn_id=turn_id, status=Adjudication.Status.OPEN).values_list("sentence_id"), "turn_id")
_SENTENCES_OF_TURN = CompiledQuery(lambda turn_id: Sentence.objects.filter(turn_id=turn_id).values_list("id"), "turn_id")
_GOLD_FIELDS, _GOLD_EVENT_FIELDS, _DISPUTE_FIELDS = (
    tuple(f.name for f in model._meta.concrete_fields if not f.primary_key) for model in (GoldLabel, GoldEvent, Adjudication))


@lru_cache(maxsize=16)
def _answers_of_slots(count: int, walks: bool) -> CompiledQuery:
    """The answers of ``count`` slots, in the order they were given: a statement per number of slots (and with
    their walks only for a protocol with multiple, scale or text steps: no JSON read where the label decides)."""
    names = [f"slot_{position}" for position in range(count)]
    path = ("path",) if walks else ()
    return CompiledQuery(lambda **slots: SentenceAnnotation.objects.filter(assignment__in=[slots[name] for name in names])
                         .order_by("pk").values_list("sentence_id", "assignment_id", "label", "severity", "error_type",
                                                     *path),
                         *names)


@dataclass
class DeriveResult:
    complete: bool = False
    agreed: list[int] = field(default_factory=list)
    disputed: list[int] = field(default_factory=list)


@dataclass
class _TurnGold:
    """The gold a turn's sentences have now, read once: by sentence, and the sentences waiting in a dispute."""

    by_sentence: dict[int, GoldLabel]
    in_dispute: set[int]

    def settled(self) -> set[int]:
        """Sentences whose gold the project decided (or that wait in an open dispute): imported gold is not."""
        return {sentence_id for sentence_id, gold in self.by_sentence.items()
                if gold.provenance != GoldProvenance.IMPORTED} | self.in_dispute

    def imported(self) -> dict[int, str]:
        return {sentence_id: gold.label for sentence_id, gold in self.by_sentence.items()
                if gold.provenance == GoldProvenance.IMPORTED}

    def with_provenance(self, provenance) -> dict[int, GoldLabel]:
        return {sentence_id: gold for sentence_id, gold in self.by_sentence.items() if gold.provenance == provenance}


@transaction.atomic(savepoint=False)
def gold_derive_for_turn(turn: Turn, *, locked: bool = False) -> DeriveResult:
    """Compare the annotators of a fully annotated turn and give each sentence gold or a dispute.

    Runs once all ``project.overlap`` (non-qualification) assignments of the turn
    are submitted; before that, and for qualification turns, it does nothing. A turn
    drawn for human checks under single review (``Project.drawn_turn_review``) needs
    one submission: its labels become gold with provenance REVIEW.
    Sentences that already have gold keep it, and a sentence with an open
    adjudication gets no second one, so calling it again changes nothing.

    ``locked``: ``turn`` is the caller's ``turn_locked_with_project`` in this transaction (not locked again).
    No savepoint of its own: gold is decided with the write that completed the turn, so a failure here rolls
    back the caller's whole transaction, as every caller wants.
    """
    if not locked:
        turn = turn_locked_with_project(turn.pk)
    project = turn.dialogue.project
    result = DeriveResult()
    if turn.is_qualification:
        return result
    assignments = [found for found, _ in _SUBMITTED_WORK.fetch_all([turn.pk, False, Assignment.Status.SUBMITTED])]
    single_review = (project.drawn_turn_review == DrawnTurnReview.SINGLE
                     and DrawnTurn.objects.filter(turn=turn, draw__project=project).exists())
    if gold_rules.decided_by_review(len(assignments), project.overlap, single_review):
        return _gold_from_review(turn, project, assignments[0])
    if not gold_rules.turn_is_complete(len(assignments), project.overlap):
        return result
    result.complete = True
    protocol = protocol_for(project)
    answers, note = _answers_as_current(project, assignments, walks=bool(protocol.kind_steps()))
    current = _turn_gold(turn)
    _clear_agreement_that_no_longer_holds(protocol, current, answers)
    # One annotator's review gold does not settle a turn that several annotators completed: they decide it
    # (a disagreement with the reviewer is a dispute, not hidden behind the reviewer's label).
    reviewed = current.with_provenance(GoldProvenance.REVIEW)
    settled = current.settled() - set(reviewed)
    decision = gold_rules.decide_turn(protocol, _sentence_ids(turn), answers, len(assignments), settled,
                                      current.imported(), imported_is_final=project.imported_gold == ImportedGold.FINAL)
    _write_gold(current, decision.agreed, note, GoldProvenance.AGREEMENT, actor=None)
    result.agreed.extend(agreed.sentence_id for agreed in decision.agreed)
    for sentence_id in decision.disputed:
        if sentence_id in reviewed:
            clear_gold(reviewed[sentence_id], actor=None,
                       reason="The turn's annotators disagree with the single review: adjudication decides.")
    if decision.disputed:
        rows_insert([Adjudication(sentence_id=sentence_id, turn=turn) for sentence_id in decision.disputed],
                     _DISPUTE_FIELDS)
    result.disputed.extend(decision.disputed)
    if result.agreed or result.disputed:
        gold_version_bump(project.pk)
    return result


def _answers_as_current(project, assignments, walks: bool) -> tuple[dict[int, list[gold_rules.GivenAnswer]], str]:
    """Each sentence's answers as labels of the project's current protocol version, and a note for gold's reason
    (projects.protocol_mapping: an answer whose label does not carry over is left out, so the sentence is disputed)."""
    carry = carry_for_slots(project, assignments)
    version_of = {assignment.pk: assignment.protocol_version_id for assignment in assignments}
    answers: dict[int, list[gold_rules.GivenAnswer]] = {}
    slots = {f"slot_{position}": assignment_id for position, assignment_id in enumerate(version_of)}
    for sentence_id, assignment_id, label, severity, error_type, *path in (
            _answers_of_slots(len(slots), walks).fetch_all(**slots)):
        older = carry is not None and carry.is_older(version_of[assignment_id])
        label = carry.carry(version_of[assignment_id], label) if carry else label
        # The walk of an older version is not compared step by step (its multiple, scale or text steps may have
        # changed): the label carries over, the walk does not.
        path = _stored_walk(path[0]) if path and not older else {}
        if label is not None:
            answers.setdefault(sentence_id, []).append(gold_rules.GivenAnswer(label, severity, error_type, path))
    return answers, carried_note(carry, assignments)


def _stored_walk(stored) -> dict:
    """A walk as the raw statement returns it: decoded by the driver (PostgreSQL's jsonb) or JSON text (SQLite)."""
    if isinstance(stored, (str, bytes)):
        try:
            stored = json.loads(stored)
        except ValueError:
            return {}
    return stored if isinstance(stored, dict) else {}


def _turn_gold(turn: Turn) -> _TurnGold:
    gold = {found.sentence_id: found for found, _ in _GOLD_OF_TURN.fetch_all([turn.pk])}
    in_dispute = {sentence_id for (sentence_id,) in _OPEN_DISPUTES_OF_TURN.fetch_all(turn_id=turn.pk)}
    return _TurnGold(gold, in_dispute)


def _sentence_ids(turn: Turn) -> list[int]:
    return [sentence_id for (sentence_id,) in _SENTENCES_OF_TURN.fetch_all(turn_id=turn.pk)]


def _clear_agreement_that_no_longer_holds(protocol, current: _TurnGold, answers: dict) -> None:
    """Gold by agreement whose annotators no longer all give its label, or its value at a multiple or scale step
    (domain.gold_kinds.agreement_holds) (a reset of the turn's units reopened
    their slots and one of them changed an answer on a unit it kept, or a third annotator came with a raised
    overlap) is cleared, in gold's history, so that the unit is decided again like any other. Gold an
    adjudicator, a lead or an import decided stays: it never rested on the annotators agreeing."""
    for sentence_id, gold in current.with_provenance(GoldProvenance.AGREEMENT).items():
        given = answers.get(sentence_id, [])
        if not agreement_holds(protocol, gold.label, gold.path, [a.path for a in given], [a.label for a in given]):
            clear_gold(gold, actor=None, reason="The annotators' answers changed since they agreed: decided again.")
            del current.by_sentence[sentence_id]


def _write_gold(current: _TurnGold, decided: list[gold_rules.AgreedGold], note: str, provenance, *, actor) -> None:
    """The gold of each of ``decided`` (its reason followed by ``note``) and its GoldEvent: new gold rows and the
    events each in one insert; a sentence that had gold (imported, or a review the annotators now decide) has it
    replaced."""
    new, events = [], []
    for gold in decided:
        fields = {"label": gold.label, "path": gold.path, "reason": gold.reason + note, "severity": gold.severity,
                  "error_type": gold.error_type}
        if gold.sentence_id in current.by_sentence:
            set_gold(gold.sentence_id, provenance=provenance, actor=actor, **fields)
            continue
        new.append(GoldLabel(sentence_id=gold.sentence_id, provenance=provenance, decided_by=actor, **fields))
        events.append(GoldEvent(sentence_id=gold.sentence_id, old_label="", new_label=gold.label,
                                provenance=provenance, reason=fields["reason"], actor=actor))
    if new:
        rows_insert(new, _GOLD_FIELDS)
        rows_insert(events, _GOLD_EVENT_FIELDS)


def _gold_from_review(turn: Turn, project, assignment: Assignment) -> DeriveResult:
    """A drawn turn under single review: the one annotator's labels become gold (provenance REVIEW)."""
    result = DeriveResult(complete=True)
    protocol = protocol_for(project)
    given, note = _answers_as_current(project, [assignment], walks=bool(protocol.kind_steps()))
    answers = {sentence_id: answer[0] for sentence_id, answer in given.items()}
    current = _turn_gold(turn)
    reviewed = gold_rules.decide_reviewed_turn(
        protocol, _sentence_ids(turn), answers, current.settled(), current.imported(),
        imported_is_final=project.imported_gold == ImportedGold.FINAL)
    _write_gold(current, reviewed, note, GoldProvenance.REVIEW, actor=assignment.annotator)
    result.agreed.extend(gold.sentence_id for gold in reviewed)
    if result.agreed:
        gold_version_bump(project.pk)
    return result


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
        clear_gold(gold, actor=actor, reason=reason)
    Adjudication.objects.filter(sentence=sentence, status=Adjudication.Status.OPEN).delete()
    gold_version_bump(sentence.turn.dialogue.project_id)
    return gold_derive_for_turn(sentence.turn)
