"""Statements compiled once from querysets (annotator.fastsql.compiled) give what the querysets give."""

import pytest

from annotator.fastsql.compiled import CompiledQuery, ComposedSelect, count_of, exists_of, first_of
from annotator.models import Assignment, Turn
from tests.factories import AssignmentFactory, ProjectFactory
from tests.factories_workspace import project_with_turns

pytestmark = pytest.mark.django_db


def test_each_run_binds_its_own_values_where_the_querysets_had_them():
    project, turns = project_with_turns(3)
    Turn.objects.filter(pk=turns[0].pk).update(slots_taken=2)
    Turn.objects.filter(pk=turns[1].pk).update(slots_taken=1)
    AssignmentFactory(turn=turns[0])
    AssignmentFactory(turn=turns[0])
    # slots_taken is a small integer column: on PostgreSQL Django wraps its value (Int2), which is bound all the same.
    open_turns = CompiledQuery(lambda project_id, below: Turn.objects.filter(
        dialogue__project_id=project_id, slots_taken__lt=below).order_by("id").values_list("id", "slots_taken"),
        "project_id", "below")
    for below in (0, 1, 2, 3):
        expected = list(Turn.objects.filter(dialogue__project_id=project.pk, slots_taken__lt=below).order_by("id")
                        .values_list("id", "slots_taken"))
        assert open_turns.fetch_all(project_id=project.pk, below=below) == expected

    per_turn = ComposedSelect(lambda turn_id: [
        count_of(Assignment.objects.filter(turn_id=turn_id)), exists_of(Assignment.objects.filter(turn_id=turn_id)),
        first_of(Assignment.objects.filter(turn_id=turn_id).order_by("id").values_list("id"))], "turn_id")
    first = Assignment.objects.filter(turn=turns[0]).order_by("id").first()
    assert per_turn.fetch_one(turn_id=turns[0].pk) == (2, True, first.pk)
    assert per_turn.fetch_one(turn_id=turns[2].pk) == (0, False, None)


def test_a_statement_whose_shape_depends_on_a_value_is_refused():
    shifting = CompiledQuery(lambda limit: Turn.objects.values_list("id")[:limit], "limit")
    with pytest.raises(ValueError):
        shifting.fetch_all(limit=3)


def test_the_qualification_turns_written_once_are_the_querysets_in_its_order():
    from annotator.qa.qualification import qualification_turn_list, qualification_turns

    project, turns = project_with_turns(4)
    _, others = project_with_turns(2)
    Turn.objects.filter(pk__in=[turns[2].pk, turns[0].pk, turns[3].pk, others[0].pk]).update(is_qualification=True)
    listed = qualification_turn_list(project)
    assert listed == list(qualification_turns(project)) and [t.pk for t in listed] == [
        turns[0].pk, turns[2].pk, turns[3].pk]
    assert qualification_turn_list(ProjectFactory()) == []
