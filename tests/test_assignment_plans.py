"""Start finds the next open turn through the partial index ``turn_open_slots``, without first reading every
dialogue of the project (issue 49). The plans are read on the database the suite runs on: SQLite here,
PostgreSQL in CI (.ci/run)."""

import pytest
from django.db import connection

from annotator.domain.vocabulary import Role
from annotator.models import Turn
from annotator.work import assignment
from tests.factories import member
from tests.test_qualification_plans import _plan, _project_with_many_turns

pytestmark = pytest.mark.django_db


def _pool_sql(project, user):
    """The statement and parameters of the pool of ordinary turns (``candidate_turns``), as Start runs it."""
    locking = assignment._SKIP_LOCKED if connection.features.has_select_for_update_skip_locked else assignment._UNLOCKED
    statement = assignment._pool_statement(1, project.drawn_turn_review, locking)
    seen = []
    with connection.execute_wrapper(lambda execute, sql, params, many, context: (
            seen.append((sql, params)), execute(sql, params, many, context))[1]):
        rows = statement.fetch_all(project_id=project.pk, user_id=user.pk, overlap=project.overlap)
    assert rows, "the project has open turns"
    return seen[0]


@pytest.mark.parametrize("statistics", [False, True], ids=["no statistics", "analysed"])
def test_the_next_open_turn_is_read_through_its_partial_index_alone(statistics):
    project = _project_with_many_turns()
    other = _project_with_many_turns()  # another project's turns in the same tables
    for each in (project, other):  # as in a project under way (bench/workspace.py): the older turns are full
        older = Turn.objects.filter(dialogue__project=each).order_by("pk").values_list("pk", flat=True)[:2000]
        Turn.objects.filter(pk__in=list(older)).update(slots_taken=2)
    annotator = member(project, Role.ANNOTATOR)
    if statistics:
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    plan = _plan(*_pool_sql(project, annotator))
    if connection.vendor == "sqlite":
        assert "USING INDEX turn_open_slots" in plan, plan
        # Joined to the dialogues, SQLite built a Bloom filter of every dialogue of the project first.
        assert "BLOOM FILTER" not in plan and "annotator_dialogue_project_id" not in plan, plan
    else:
        assert connection.vendor == "postgresql"
        assert "turn_open_slots" in plan and "Seq Scan on annotator_turn" not in plan, plan
