"""The qualification set is looked up on every Start: through its partial index, and not at all when the project
has none (issue 49).

The plans are read on the database the suite runs on: SQLite here, PostgreSQL in CI (.ci/run), each with its own
assertion.
"""

import pytest
from django.db import connection

from annotator.access import _PROJECT_WITH_ROLE, access_project
from annotator.domain.vocabulary import Role
from annotator.models import Dialogue, Turn
from annotator.qa import qualification as q
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, member
from tests.factories_qa import GoldLabelFactory, gold_turn

pytestmark = pytest.mark.django_db

WORK_TURNS = 3000


def _project_with_many_turns():
    """A project of ``WORK_TURNS`` one-turn dialogues, so that reading every turn and reading the index differ."""
    project = ProjectFactory()
    dialogues = Dialogue.objects.bulk_create(Dialogue(project=project, external_id=f"d{n}") for n in range(WORK_TURNS))
    Turn.objects.bulk_create(Turn(dialogue=dialogue, index=0, assistant_response="An answer.") for dialogue in dialogues)
    return project


def _gold_turn_of(dialogue, index):
    turn = TurnFactory(dialogue=dialogue, index=index, sentences=["One sentence."])
    GoldLabelFactory(sentence=turn.sentences.get(), label="faithful")
    return turn


def _plan(sql, params) -> str:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
            return "\n".join(row[-1] for row in cursor.fetchall())
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


def _assert_read_through_the_qualification_index(plan):
    if connection.vendor == "sqlite":
        # What SQLite did before: walk the (dialogue, index) index of every turn of the project.
        assert "USING INDEX turn_qualification" in plan or "USING COVERING INDEX turn_qualification" in plan, plan
        assert "sqlite_autoindex_annotator_turn" not in plan, plan
    else:
        assert connection.vendor == "postgresql"
        assert "turn_qualification" in plan, plan
        assert "Seq Scan on annotator_turn" not in plan, plan


@pytest.mark.parametrize("statistics", [False, True], ids=["no statistics", "analysed"])
def test_the_qualification_turns_and_whether_there_are_any_are_read_through_the_partial_index(statistics):
    project = _project_with_many_turns()
    other = _project_with_many_turns()
    lead = member(other, Role.LEAD)
    q.qualification_set(project=other, actor=lead, turn_ids=[gold_turn(other, ["faithful"]).pk], pass_mark=1.0)
    if statistics:
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    for searched in (project, other):
        _assert_read_through_the_qualification_index(_plan(q._QUALIFICATION_TURNS.sql, [searched.pk]))
        _assert_read_through_the_qualification_index(_plan(_PROJECT_WITH_ROLE.sql, [lead.pk, searched.slug]))


def test_a_project_without_a_qualification_set_answers_without_a_statement(django_assert_num_queries):
    project = ProjectFactory()
    TurnFactory(dialogue__project=project)
    annotator = member(project, Role.ANNOTATOR)
    read = access_project(annotator, project.slug)  # as every project page reads it (Start: next_item)
    with django_assert_num_queries(0):
        state = q.qualification_state(read, annotator)
    assert state.status == q.Status.NOT_REQUIRED and state.may_work


def test_the_set_is_found_with_the_project_and_listed_in_dialogue_then_turn_order(django_assert_num_queries):
    project = ProjectFactory()
    lead = member(project, Role.LEAD)
    annotator = member(project, Role.ANNOTATOR)
    dialogue = DialogueFactory(project=project)
    second_dialogue = gold_turn(project, ["faithful"])
    later = _gold_turn_of(dialogue, index=1)  # created first: the lower id
    earlier = _gold_turn_of(dialogue, index=0)
    assert dialogue.pk < second_dialogue.dialogue_id and later.pk < earlier.pk
    q.qualification_set(project=project, actor=lead, turn_ids=[t.pk for t in (second_dialogue, later, earlier)],
                        pass_mark=1.0)
    read = access_project(annotator, project.slug)
    state = q.qualification_state(read, annotator)
    assert state.status == q.Status.IN_PROGRESS
    assert state.turns_left == [earlier, later, second_dialogue]

    # A lead who empties the set in the same request: the project object knows, and asks nothing more.
    emptied = access_project(lead, project.slug)
    q.qualification_set(project=emptied, actor=lead, turn_ids=[], pass_mark=1.0)
    with django_assert_num_queries(0):
        assert q.qualification_turn_list(emptied) == []
