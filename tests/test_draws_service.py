"""Draws for human checks: recording them (refusals), drawing a job's turns, and the queue handing drawn turns
out first, in draw order, through the same race-free claim."""

import threading

import pytest
from django.db import connections

from annotator.corpus.draws.services import DrawError, draw_record
from annotator.domain.vocabulary import DrawStrategy, DrawnTurnReview, Label
from annotator.models import Assignment, DrawnTurn, Turn, TurnDraw
from annotator.work.assignment import assignment_next
from annotator.work.selectors import queue_for
from annotator.work.services import assignment_submit
from autolabel.checks.drawing import candidate_turn_ids, draw_for_job
from autolabel.models import AutoLabelJob
from tests.factories import member
from tests.factories_draws import SURE, finished_job
from tests.factories_workspace import annotators, label_all, project_with_turns

pytestmark = pytest.mark.django_db


def ids(turns):
    return [turn.pk for turn in turns]


# --- recording a draw ----------------------------------------------------------------------------

def test_a_draw_keeps_its_turns_in_the_order_given_with_how_and_by_whom():
    project, turns = project_with_turns(4)
    lead = member(project, "lead")
    order = [turns[2].pk, turns[0].pk, turns[3].pk]
    draw = draw_record(project, DrawStrategy.RANDOM, order, 2, 17, None, lead, "  a note ")
    assert (draw.strategy, draw.size, draw.seed, draw.created_by, draw.note) == ("random", 2, 17, lead, "a note")
    assert list(draw.drawn_turns.values_list("turn_id", "position")) == [(turns[2].pk, 0), (turns[0].pk, 1)]


@pytest.mark.parametrize("strategy, size, seed, message", [
    ("sideways", 1, 1, "Unknown strategy"),
    (DrawStrategy.RANDOM, 0, 1, "between 1 and"),
    (DrawStrategy.RANDOM, 10_001, 1, "between 1 and"),
    (DrawStrategy.RANDOM, 1, -1, "A seed is"),
    (DrawStrategy.RANDOM, 1, None, "records its seed"),
])
def test_malformed_draws_are_refused_with_a_reason(strategy, size, seed, message):
    project, turns = project_with_turns(1)
    with pytest.raises(DrawError, match=message):
        draw_record(project, strategy, ids(turns), size, seed, None, None)
    assert not TurnDraw.objects.exists()


def test_turns_of_another_project_and_qualification_turns_are_refused():
    project, turns = project_with_turns(2)
    other, other_turns = project_with_turns(1)
    with pytest.raises(DrawError, match=f"Turns {other_turns[0].pk} are not turns of this project"):
        draw_record(project, DrawStrategy.RANDOM, [turns[0].pk, other_turns[0].pk], 2, 1, None, None)
    with pytest.raises(DrawError, match="not turns of this project"):
        draw_record(project, DrawStrategy.RANDOM, [999_999], 1, 1, None, None)
    Turn.objects.filter(pk=turns[1].pk).update(is_qualification=True)
    with pytest.raises(DrawError, match="qualification set"):
        draw_record(project, DrawStrategy.UNCERTAINTY, ids(turns), 2, None, None, None)
    with pytest.raises(DrawError, match="no turn left"):
        draw_record(project, DrawStrategy.UNCERTAINTY, [], 2, None, None, None)
    assert not TurnDraw.objects.exists()


def test_a_turn_is_drawn_once_per_job_but_a_random_draw_may_take_a_turn_drawn_by_uncertainty():
    project, turns = project_with_turns(3)
    draw_record(project, DrawStrategy.UNCERTAINTY, [turns[0].pk], 1, None, 7, None)
    with pytest.raises(DrawError, match=f"Turns {turns[0].pk} were already drawn for this job"):
        draw_record(project, DrawStrategy.UNCERTAINTY, [turns[1].pk, turns[0].pk], 2, None, 7, None)
    # Another job may draw it; a random draw of the same job too (else it would not be random).
    draw_record(project, DrawStrategy.UNCERTAINTY, [turns[0].pk], 1, None, 8, None)
    draw_record(project, DrawStrategy.RANDOM, [turns[0].pk], 1, 5, 7, None)
    with pytest.raises(DrawError, match="already drawn for this job"):
        draw_record(project, DrawStrategy.RANDOM, [turns[0].pk], 1, 6, 7, None)
    assert TurnDraw.objects.count() == 3


# --- drawing a job's turns -----------------------------------------------------------------------

def test_a_random_draw_of_a_job_is_reproducible_from_its_recorded_seed_and_skips_turns_drawn_at_random():
    project, turns = project_with_turns(8)
    unpredicted = turns.pop()
    job = finished_job(project, {turn: SURE for turn in turns})
    first = draw_for_job(job, strategy=DrawStrategy.RANDOM, size=3)
    drawn = list(first.drawn_turns.values_list("turn_id", flat=True))
    assert first.seed is not None and first.source_job_id == job.pk and len(drawn) == 3
    assert unpredicted.pk not in drawn
    TurnDraw.objects.all().delete()
    again = draw_for_job(job, strategy=DrawStrategy.RANDOM, size=3, seed=first.seed)
    assert list(again.drawn_turns.values_list("turn_id", flat=True)) == drawn
    rest = draw_for_job(job, strategy=DrawStrategy.RANDOM, size=100, seed=1)
    assert sorted(rest.drawn_turns.values_list("turn_id", flat=True)) == sorted(set(ids(turns)) - set(drawn))
    with pytest.raises(DrawError, match="no turn left"):
        draw_for_job(job, strategy=DrawStrategy.RANDOM, size=1)


def test_an_uncertainty_draw_of_a_job_takes_the_smallest_vote_margins_first():
    project, turns = project_with_turns(4)
    job = finished_job(project, {
        turns[0]: [SURE, {"faithful": 3, "invented": 2}, SURE],                  # 1/5
        turns[1]: SURE,                                                          # 1
        turns[2]: [{"speculative": 2, "faithful": 2, "invented": 1}, SURE, SURE],  # 0
        turns[3]: {"invented": 3, "faithful": 2},                                # 1/5, after turn 0 by id
    })
    draw = draw_for_job(job, strategy=DrawStrategy.UNCERTAINTY, size=3, seed=99)
    assert draw.seed is None  # plays no part in an uncertainty draw
    assert list(draw.drawn_turns.values_list("turn_id", flat=True)) == [turns[2].pk, turns[0].pk, turns[3].pk]
    assert candidate_turn_ids(job, DrawStrategy.UNCERTAINTY) == [turns[1].pk]
    assert candidate_turn_ids(job, DrawStrategy.RANDOM) == ids(turns)


def test_only_a_finished_jobs_turns_are_drawn():
    project, turns = project_with_turns(2)
    job = finished_job(project, {turn: SURE for turn in turns}, status=AutoLabelJob.Status.RUNNING)
    with pytest.raises(DrawError, match="this job is running"):
        draw_for_job(job, strategy=DrawStrategy.RANDOM, size=1)
    empty = finished_job(project, {})
    with pytest.raises(DrawError, match="predicted no turn"):
        draw_for_job(empty, strategy=DrawStrategy.UNCERTAINTY, size=1)


# --- the queue -----------------------------------------------------------------------------------

def test_drawn_turns_come_first_in_draw_order_then_the_rest_oldest_first():
    project, turns = project_with_turns(6, overlap=1)
    draw_record(project, DrawStrategy.RANDOM, [turns[4].pk, turns[2].pk], 2, 1, None, None)
    draw_record(project, DrawStrategy.UNCERTAINTY, [turns[5].pk], 1, None, 3, None)
    people = annotators(project, 6)
    handed = [assignment_next(project, person).turn_id for person in people]
    assert handed == [turns[4].pk, turns[2].pk, turns[5].pk, turns[0].pk, turns[1].pk, turns[3].pk]


def test_under_double_review_a_drawn_turn_still_takes_the_projects_overlap():
    project, turns = project_with_turns(2)  # overlap 2, double review by default
    draw_record(project, DrawStrategy.RANDOM, [turns[1].pk], 1, 1, None, None)
    a, b, c = annotators(project, 3)
    assert [assignment_next(project, p).turn_id for p in (a, b, c)] == [turns[1].pk, turns[1].pk, turns[0].pk]


def test_under_single_review_a_drawn_turn_takes_one_annotator_and_the_queue_page_agrees():
    project, turns = project_with_turns(2, drawn_turn_review=DrawnTurnReview.SINGLE)
    draw_record(project, DrawStrategy.RANDOM, [turns[1].pk], 1, 1, None, None)
    a, b, c = annotators(project, 3)
    assert assignment_next(project, a).turn_id == turns[1].pk
    assert assignment_next(project, b).turn_id == turns[0].pk
    assert assignment_next(project, c).turn_id == turns[0].pk
    d, = annotators(project, 1)
    assert assignment_next(project, d) is None  # the drawn turn is not given a second annotator
    assert queue_for(project, d)["has_more_work"] is False


def test_a_turn_the_annotator_already_held_is_not_handed_again_because_it_was_drawn():
    project, turns = project_with_turns(2, overlap=2)
    a, = annotators(project, 1)
    first = assignment_next(project, a)
    label_all(first, Label.FAITHFUL, a)
    assignment_submit(Assignment.objects.get(pk=first.pk), actor=a)
    draw_record(project, DrawStrategy.RANDOM, [turns[0].pk], 1, 1, None, None)
    assert assignment_next(project, a).turn_id == turns[1].pk


@pytest.mark.django_db(transaction=True)
def test_concurrent_claims_of_drawn_turns_never_double_book_a_slot():
    project, turns = project_with_turns(4, overlap=2, drawn_turn_review=DrawnTurnReview.SINGLE)
    draw_record(project, DrawStrategy.RANDOM, [turns[3].pk, turns[1].pk, turns[2].pk], 3, 1, None, None)
    people = annotators(project, 6)
    barrier = threading.Barrier(len(people))
    results, errors = [], []

    def ask(user):
        try:
            barrier.wait(timeout=30)
            assignment = assignment_next(project, user)
            results.append(assignment.turn_id if assignment else None)
        except Exception as error:  # surfaced below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=ask, args=(person,)) for person in people]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors and len(results) == 6
    # Three drawn turns with one slot each, the undrawn turn with two: five slots for six people, so the
    # sixth finds nothing. Every drawn turn went to exactly one person.
    assert results.count(None) == 1
    counts = {turn.pk: results.count(turn.pk) for turn in turns}
    assert counts == {turns[0].pk: 2, turns[1].pk: 1, turns[2].pk: 1, turns[3].pk: 1}
    assert dict(Turn.objects.values_list("pk", "slots_taken")) == counts
    assert Assignment.objects.count() == 5


def test_a_drawn_turn_in_two_draws_is_handed_out_once_per_slot():
    project, turns = project_with_turns(2, overlap=1)
    draw_record(project, DrawStrategy.UNCERTAINTY, [turns[1].pk], 1, None, 1, None)
    draw_record(project, DrawStrategy.UNCERTAINTY, [turns[1].pk], 1, None, 2, None)
    a, b = annotators(project, 2)
    assert [assignment_next(project, p).turn_id for p in (a, b)] == [turns[1].pk, turns[0].pk]
    assert DrawnTurn.objects.filter(turn=turns[1]).count() == 2

