"""A statement composed from ORM querysets once per process; each run binds its values anew.

Compiling a queryset (joins, sub-queries, lookups) costs the web server far more CPU than the database spends
running it: the navigation's badges, four small counts, took a quarter of the annotation screen's CPU
(bench/sync_ab.py, docs/benchmarks.md). ``ComposedSelect`` keeps the querysets as the definition, compiles them
once with stand-in values for the varying parts (integers within even a small integer column's range: Django
drops or refuses a lookup beyond a column's range), and remembers which
parameters were stand-ins; each run passes the real values in their places. Several querysets go in one
statement as scalar sub-selects (``count_of``, ``exists_of``, ``first_of``): one round trip, and one statement
for PostgreSQL to prepare (fastsql.prepared).

Only values passed as plain parameters can vary (ids, in filters); anything that changes the statement's shape
(a superuser's unfiltered variant, a list of varying length) needs a statement of its own.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

from django.db import connection

from .prepared import statement_cursor

STAND_IN_BASES = (30_011, 31_013)


def _compiled(queryset) -> tuple[str, tuple]:
    return queryset.query.get_compiler(connection=connection).as_sql()


def count_of(queryset) -> tuple[str, tuple]:
    """``queryset.count()`` as a scalar sub-select (the rows the queryset's joins give, as ``count()`` counts)."""
    sql, params = _compiled(queryset.order_by().values("pk"))
    return f"(SELECT COUNT(*) FROM ({sql}) counted)", params


def exists_of(queryset) -> tuple[str, tuple]:
    sql, params = _compiled(queryset.order_by().values("pk")[:1])
    return f"EXISTS({sql})", params


def first_of(queryset) -> tuple[str, tuple]:
    """The first row's only value of a ``values_list(...)`` queryset (ordered as given), NULL when none."""
    sql, params = _compiled(queryset[:1])
    return f"({sql})", params


class _BoundStatement(ABC):
    """SQL from ``compose(**stand_ins)``, compiled once per database, run with the real values bound. A subclass
    says how ``compose``'s result becomes SQL (``_sql_and_params``)."""

    def __init__(self, compose: Callable, *names: str, prepare: bool = True):
        self.compose, self.names, self.prepare = compose, names, prepare
        self._by_database = {}

    @abstractmethod
    def _sql_and_params(self, stand_ins: dict) -> tuple[str, list]:
        """The SQL and parameters of ``compose(**stand_ins)``."""

    def _statement(self):
        key = (connection.alias, connection.vendor)
        if key not in self._by_database:
            # Compiled twice with two sets of stand-ins: a parameter is a name's slot where it is that name's stand-in
            # both times (a constant of the code cannot be both). A name the statement does not use (a shape where
            # it is a constant) is simply not bound.
            first, second = ({name: base + position for position, name in enumerate(self.names)}
                             for base in STAND_IN_BASES)
            sql, params = self._sql_and_params(first)
            sql_again, params_again = self._sql_and_params(second)
            if sql_again != sql or len(params_again) != len(params):
                raise ValueError("the composed statement changes its shape with the values of its names")
            by_stand_ins = {(first[name], second[name]): name for name in self.names}
            # Integers, or the typed integers Django wraps them in for some columns (psycopg's Int2 for a small one).
            slots = [by_stand_ins.get((int(param), int(again)))
                     if isinstance(param, int) and not isinstance(param, bool) else None
                     for param, again in zip(params, params_again)]
            self._by_database[key] = (sql, params, slots)
        return self._by_database[key]

    def _run(self, cursor, values: dict) -> None:
        sql, params, slots = self._statement()
        cursor.execute(sql, [type(param)(values[slot]) if slot is not None else param
                             for slot, param in zip(slots, params)])

    def fetch_one(self, **values) -> tuple | None:
        with statement_cursor(self.prepare) as cursor:
            self._run(cursor, values)
            return cursor.fetchone()

    def fetch_all(self, **values) -> list[tuple]:
        with statement_cursor(self.prepare) as cursor:
            self._run(cursor, values)
            return cursor.fetchall()


class ComposedSelect(_BoundStatement):
    """``SELECT part, part, ...``: each part a ``(sql, params)`` of the list ``compose(**stand_ins)`` gives."""

    def _sql_and_params(self, stand_ins):
        parts = self.compose(**stand_ins)
        return ("SELECT " + ", ".join(part for part, _ in parts),
                [param for _, part_params in parts for param in part_params])


class CompiledQuery(_BoundStatement):
    """The queryset ``compose(**stand_ins)`` gives (``values_list`` of plain columns: rows come back as tuples)."""

    def _sql_and_params(self, stand_ins):
        sql, params = _compiled(self.compose(**stand_ins))
        return sql, list(params)
