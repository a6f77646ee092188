"""The cursor of the statements written once: on PostgreSQL, prepared on the server at their first use.

Each annotation request runs a handful of statements whose text never changes (``JoinedSelect``, the single-row
INSERTs and UPDATEs). With Django's default cursor (client-side binding, no prepared statements) PostgreSQL
parses and plans every one of them anew, which was most of the database's CPU per labelled sentence
(bench/sync_ab.py, docs/benchmarks.md). Here they go through a server-binding psycopg cursor that prepares the
statement the first time a connection runs it and afterwards only binds and executes it. The cursor is wrapped
like Django's own (``execute_wrapper``, database errors translated to ``django.db`` ones), so nothing above
this module sees a difference; while queries are logged, Django's cursor runs them unprepared. The ORM's statements keep Django's cursor.

Prepared statements live in one server session: behind a pooler in transaction mode (PgBouncer's
``pool_mode = transaction`` before 1.21) set ``DATABASE_PREPARED_STATEMENTS=0`` and Django's cursor is used.
"""

from __future__ import annotations

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections


def database():
    """The default database's connection itself: ``django.db.connection`` is a proxy that looks it up again (in
    a context-local store) at every attribute read, which the hot paths here did a hundred times per request."""
    return connections[DEFAULT_DB_ALIAS]


def _preparing_cursor_class():
    from django.db.backends.postgresql.base import ServerBindingCursor

    class PreparingCursor(ServerBindingCursor):
        """Prepares every statement it runs (psycopg keeps the prepared ones per connection, most recent 100)."""

        def execute(self, query, params=None, *, prepare=None, binary=None):
            return super().execute(query, params, prepare=True, binary=binary)

    return PreparingCursor


_cursor_class = None
NEVER_BY_COUNT = 2**31 - 1


def statement_cursor(prepare: bool = True):
    """A cursor (a context manager, like ``connection.cursor()``) for a statement written once.

    ``prepare=False``: Django's cursor, which writes the values into the statement, for a statement whose plan
    must see them (a partial index applies only when PostgreSQL can compare its condition with the value)."""
    global _cursor_class
    db = database()
    if (not prepare or db.vendor != "postgresql" or not getattr(settings, "DATABASE_PREPARED_STATEMENTS", True)
            or db.queries_logged):
        # While queries are logged (DEBUG, a test's CaptureQueriesContext) Django's cursor runs them: the log
        # shows each statement with its values, which a prepared statement's cursor does not give back.
        return db.cursor()
    if _cursor_class is None:
        _cursor_class = _preparing_cursor_class()
    db.validate_thread_sharing()
    # As Django's own cursor does (``CONN_HEALTH_CHECKS``): a kept connection is checked once per request before
    # its first statement, and replaced if the server dropped it. These statements come first in a request (the
    # session's user is read with one): without the check here, a restarted server failed the request, and the
    # check ran later, on a connection already proven usable.
    db.close_if_health_check_failed()
    db.ensure_connection()
    if db.connection.prepare_threshold is None:
        # Django turns psycopg's preparing off for the connection (None: never, whatever a cursor asks); a
        # threshold no statement reaches lets this cursor's ``prepare=True`` work and still prepares nothing
        # of the ORM's on its own.
        db.connection.prepare_threshold = NEVER_BY_COUNT
    return db.make_cursor(_cursor_class(db.connection))
