"""The test database is migrated once a run, and every pytest-xdist worker works on a copy of it.

Migrating an empty database costs about 8 s of CPU here (40 migrations, most of it Django rebuilding model
states). Each of `make test`'s four workers migrated its own: 17 s of both cores at the start of every run.
Now the first worker to need a database migrates the run's template under a lock, and each worker, that one
too, takes a copy (SQLite copies the file; PostgreSQL `CREATE DATABASE ... TEMPLATE`), as Django's own
parallel test runner does with `clone_test_db`. The controller names the run before it starts the workers
and drops the template when the run ends; a serial run (`-n 0`, or no pytest-xdist) migrates its own as
before.
"""

from __future__ import annotations

import fcntl
import os
import uuid
from pathlib import Path

import pytest

RUN_VARIABLE = "TEST_DATABASE_TEMPLATE_RUN"
RUN = pytest.StashKey[str]()
ORIGINAL_NAME = pytest.StashKey[str]()


def in_use(config) -> bool:
    """A pytest-xdist worker of a run whose controller named it."""
    return hasattr(config, "workerinput") and bool(os.environ.get(RUN_VARIABLE))


def name_the_run(config) -> None:
    """On the controller of a pytest-xdist run: a name for this run's template, inherited by the workers."""
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    if config.getoption("reuse_db", False):
        return
    config.stash[RUN] = os.environ[RUN_VARIABLE] = uuid.uuid4().hex[:12]


def drop_the_template(config) -> None:
    """On the controller, once the workers are done: the template goes (their copies went with them)."""
    run = config.stash.get(RUN, None)
    if not run:
        return
    from django.db import connection

    from pytest_django.plugin import blocking_manager_key

    lock, ready = _lock_files(run)
    if ready.exists():  # a worker made it
        original = connection.settings_dict["NAME"]
        connection.settings_dict["NAME"] = template_name(connection, run)
        with config.stash[blocking_manager_key].unblock():
            connection.creation.destroy_test_db(old_database_name=original, verbosity=0)
    ready.unlink(missing_ok=True)
    lock.unlink(missing_ok=True)


def template_name(connection, run: str) -> str:
    if connection.vendor == "sqlite":
        from django.conf import settings

        return str(Path(settings.VAR_DIR) / f"test-template-{run}.sqlite3")
    return f"test_{connection.settings_dict['NAME']}_{run}"[:63]


def _lock_files(run: str) -> tuple[Path, Path]:
    """The lock the workers take in turn, and the mark that the template is migrated."""
    from django.conf import settings

    folder = Path(settings.VAR_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"test-template-{run}.lock", folder / f"test-template-{run}.ready"


def take_a_copy(config, setup_databases) -> None:
    """Point the connection at the worker's own database, a copy of the run's migrated template.

    ``setup_databases`` is called once a run, by whichever worker takes the lock first: it creates and
    migrates the template under the test database's name. ``drop_the_copy`` undoes this.
    """
    from django.conf import settings
    from django.db import connection

    run, worker = os.environ[RUN_VARIABLE], config.workerinput["workerid"]
    config.stash[ORIGINAL_NAME] = connection.settings_dict["NAME"]
    template = template_name(connection, run)
    for settings_dict in (connection.settings_dict, settings.DATABASES[connection.alias]):
        settings_dict.setdefault("TEST", {})["NAME"] = template
    lock_path, ready = _lock_files(run)
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if ready.exists():
            settings.DATABASES[connection.alias]["NAME"] = connection.settings_dict["NAME"] = template
        else:
            setup_databases()
            ready.touch()
        # Closed first: PostgreSQL copies no database that has a session open, and SQLite writes what its
        # write-ahead log still holds into the file when the last connection closes.
        connection.close()
        connection.creation.clone_test_db(suffix=worker, verbosity=0)
    own = connection.creation.get_test_db_clone_settings(worker)["NAME"]
    settings.DATABASES[connection.alias]["NAME"] = connection.settings_dict["NAME"] = own


def drop_the_copy(config) -> None:
    from django.db import connection

    own = connection.settings_dict["NAME"]
    connection.creation.destroy_test_db(old_database_name=config.stash[ORIGINAL_NAME], verbosity=0)
    if connection.vendor == "sqlite":
        # Django removes the file only; a live server's thread may still hold a connection, and with it the
        # write-ahead log and its index, which would be left in var/ run after run under names never reused.
        for suffix in ("-wal", "-shm"):
            Path(own + suffix).unlink(missing_ok=True)
