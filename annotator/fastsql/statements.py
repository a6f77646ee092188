"""Single-row writes from statements written once, for the writes every decision makes.

The ORM compiles an INSERT or UPDATE anew on each call; in a decision request
that was a fifth of the web server's CPU (bench/load.py under py-spy,
docs/benchmarks.md). Here the statement is written once per shape (model and
column names) from the model's metadata, and every value goes through its
field's own preparation (``pre_save`` for automatic dates, ``get_db_prep_save``
for JSON, dates and the rest), so what is stored is what ``save()`` stores.
Model validation and signals are not run, as with ``QuerySet.update()``.
"""

from __future__ import annotations

from functools import lru_cache

from django.db import connection

from .prepared import database, statement_cursor


def row_insert(instance, names: tuple[str, ...]) -> None:
    """INSERT ``instance`` with the fields ``names`` (the rest take their database defaults); sets its pk."""
    model, db = type(instance), database()
    fields = [model._meta.get_field(name) for name in names]
    params = [field.get_db_prep_save(field.pre_save(instance, True), db) for field in fields]
    with statement_cursor() as cursor:
        cursor.execute(_insert_sql(model, names), params)
        instance.pk = cursor.fetchone()[0]
    instance._state.adding = False
    instance._state.db = db.alias


def rows_insert(instances: list, names: tuple[str, ...]) -> None:
    """INSERT ``instances`` (of one model) in one statement, in order, with the fields ``names``; sets their pks."""
    if len(instances) == 1:
        return row_insert(instances[0], names)
    model, db = type(instances[0]), database()
    fields = [model._meta.get_field(name) for name in names]
    params = [field.get_db_prep_save(field.pre_save(instance, True), db)
              for instance in instances for field in fields]
    with statement_cursor() as cursor:
        cursor.execute(_insert_rows_sql(model, names, len(instances)), params)
        # Ids are taken from the table's sequence in the order of the rows; sorted, whatever order RETURNING gives.
        for instance, (pk,) in zip(instances, sorted(cursor.fetchall())):
            instance.pk = pk
            instance._state.adding = False
            instance._state.db = db.alias


def row_update(model, values: dict, match: dict, increment: tuple[str, ...] = ()) -> int:
    """UPDATE the rows whose fields equal ``match``: set ``values``, add 1 to ``increment``; the row count."""
    set_fields = [_field(model, name) for name in values]
    match_fields = [_field(model, name) for name in match]
    db = database()
    params = [field.get_db_prep_save(value, db) for field, value in zip(set_fields, values.values())]
    params += [field.get_db_prep_value(value, db) for field, value in zip(match_fields, match.values())]
    with statement_cursor() as cursor:
        cursor.execute(_update_sql(model, tuple(values), tuple(match), increment), params)
        return cursor.rowcount


def instance_update(instance, names: tuple[str, ...]) -> int:
    """``save(update_fields=names)`` of an instance that exists (automatic dates included)."""
    model = type(instance)
    values = {name: model._meta.get_field(name).pre_save(instance, False) for name in names}
    return row_update(model, values, {"pk": instance.pk})


def _field(model, name: str):
    return model._meta.pk if name == "pk" else model._meta.get_field(name)


def _column(model, name: str) -> str:
    return connection.ops.quote_name(_field(model, name).column)


@lru_cache(maxsize=64)
def _insert_sql(model, names: tuple[str, ...]) -> str:
    columns = ", ".join(_column(model, name) for name in names)
    placeholders = ", ".join(["%s"] * len(names))
    return (f"INSERT INTO {connection.ops.quote_name(model._meta.db_table)} ({columns}) VALUES ({placeholders}) "
            f"RETURNING {_column(model, 'pk')}")


@lru_cache(maxsize=256)
def _insert_rows_sql(model, names: tuple[str, ...], count: int) -> str:
    columns = ", ".join(_column(model, name) for name in names)
    row = "(" + ", ".join(["%s"] * len(names)) + ")"
    return (f"INSERT INTO {connection.ops.quote_name(model._meta.db_table)} ({columns}) VALUES "
            f"{', '.join([row] * count)} RETURNING {_column(model, 'pk')}")


@lru_cache(maxsize=64)
def _update_sql(model, names: tuple[str, ...], match: tuple[str, ...], increment: tuple[str, ...]) -> str:
    assignments = [f"{_column(model, name)} = %s" for name in names]
    assignments += [f"{_column(model, name)} = {_column(model, name)} + 1" for name in increment]
    conditions = " AND ".join(f"{_column(model, name)} = %s" for name in match)
    return f"UPDATE {connection.ops.quote_name(model._meta.db_table)} SET {', '.join(assignments)} WHERE {conditions}"
