"""A statement composed from ORM querysets once per process; each run binds its values anew.

Compiling a queryset (joins, sub-queries, lookups) costs the web server far more CPU than the database spends
running it: the navigation's badges, four small counts, took a quarter of the annotation screen's CPU
(bench/sync_ab.py, docs/benchmarks.md). ``ComposedSelect`` keeps the querysets as the definition, compiles them
once with stand-in values (distinct negative integers no row has) for the varying parts, and remembers which
parameters were stand-ins; each run passes the real values in their places. Several querysets go in one
statement as scalar sub-selects (``count_of``, ``exists_of``, ``first_of``): one round trip, and one statement
for PostgreSQL to prepare (fastsql.prepared).

Only values passed as plain parameters can vary (ids, in filters); anything that changes the statement's shape
(a superuser's unfiltered variant, a list of varying length) needs a statement of its own.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import connection

from .prepared import statement_cursor

STAND_IN_BASE = -7_300_000_001


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


class ComposedSelect:
    """``SELECT part, part, ...``: each part a ``(sql, params)`` that ``compose(**stand_ins)`` gives."""

    def __init__(self, compose: Callable[..., list[tuple[str, tuple]]], *names: str):
        self.compose, self.names = compose, names
        self._by_vendor = {}

    def _statement(self):
        key = (connection.alias, connection.vendor)
        if key not in self._by_vendor:
            stand_ins = {name: STAND_IN_BASE - position for position, name in enumerate(self.names)}
            parts = self.compose(**stand_ins)
            sql = "SELECT " + ", ".join(part for part, _ in parts)
            params = [param for _, part_params in parts for param in part_params]
            names_by_stand_in = {value: name for name, value in stand_ins.items()}
            slots = [names_by_stand_in.get(param) if type(param) is int else None for param in params]
            missing = set(self.names) - set(slots)
            if missing:
                raise ValueError(f"{sorted(missing)} do not appear as parameters of the composed statement")
            self._by_vendor[key] = (sql, params, slots)
        return self._by_vendor[key]

    def fetch_one(self, **values) -> tuple:
        sql, params, slots = self._statement()
        bound = [values[slot] if slot is not None else param for slot, param in zip(slots, params)]
        with statement_cursor() as cursor:
            cursor.execute(sql, bound)
            return cursor.fetchone()
