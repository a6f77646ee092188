"""Every write about a turn's units: an annotator's flag, a lead's dismissal, split and merge.

A split or merge (``unit_split``, ``unit_merge``) runs in one transaction that first locks every assignment
and dispute of the turn, the turn and the turn's units, in that order: the order of the other writers (an
annotator's write locks its assignment, then a submit's gold derivation the turn; resolving a dispute locks
it, then the turn), so none of them can attach a label or gold to a unit being replaced, nor deadlock with
the change. The change then bumps the version of every live assignment of the turn: a page still showing the
old units is told its copy is stale at its next save (a 409) and reloads, instead of saving onto a unit that
is gone. Units the change does not touch keep their ids and everything on them; the rules of the change
itself are ``domain/units.py``, what depends on a unit ``unit_dependents.py``.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotator.domain import units as rules
from annotator.domain.vocabulary import UnitFlagKind
from annotator.gold.services import gold_version_bump
from annotator.models import (Adjudication, AnnotationEvent, Assignment, ClaimTriplet, GoldEvent, Question,
                      SegmentationChange, Sentence, Turn, UnitFlag)
from annotator.corpus.units.dependents import dependents_of, dependents_remove

# Added to the indices being moved, so that renumbering never meets the unique (turn, index) constraint halfway.
_INDEX_SHIFT = 1_000_000


class UnitError(Exception):
    """A flag, split or merge that cannot be made; the message is shown to the person who asked."""


class DependentsRefused(UnitError):
    """The units to change carry labels, gold or pre-labels, and the lead did not ask for a reset."""

    def __init__(self, message: str, dependents):
        super().__init__(message)
        self.dependents = dependents


# --- an annotator's flag ------------------------------------------------------------------------------------

def unit_flag_save(assignment: Assignment, sentence: Sentence, *, kind: str, note: str, user) -> UnitFlag:
    """Flag ``sentence`` as mis-segmented, or change the open flag the user already has on it."""
    if kind not in UnitFlagKind.values:
        raise UnitError("Choose what is wrong with the unit: two sentences, not a sentence, or other.")
    if sentence.turn_id != assignment.turn_id:
        raise UnitError("That unit is not part of this turn.")
    if assignment.status == Assignment.Status.RELEASED:
        raise UnitError("This assignment was released by a project lead: its units can no longer be flagged.")
    note = (note or "").strip()
    if kind == UnitFlagKind.OTHER and not note:
        raise UnitError("Say in the note what is wrong with the unit.")
    for _ in range(2):  # a second request for the same unit may create the flag first: then it is edited
        flag = UnitFlag.objects.filter(sentence=sentence, flagged_by=user, status=UnitFlag.Status.OPEN).first()
        if flag is not None:
            flag.kind, flag.note = kind, note
            flag.save(update_fields=["kind", "note"])
            return flag
        try:
            with transaction.atomic():
                return UnitFlag.objects.create(turn_id=sentence.turn_id, sentence=sentence, sentence_index=sentence.index,
                                               sentence_text=sentence.text, kind=kind, note=note, flagged_by=user)
        except IntegrityError:
            continue
    raise UnitError("The flag could not be saved; try again.")


def unit_flag_dismiss(flag: UnitFlag, *, lead, resolution: str) -> UnitFlag:
    """A lead closes a flag without changing the units, saying why."""
    resolution = (resolution or "").strip()
    if not resolution:
        raise UnitError("Say why the flag is dismissed: the annotator reads it.")
    updated = UnitFlag.objects.filter(pk=flag.pk, status=UnitFlag.Status.OPEN).update(
        status=UnitFlag.Status.DISMISSED, resolved_by=lead, resolved_at=timezone.now(), resolution=resolution)
    if not updated:
        raise UnitError("This flag was already resolved or dismissed.")
    flag.refresh_from_db()
    return flag


# --- a lead's split and merge -------------------------------------------------------------------------------

def unit_split(turn: Turn, sentence_id: int, offset: int, *, actor, reset: bool, reason: str = "") -> SegmentationChange:
    """Split the unit ``sentence_id`` at ``offset`` (characters into its text, snapped to a gap between words)."""
    with transaction.atomic():
        turn, units, unit = _lock(turn, sentence_id)
        before = _as_units(units)
        try:
            after = rules.split_unit(before, turn.assistant_response, unit.index, offset)
        except rules.SegmentationError as error:
            raise UnitError(str(error)) from None
        first, second = after[unit.index], after[unit.index + 1]
        removed = _clear_dependents(turn, [unit], actor=actor, reset=reset, what=f"Unit {unit.index + 1} cannot be split")
        _shift(turn, above=unit.index, by=1)
        Sentence.objects.filter(pk=unit.pk).update(start=first.start, end=first.end, text=first.text)
        Sentence.objects.create(turn=turn, index=second.index, start=second.start, end=second.end, text=second.text)
        _resolve_flags([unit], actor, f"Split into units {first.index + 1} and {second.index + 1}.")
        return _record(turn, SegmentationChange.Action.SPLIT, before, after, removed, actor, reason)


def unit_merge(turn: Turn, sentence_id: int, *, actor, reset: bool, reason: str = "") -> SegmentationChange:
    """Merge the unit ``sentence_id`` with the next unit of the turn."""
    with transaction.atomic():
        turn, units, unit = _lock(turn, sentence_id)
        before = _as_units(units)
        try:
            after = rules.merge_with_next(before, turn.assistant_response, unit.index)
        except rules.SegmentationError as error:
            raise UnitError(str(error)) from None
        following = units[unit.index + 1]
        removed = _clear_dependents(turn, [unit, following], actor=actor, reset=reset,
                                    what=f"Units {unit.index + 1} and {following.index + 1} cannot be merged")
        # The merged unit keeps the first unit's id; what was said about the second one (questions, claim
        # triplets, the annotation and gold history) is about part of the merged unit: it moves there.
        for model in (Question, ClaimTriplet, AnnotationEvent, GoldEvent):
            model.objects.filter(sentence_id=following.pk).update(sentence_id=unit.pk)
        _resolve_flags([unit, following], actor, f"Merged units {unit.index + 1} and {following.index + 1} "
                                                  f"into unit {unit.index + 1}.")
        following.delete()
        merged = after[unit.index]
        Sentence.objects.filter(pk=unit.pk).update(start=merged.start, end=merged.end, text=merged.text)
        _shift(turn, above=following.index, by=-1)
        return _record(turn, SegmentationChange.Action.MERGE, before, after, removed, actor, reason)


def _lock(turn: Turn, sentence_id: int):
    """Lock the turn's assignments and disputes, the turn and its units (in that order); the unit, or UnitError.

    Assignments before the turn, as every write of an annotator does (``work/write.py`` locks the assignment,
    then a submit's gold derivation the turn): the other order deadlocks a split with a submit."""
    assignments = Assignment.objects.select_for_update().filter(turn_id=turn.pk).order_by("pk")
    list(assignments.values_list("pk", flat=True))
    # The turn's disputes too, before the turn: resolving one locks it, then the turn; a reset removes them.
    list(Adjudication.objects.select_for_update().filter(turn_id=turn.pk).order_by("pk").values_list("pk", flat=True))
    # Only the turn's row: rows of the dialogue and project stay free for the project's other work.
    turn = Turn.objects.select_for_update(of=("self",)).select_related("dialogue__project").get(pk=turn.pk)
    list(assignments.values_list("pk", flat=True))  # and a slot claimed meanwhile (a claim locks the turn)
    units = list(Sentence.objects.select_for_update().filter(turn=turn).order_by("index"))
    unit = next((u for u in units if u.pk == sentence_id), None)
    if unit is None:
        raise UnitError("That unit is not part of this turn (it may have just been split or merged).")
    return turn, units, unit


def _as_units(units) -> list[rules.Unit]:
    return [rules.Unit(u.index, u.start, u.end, u.text) for u in units]


def _clear_dependents(turn: Turn, units, *, actor, reset: bool, what: str) -> list[dict]:
    """Remove what depends on ``units`` (refused without ``reset`` when labels, gold or pre-labels do)."""
    project = turn.dialogue.project
    found = dependents_of(project, units)
    if found.blocking and not reset:
        raise DependentsRefused(
            f"{what}: {found.summary()} depend on {'it' if len(units) == 1 else 'them'}. Tick “reset this turn's "
            "annotations” to remove them (they are kept in the audit) and send the turn back to its annotators.",
            found)
    removed = found.blocking + found.unsubmitted
    because = f"Removed by {actor.get_username()}'s change of the turn's units."
    if removed:
        dependents_remove(project, units, found, actor=actor, because=because)
    if reset and found.blocking:
        _reopen_submitted(turn, actor, because)
    return removed


def _reopen_submitted(turn: Turn, actor, because: str) -> None:
    """After a reset, every submitted slot of the turn is open again, because its annotator must label the new
    units; what they and the adjudicator decided on the units the change did not touch stays: their labels, the
    gold (agreement, adjudication, override, imported), resolved and open disputes. When they submit again, the
    new units are decided, and a unit whose agreement no longer holds (an annotator changed their label
    meanwhile) is decided again (``gold_derive_for_turn``). Each reopening is in the slot's audit."""
    for assignment in Assignment.objects.filter(turn=turn, status=Assignment.Status.SUBMITTED):
        AnnotationEvent.objects.create(assignment=assignment, actor=actor, action="segmentation_reset",
                                       old={"status": assignment.status},
                                       new={"status": Assignment.Status.IN_PROGRESS, "reason": because})
    Assignment.objects.filter(turn=turn, status=Assignment.Status.SUBMITTED).update(
        status=Assignment.Status.IN_PROGRESS, submitted_at=None)


def _shift(turn: Turn, *, above: int, by: int) -> None:
    """Renumber the units after index ``above`` by ``by``, in two steps (the unique (turn, index) constraint)."""
    Sentence.objects.filter(turn=turn, index__gt=above).update(index=F("index") + _INDEX_SHIFT)
    Sentence.objects.filter(turn=turn, index__gte=_INDEX_SHIFT).update(index=F("index") - _INDEX_SHIFT + by)


def _resolve_flags(units, actor, resolution: str) -> None:
    UnitFlag.objects.filter(sentence__in=units, status=UnitFlag.Status.OPEN).update(
        status=UnitFlag.Status.RESOLVED, resolved_by=actor, resolved_at=timezone.now(), resolution=resolution)


def _record(turn, action, before, after, removed, actor, reason) -> SegmentationChange:
    # Every open page of the turn shows the old units: its next save is refused as stale and it reloads.
    Assignment.objects.filter(turn=turn).update(version=F("version") + 1)
    gold_version_bump(turn.dialogue.project_id)  # the reports count units: cached figures are stale
    return SegmentationChange.objects.create(
        turn=turn, action=action, before=[u.as_dict() for u in before], after=[u.as_dict() for u in after],
        reset=removed, reason=(reason or "").strip(), actor=actor)
