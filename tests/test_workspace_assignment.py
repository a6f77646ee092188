"""Who gets which turn: the pure strategy, then assignment_next on the database."""

import threading
from datetime import datetime, timedelta

import pytest
from django.db import connection, connections

from annotator.domain import assignment as strategy
from annotator.models import AnnotationEvent, Assignment, QualificationResult, Turn
from annotator.work.assignment import AssignmentError, assignment_next, assignment_reassign, assignment_release, assignment_release_stale, turn_slots_recount
from annotator.domain.vocabulary import Label, Role
from tests.factories import AssignmentFactory, DialogueFactory, TurnFactory, UserFactory, member
from tests.factories_workspace import annotators, label_all, project_with_turns
from annotator.work.services import assignment_submit


# --- the pure strategy ---------------------------------------------------------------------------

def test_choose_turn_takes_the_oldest_with_an_open_slot_never_seen():
    candidates = [strategy.Candidate(5, 0), strategy.Candidate(2, 2), strategy.Candidate(3, 1), strategy.Candidate(4, 0)]
    assert strategy.choose_turn(candidates, seen_turn_ids=[], overlap=2) == 3
    assert strategy.choose_turn(candidates, seen_turn_ids=[3], overlap=2) == 4
    assert strategy.choose_turn(candidates, seen_turn_ids=[3, 4, 5], overlap=2) is None
    assert strategy.choose_turn(candidates, seen_turn_ids=[], overlap=3) == 2


def test_unfinished_returns_the_oldest_pending_holding():
    t = datetime(2026, 1, 1)
    holdings = [
        strategy.Holding(1, 10, "submitted", t),
        strategy.Holding(2, 11, "in_progress", t + timedelta(hours=2)),
        strategy.Holding(3, 12, "assigned", t + timedelta(hours=1)),
    ]
    assert strategy.unfinished(holdings).assignment_id == 3
    assert strategy.unfinished(holdings[:1]) is None


def test_is_stale_uses_last_activity_and_ignores_finished_work():
    t = datetime(2026, 1, 1)
    idle = timedelta(hours=4)
    assert strategy.is_stale("assigned", None, t, t + idle, idle)
    assert not strategy.is_stale("in_progress", t + timedelta(hours=3), t, t + idle, idle)
    assert not strategy.is_stale("submitted", None, t, t + idle * 10, idle)


# --- assignment_next on the database -------------------------------------------------------------

@pytest.mark.django_db
def test_each_turn_goes_to_overlap_distinct_annotators_oldest_first():
    project, turns = project_with_turns(3)
    a, b, c = annotators(project, 3)
    first_a = assignment_next(project, a)
    assert first_a.turn_id == turns[0].pk
    # Until a finishes it, asking again returns the same assignment.
    assert assignment_next(project, a).pk == first_a.pk
    first_b = assignment_next(project, b)
    assert first_b.turn_id == turns[0].pk
    # Turn 0 is full (overlap 2): c gets turn 1.
    assert assignment_next(project, c).turn_id == turns[1].pk
    label_all(first_a, Label.FAITHFUL, a)
    assignment_submit(Assignment.objects.select_related("project").get(pk=first_a.pk), actor=a)
    # a never gets turn 0 again; next for a is the oldest open slot: turn 1.
    assert assignment_next(project, a).turn_id == turns[1].pk
    assert Turn.objects.get(pk=turns[0].pk).slots_taken == 2
    assert AnnotationEvent.objects.filter(action="assign").count() == 4


@pytest.mark.django_db
def test_no_work_left_returns_none_and_qualification_turns_are_never_handed_out():
    project, turns = project_with_turns(1)
    qualification = TurnFactory(dialogue=DialogueFactory(project=project), index=0, is_qualification=True)
    a, b, c = annotators(project, 3)
    for user in (a, b, c):  # qualified already, so only real work is due (see tests/test_qa_gating.py)
        QualificationResult.objects.create(project=project, annotator=user, passed=True, correct=1, total=1)
    assert assignment_next(project, a).turn_id == turns[0].pk
    label_all(Assignment.objects.get(annotator=a), Label.IRRELEVANT, a)
    assignment_submit(Assignment.objects.select_related("project").get(annotator=a), actor=a)
    assert assignment_next(project, a) is None
    assert assignment_next(project, b).turn_id == turns[0].pk
    assert assignment_next(project, c) is None
    assert not Assignment.objects.filter(turn=qualification).exists()


@pytest.mark.django_db
def test_a_wrong_slot_counter_never_overbooks_a_turn():
    project, turns = project_with_turns(2)
    a, b, c = annotators(project, 3)
    # Two slots created behind the services' back (the counter still says 0).
    AssignmentFactory(turn=turns[0], annotator=a)
    AssignmentFactory(turn=turns[0], annotator=b)
    assert assignment_next(project, c).turn_id == turns[1].pk
    assert Turn.objects.get(pk=turns[0].pk).slots_taken == 2


@pytest.mark.django_db
def test_turn_slots_recount_repairs_counters():
    project, turns = project_with_turns(2)
    a, = annotators(project, 1)
    AssignmentFactory(turn=turns[1], annotator=a)
    assert turn_slots_recount(project) == 1
    assert Turn.objects.get(pk=turns[1].pk).slots_taken == 1


@pytest.mark.django_db
def test_release_opens_the_slot_keeps_the_rows_and_the_holder_never_gets_it_back():
    project, turns = project_with_turns(1, overlap=1)
    a, b = annotators(project, 2)
    lead, = annotators(project, 1, Role.LEAD)
    held = assignment_next(project, a)
    assert assignment_next(project, b) is None
    released = assignment_release(held, actor=lead, reason="stale")
    assert released.status == Assignment.Status.RELEASED
    assert Turn.objects.get(pk=turns[0].pk).slots_taken == 0
    assert assignment_next(project, a) is None
    assert assignment_next(project, b).turn_id == turns[0].pk
    event = AnnotationEvent.objects.get(assignment=held, action="release")
    assert event.actor == lead and event.old == {"status": "assigned"}
    with pytest.raises(AssignmentError):
        assignment_release(released, actor=lead)


@pytest.mark.django_db
def test_reassign_moves_the_slot_to_someone_new_only():
    project, turns = project_with_turns(1)
    a, b, c = annotators(project, 3)
    lead, = annotators(project, 1, Role.LEAD)
    held_a = assignment_next(project, a)
    assignment_next(project, b)
    with pytest.raises(AssignmentError):
        assignment_reassign(held_a, b, actor=lead)
    moved = assignment_reassign(held_a, c, actor=lead)
    assert moved.annotator == c and moved.turn_id == turns[0].pk
    assert Assignment.objects.get(pk=held_a.pk).status == Assignment.Status.RELEASED
    assert Turn.objects.get(pk=turns[0].pk).slots_taken == 2


@pytest.mark.django_db
def test_release_stale_releases_only_idle_unfinished_work():
    project, turns = project_with_turns(2)
    a, b = annotators(project, 2)
    lead, = annotators(project, 1, Role.LEAD)
    old = assignment_next(project, a)
    Assignment.objects.filter(pk=old.pk).update(assigned_at=old.assigned_at - timedelta(days=2))
    assignment_next(project, b)
    assert assignment_release_stale(project, actor=lead, max_idle=timedelta(hours=24)) == 1
    assert Assignment.objects.get(pk=old.pk).status == Assignment.Status.RELEASED


# --- concurrency ---------------------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_never_hand_the_same_slot_to_two_people():
    """Eight threads at once (PostgreSQL: SKIP LOCKED row locks; SQLite: BEGIN IMMEDIATE)."""
    project, turns = project_with_turns(6, overlap=1)
    users = annotators(project, 6)
    same_user_twice = users[0]
    barrier = threading.Barrier(8)
    results, errors = [], []

    def ask(user):
        try:
            barrier.wait(timeout=30)
            results.append((user.pk, assignment_next(project, user).turn_id))
        except Exception as error:  # surfaced below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=ask, args=(u,)) for u in users + [same_user_twice, same_user_twice]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    assert len(results) == 8
    # Six people, six turns with one slot each: every turn went to exactly one person.
    by_turn = {}
    for user_id, turn_id in results:
        by_turn.setdefault(turn_id, set()).add(user_id)
    assert all(len(holders) == 1 for holders in by_turn.values())
    assert Assignment.objects.count() == 6
    assert Assignment.objects.filter(annotator=same_user_twice).count() == 1
    assert sorted(Turn.objects.values_list("slots_taken", flat=True)) == [1] * 6
