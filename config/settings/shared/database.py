"""The database: SQLite in the repository by default, ``DATABASE_URL`` for PostgreSQL (docs/deploy.md)."""

import os
from pathlib import Path

import dj_database_url

from .environment import BASE_DIR, env_bool


def database_from_env():
    url = os.environ.get("DATABASE_URL", "sqlite:///db.sqlite3")
    config = dj_database_url.parse(url, conn_max_age=int(os.environ.get("CONN_MAX_AGE", "60")))
    if config["ENGINE"] == "django.db.backends.sqlite3":
        name = Path(config["NAME"])
        if not name.is_absolute() and str(name) != ":memory:":
            config["NAME"] = str(BASE_DIR / name)
        # The web server and the Celery worker write the same file: WAL lets
        # readers and one writer work at once, IMMEDIATE transactions take the
        # write lock up front instead of failing half way with "database is locked".
        config["OPTIONS"] = {
            "timeout": 30,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
        # Connections are kept (CONN_MAX_AGE, as for PostgreSQL): opening one and closing it on every request
        # was a tenth of a Start's time (issue 49), the close the dearest part, since the last connection to
        # close checkpoints the WAL into the file. Each thread has its own connection, so this is as
        # thread-safe as before; the development server closes its request thread's connections after
        # each request anyway (Django's ThreadedWSGIServer), gunicorn's sync workers keep theirs.
    else:
        config["CONN_HEALTH_CHECKS"] = True
    # The test database's name is the test settings' (config.settings.test).
    return config


DATABASES = {"default": database_from_env()}
# The hot paths' statements written once (annotator.fastsql) are prepared on the PostgreSQL server at their first
# use in a connection: PostgreSQL then skips parsing and planning them. Set 0 behind a pooler in transaction mode,
# where a connection's next transaction may reach another server session.
DATABASE_PREPARED_STATEMENTS = env_bool("DATABASE_PREPARED_STATEMENTS", True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
