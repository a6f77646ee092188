"""The export's streaming reads: one snapshot of the database for the whole export, and plain rows
through server-side cursors, one query after another; on PostgreSQL the sentences come through a second
connection, in the export's snapshot, read in another thread (see selectors.py).
"""

from __future__ import annotations

import queue
import threading
from contextlib import contextmanager

from django.db import connection, transaction
from psycopg import sql as psycopg_sql


@contextmanager
def _snapshot():
    """Every query of the export sees the database as it was when the export started.

    PostgreSQL: one REPEATABLE READ transaction (which also lets the server-side
    cursors live without WITH HOLD, i.e. without materialising the whole result
    first). SQLite (WAL): a connection reads one snapshot while any statement of
    it is unfinished, and a transaction there would take the write lock; the
    export reads its groups of dialogues one query after another, so a statement
    left unfinished on purpose holds the snapshot between them.

    Yields the id of that snapshot (``pg_export_snapshot``) when the export started the
    transaction, so that a second connection can read in the same snapshot; else None.
    """
    if connection.vendor != "postgresql":
        with connection.cursor() as holder:
            # Two rows, one fetched: the statement stays unfinished (and the snapshot held) until it is closed.
            holder.execute("SELECT 1 FROM sqlite_master UNION ALL SELECT 1")
            yield None
        return
    starts_transaction = not connection.in_atomic_block  # inside a caller's transaction, that one's snapshot holds
    snapshot = None
    with transaction.atomic():
        with connection.cursor() as cursor:
            if starts_transaction:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                cursor.execute("SELECT pg_export_snapshot()")
                snapshot = cursor.fetchone()[0]
            # The sentence stream is sorted in the turns' order: in memory rather than in temporary files.
            cursor.execute("SET LOCAL work_mem = '64MB'")
        yield snapshot


def _rows(querysets, chunk_size):
    """The rows of ``values_list`` querysets of plain columns, one after the other, as the driver returns them.

    Through a server-side cursor on PostgreSQL, like ``.iterator()``, but without the
    ORM's per-row work, which costs a third of the time for the 240,000 sentences of
    a large project. Only for columns that need no conversion (no dates, no JSON:
    those are read as text).
    """
    for queryset in querysets:
        sql, params = queryset.query.sql_with_params()
        with connection.chunked_cursor() as cursor:
            cursor.execute(sql, params)
            while batch := cursor.fetchmany(chunk_size):
                yield from batch


def _rows_from_snapshot(querysets, chunk_size, snapshot):
    """``_rows``, read by a second connection in another thread, in the export's snapshot.

    The server then sorts and sends the sentences while this thread turns the previous ones
    into JSON, instead of each waiting for the other (PostgreSQL runs one statement per
    connection at a time): 1.1 s of the 3 s a 240,000-sentence export took. The queue holds
    two batches, so memory stays flat.
    """
    statements = [queryset.query.sql_with_params() for queryset in querysets]
    side = connection.copy()  # a wrapper of its own: opening it does not touch the export's connection
    batches: queue.Queue = queue.Queue(maxsize=2)
    stop = threading.Event()

    def hand_over(item):
        while not stop.is_set():
            try:
                batches.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def read():
        try:
            raw = side.get_new_connection(side.get_connection_params())
        except BaseException as exc:  # raised in the exporting thread
            hand_over(exc)
            return
        try:
            raw.autocommit = True
            raw.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            raw.execute(psycopg_sql.SQL("SET TRANSACTION SNAPSHOT {}").format(psycopg_sql.Literal(snapshot)))
            raw.execute("SET LOCAL work_mem = '64MB'")
            for sql, params in statements:
                with raw.cursor(name="export_sentences") as cursor:
                    cursor.execute(sql, params)
                    while batch := cursor.fetchmany(chunk_size):
                        if not hand_over(batch):
                            break
                if stop.is_set():
                    break
            raw.execute("ROLLBACK")
            hand_over(None)
        except BaseException as exc:
            hand_over(exc)
        finally:
            raw.close()

    reader = threading.Thread(target=read, name="export-sentences", daemon=True)
    reader.start()
    try:
        while (batch := batches.get()) is not None:
            if isinstance(batch, BaseException):
                raise batch
            yield from batch
    finally:
        stop.set()
        reader.join()
