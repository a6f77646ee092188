"""A lead's split while the turn's annotators save answers on the unit being split, all at the same moment.

Whatever the order the database lets them through (PostgreSQL: row locks; SQLite: IMMEDIATE transactions),
each answer is either saved before the split, and then removed by it and kept in its audit, or refused as
stale (the version every open slot of the turn moved to): no answer ends up on the changed unit, and none is
lost without a trace.
"""

import functools
import threading

import pytest

from annotator.corpus.units.services import unit_split
from annotator.domain.vocabulary import Role
from annotator.models import SegmentationChange, SentenceAnnotation
from annotator.work.services import annotation_answer_step
from annotator.work.write import VersionConflict
from tests.factories import AssignmentFactory, member
from tests.factories_workspace import NO_PASSWORD, project_with_turns
from tests.threads import run_at_once

TWO_IN_ONE = "The lighthouse was automated in 1984. The red and white bands were chosen because they show."
ANNOTATORS = 8


@pytest.mark.django_db(transaction=True)
def test_answers_racing_a_split_are_saved_then_kept_in_its_audit_or_refused_as_stale():
    project, (turn,) = project_with_turns(1, sentences=["It stands on the cape.", TWO_IN_ONE, "Hello there!"],
                                          overlap=ANNOTATORS)
    lead = member(project, Role.LEAD, password=NO_PASSWORD)
    people = [member(project, Role.ANNOTATOR, password=NO_PASSWORD) for _ in range(ANNOTATORS)]
    slots = [AssignmentFactory(turn=turn, annotator=person) for person in people]
    # One more annotator has the page open and answers only after the split: the page's copy is stale.
    late = AssignmentFactory(turn=turn, annotator=member(project, Role.ANNOTATOR, password=NO_PASSWORD))
    unit = turn.sentences.get(index=1)
    barrier = threading.Barrier(ANNOTATORS + 1)
    saved, refused = set(), set()

    def answer(slot):
        barrier.wait(30)
        try:
            annotation_answer_step(slot, unit, "relevance", "relevant", actor=slot.annotator,
                                   expected_version=slot.version)
            saved.add(slot.annotator.username)
        except VersionConflict:
            refused.add(slot.annotator.username)

    def split():
        barrier.wait(30)
        unit_split(turn, unit.pk, TWO_IN_ONE.index(" The red"), actor=lead, reset=False)

    failures = run_at_once(*(functools.partial(answer, slot) for slot in slots), split)
    assert not failures, failures
    assert saved | refused == {person.username for person in people} and not saved & refused
    assert turn.sentences.count() == 4
    assert not SentenceAnnotation.objects.filter(sentence__turn=turn).exists()
    change = SegmentationChange.objects.get()
    assert {record["owner"] for record in change.reset} == saved
    assert all(record["kind"] == "unsubmitted annotation" for record in change.reset)
    with pytest.raises(VersionConflict):
        annotation_answer_step(late, unit, "relevance", "relevant", actor=late.annotator, expected_version=late.version)


@pytest.mark.django_db(transaction=True)
def test_a_split_while_an_annotator_submits_the_turn_neither_deadlocks_nor_fails(monkeypatch):
    """The submit locks its assignment, then the turn (gold derivation); the split must take its locks in the
    same order, or each waits for the other (PostgreSQL aborts one: a 500 for the lead or the annotator)."""
    import time

    from annotator.work import services as work_services
    from annotator.work.services import assignment_submit
    from tests.factories_workspace import label_all

    project, (turn,) = project_with_turns(1, sentences=["It stands on the cape.", TWO_IN_ONE], overlap=2)
    lead = member(project, Role.LEAD, password=NO_PASSWORD)
    person = member(project, Role.ANNOTATOR, password=NO_PASSWORD)
    slot = label_all(AssignmentFactory(turn=turn, annotator=person), "faithful", person)
    unit = turn.sentences.get(index=1)
    lock_turn = work_services.turn_locked_with_project  # where the submit locks the turn (for its gold)
    assignment_locked = threading.Event()

    def slow_lock_turn(turn_id):
        assignment_locked.set()  # the submit holds its assignment's row now
        time.sleep(0.5)  # the split takes the turn meanwhile, if it locks the turn first
        return lock_turn(turn_id)

    monkeypatch.setattr(work_services, "turn_locked_with_project", slow_lock_turn)

    def submit():
        assignment_submit(slot, actor=person, expected_version=slot.version)

    def split():
        assignment_locked.wait(30)
        unit_split(turn, unit.pk, TWO_IN_ONE.index(" The red"), actor=lead, reset=True)

    failures = run_at_once(submit, split)
    assert not failures, failures
    assert turn.sentences.count() == 3
    # Submitted first, then the split reset it: the labels are in the split's audit, the slot open again.
    change = SegmentationChange.objects.get()
    assert {record["kind"] for record in change.reset} == {"submitted annotation"}


@pytest.mark.django_db(transaction=True)
def test_a_reset_while_an_adjudicator_resolves_a_dispute_of_the_turn_neither_deadlocks_nor_fails(monkeypatch):
    """Resolving locks the dispute, then the turn; a reset removes the turn's disputes after locking the turn.
    The reset must lock the disputes first, and the adjudicator is told the dispute went (not a 500)."""
    import time

    from annotator.corpus.units import services as unit_services
    from annotator.gold.services import GoldError, adjudication_resolve
    from annotator.models import Adjudication, GoldLabel
    from tests.factories_gold import submit

    project, (turn,) = project_with_turns(1, sentences=["It stands on the cape.", TWO_IN_ONE], overlap=2)
    lead = member(project, Role.LEAD, password=NO_PASSWORD)
    adjudicator = member(project, Role.ADJUDICATOR, password=NO_PASSWORD)
    a, b = (member(project, Role.ANNOTATOR, password=NO_PASSWORD) for _ in range(2))
    submit(turn, a, ["faithful", "faithful"])
    submit(turn, b, ["faithful", "invented"])
    unit = turn.sentences.get(index=1)
    dispute = Adjudication.objects.create(sentence=unit, turn=turn)
    dependents_of = unit_services.dependents_of
    turn_locked = threading.Event()

    def slow_dependents_of(*args):
        turn_locked.set()  # the reset holds the turn now
        time.sleep(0.5)  # the adjudicator's resolve starts meanwhile
        return dependents_of(*args)

    monkeypatch.setattr(unit_services, "dependents_of", slow_dependents_of)
    told = []

    def resolve():
        turn_locked.wait(30)
        try:
            adjudication_resolve(dispute, adjudicator, reason="The reference says so.", label="faithful")
        except GoldError as error:
            told.append(str(error))

    def split():
        unit_split(turn, unit.pk, TWO_IN_ONE.index(" The red"), actor=lead, reset=True)

    failures = run_at_once(split, resolve)
    assert not failures, failures
    assert turn.sentences.count() == 3
    assert told and "no longer exists" in told[0]
    assert not GoldLabel.objects.filter(sentence__turn=turn).exists()
