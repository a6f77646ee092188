"""A pytest-xdist worker works on its own copy of the run's migrated template (tests/database_template.py)."""

import os

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests import database_template

pytestmark = pytest.mark.django_db


def test_a_worker_of_a_parallel_run_works_on_its_own_complete_copy_of_the_template(request):
    if not database_template.in_use(request.config):
        pytest.skip("a serial run migrates its own database")
    run, worker = os.environ[database_template.RUN_VARIABLE], request.config.workerinput["workerid"]
    name = connection.settings_dict["NAME"]
    assert run in name and f"_{worker}" in name
    assert name != database_template.template_name(connection, run)
    executor = MigrationExecutor(connection)
    assert executor.migration_plan(executor.loader.graph.leaf_nodes()) == []  # every migration is applied
