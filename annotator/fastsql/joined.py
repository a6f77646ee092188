"""One row, several linked models: what ``select_related`` builds, from SQL written once.

The reads every annotation request makes were cheap for the database and dear
for the web server: compiling the ORM query (joins, sub-queries, every column of
four models) took more CPU than running it (bench/load.py under py-spy,
docs/benchmarks.md). ``JoinedSelect`` writes the statement once per process
from the models' metadata, so a renamed or added field follows, and turns a row
back into linked instances with the same conversions from database values that
the ORM applies (JSON, booleans and dates on SQLite, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from django.db import connection

from .prepared import database, statement_cursor


@dataclass(frozen=True)
class Join:
    model: type
    alias: str
    via: tuple[str, str]  # (alias of an earlier table, name of its foreign key to ``model``)


class JoinedSelect:
    def __init__(self, model, alias: str, joins: list[Join], extra_columns: list[str], where: str,
                 for_update: bool = False):
        self.model, self.alias, self.joins = model, alias, joins
        self.extra_columns, self.where = extra_columns, where
        self.for_update = for_update  # lock the rows read, where the database can (SQLite locks the whole file)

    @cached_property
    def _tables(self):
        return [(self.model, self.alias)] + [(join.model, join.alias) for join in self.joins]

    @cached_property
    def sql(self) -> str:
        quote = connection.ops.quote_name
        columns = [f"{alias}.{quote(field.column)}" for model, alias in self._tables
                   for field in model._meta.concrete_fields]
        models = dict((alias, model) for model, alias in self._tables)

        def foreign_key(join):
            owner, name = join.via
            return f"{owner}.{quote(models[owner]._meta.get_field(name).column)}"

        joins = " ".join(
            f"INNER JOIN {quote(join.model._meta.db_table)} {join.alias} "
            f"ON {join.alias}.{quote(join.model._meta.pk.column)} = {foreign_key(join)}"
            for join in self.joins
        )
        lock = " FOR UPDATE" if self.for_update and connection.features.has_select_for_update else ""
        return (f"SELECT {', '.join(columns + self.extra_columns)} "
                f"FROM {quote(self.model._meta.db_table)} {self.alias} {joins} WHERE {self.where}{lock}")

    @cached_property
    def _converters(self):
        """Per table: attnames and, per field, the converters the ORM would apply to its column."""
        tables = []
        for model, alias in self._tables:
            fields = model._meta.concrete_fields
            converters = []
            for field in fields:
                expression = field.get_col(alias)
                converters.append((expression, connection.ops.get_db_converters(expression)
                                   + field.get_db_converters(connection)))
            tables.append((model, alias, [field.attname for field in fields], converters))
        return tables

    def fetch_one(self, params: list):
        """(instance of the first model with the joined ones linked, extra column values), or None."""
        with statement_cursor() as cursor:
            cursor.execute(self.sql, params)
            row = cursor.fetchone()
        return None if row is None else self._instances(row)

    def fetch_all(self, params: list) -> list:
        """``fetch_one`` for every row (``where`` may end with an ORDER BY)."""
        with statement_cursor() as cursor:
            cursor.execute(self.sql, params)
            return [self._instances(row) for row in cursor.fetchall()]

    def _instances(self, row):
        instances, position, db = {}, 0, database()
        for model, alias, attnames, converters in self._converters:
            values = []
            for value, (expression, functions) in zip(row[position:position + len(attnames)], converters):
                for function in functions:
                    value = function(value, expression, db)
                values.append(value)
            instances[alias] = model.from_db(db.alias, attnames, values)
            position += len(attnames)
        for join in self.joins:
            owner, name = join.via
            setattr(instances[owner], name, instances[join.alias])
        return instances[self.alias], list(row[position:])
