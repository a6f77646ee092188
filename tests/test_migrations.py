"""The migration history stays one line per app and matches the models: no merge tangles, nothing unmade."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.loader import MigrationLoader

APPS = ("annotator", "autolabel")


@pytest.mark.django_db
def test_each_app_has_one_line_of_migrations():
    loader = MigrationLoader(connection, ignore_no_migrations=True)
    for app in APPS:
        leaves = loader.graph.leaf_nodes(app)
        assert len(leaves) == 1, f"{app} has {len(leaves)} leaf migrations {leaves}: make one line (no merge migrations)"
        names = [name for (label, name) in loader.disk_migrations if label == app]
        assert not [n for n in names if "merge" in n], f"{app}: merge migrations {names}"


@pytest.mark.django_db
def test_the_models_need_no_migration_that_is_not_made():
    out = StringIO()
    try:
        call_command("makemigrations", *APPS, "--check", "--dry-run", stdout=out, stderr=out)
    except SystemExit as exit_:
        pytest.fail(f"a model change has no migration (exit {exit_.code}):\n{out.getvalue()}")
