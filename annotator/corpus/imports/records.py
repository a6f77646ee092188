"""Writing imported records to the database: in chunks, fast, each turn once.

``records_import`` writes ``TurnRecord``s (``annotator.corpus.imports.importers``) into a
project, inside the caller's transaction. A turn that already exists in the
project (same dialogue external id and turn index) is skipped and counted as a
duplicate, so importing the same file again changes nothing.
"""

from __future__ import annotations

import gc
import json
import queue
import threading
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice

from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.utils import timezone

from annotator.corpus.imports.importers import CANONICAL_PATHS, IMPORTED_SENTENCE_EXTRAS, ImportFormatError, ImportSummary, TurnRecord
from annotator.models import ClaimTriplet, Dialogue, GoldEvent, GoldLabel, ImportBatch, Project, Sentence, TripletGold, Turn
from annotator.domain.vocabulary import GoldProvenance
from annotator.fastsql.bulk import db_datetime, id_allocator, insert_rows

Progress = Callable[[int, int], None]
CHUNK_TURNS = 2000
# An import of at least this many turns refreshes PostgreSQL's planner statistics when it commits.
ANALYZE_AFTER_TURNS = 500
_PATH_JSON = {label: json.dumps(path) for label, path in CANONICAL_PATHS.items()}


def records_import(
    project: Project,
    records: Iterable[TurnRecord],
    *,
    summary: ImportSummary | None = None,
    batch: ImportBatch | None = None,
    actor=None,
    chunk_size: int = CHUNK_TURNS,
) -> ImportSummary:
    """Write ``records`` into ``project``. Call inside a transaction."""
    summary = summary or ImportSummary()
    dialogue_ids = dict(Dialogue.objects.filter(project=project).values_list("external_id", "id"))
    existing_turns = set(
        Turn.objects.filter(dialogue__project=project).values_list("dialogue__external_id", "index")
    )
    reason = "imported from " + ", ".join(summary.files) if summary.files else "imported"
    records = iter(records)
    seen_here: dict = {}
    with _cyclic_gc_paused(), id_allocator() as allocate, _chunk_writer() as write:
        while chunk := list(islice(records, chunk_size)):
            rows = _chunk_rows(project, chunk, dialogue_ids, existing_turns, summary, batch, actor, reason,
                               seen_here, allocate)
            if rows is not None:
                write(rows, summary)
    if summary.turns >= ANALYZE_AFTER_TURNS and connection.vendor == "postgresql":
        transaction.on_commit(_planner_statistics_refresh)
    return summary


@contextmanager
def _cyclic_gc_paused():
    """Python's cycle collector off while the records are read and written, on again after (if it was on).

    An import allocates a dozen objects per sentence (the parsed line, its records, its rows), none of them in a
    reference cycle, all freed by reference counting; but each allocation counts towards the collector's next
    pass, and each pass walks every object alive, the chunk's included: 2,440 passes and 1.8 s of the 8 s of CPU an
    import of 240,000 sentences with gold took (docs/benchmarks.md, issue 49). Any cycle made meanwhile is
    collected by the first pass after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _planner_statistics_refresh() -> None:
    """ANALYZE the tables an import filled.

    Autovacuum refreshes them only a minute or so later; until then PostgreSQL
    plans with the statistics of the tables before the import. The claim of the
    next turn was then planned as a scan of every open turn of the project,
    sorted, instead of a walk of the open-slots index that stops at the first:
    63 ms of database time per claim on 3,000 turns under load (bench/load.py
    --statement-stats), 0.4 ms after ANALYZE. Sampling makes it cost about the
    same whatever the size of the tables.
    """
    tables = ", ".join(connection.ops.quote_name(model._meta.db_table) for model in (Dialogue, Turn, Sentence))
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {tables}")


@contextmanager
def _chunk_writer():
    """``write(rows, summary)``: on PostgreSQL in a second thread, so that the server stores chunk N
    (and checks its foreign keys) while this thread parses chunk N+1; elsewhere right away.

    The thread uses the import's own connection (one transaction, nothing visible before it commits);
    this thread leaves that connection alone meanwhile (ids come from ``id_allocator``). Without the
    thread, those checks ran at COMMIT after all the parsing, 0.8 s of 5 s for 240,000 sentences.
    """
    if connection.vendor != "postgresql":
        yield _chunk_insert
        return
    writer = _BackgroundWriter(connections[DEFAULT_DB_ALIAS])
    try:
        yield writer.write
    except BaseException:
        writer.stop()  # the importing thread's error (a malformed record) is the one to report
        raise
    writer.stop()
    if writer.failure is not None:
        raise writer.failure


class _BackgroundWriter:
    def __init__(self, db):
        self.db = db
        self.chunks = queue.Queue(maxsize=1)  # one chunk in the pipe: memory stays at two chunks
        self.failure: BaseException | None = None
        with db.cursor() as cursor:
            # Checked at the end of each COPY, in the writer thread, rather than all at COMMIT.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            # References (~5 KB each) are compressed as they are stored; the default pglz took a third
            # of the server's time for an import, lz4 a tenth of that (reading either is transparent).
            cursor.execute("SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'")
            if cursor.fetchone()[0]:
                cursor.execute("SET LOCAL default_toast_compression = 'lz4'")
        db.inc_thread_sharing()
        self.thread = threading.Thread(target=self._run, name="import-writer", daemon=True)
        self.thread.start()

    def _run(self):
        connections[DEFAULT_DB_ALIAS] = self.db  # this thread's `connection` is the import's
        while (item := self.chunks.get()) is not None:
            if self.failure is None:
                try:
                    _chunk_insert(*item)
                except BaseException as exc:  # handed to the importing thread, which raises it
                    self.failure = exc

    def write(self, rows, summary):
        if self.failure is not None:
            raise self.failure
        self.chunks.put((rows, summary))

    def stop(self):
        """Wait for the chunks already handed over; the connection is this thread's alone again."""
        self.chunks.put(None)
        self.thread.join()
        self.db.dec_thread_sharing()
        if self.failure is None:
            with self.db.cursor() as cursor:  # Django's defaults again, for the rest of the transaction
                cursor.execute("SET CONSTRAINTS ALL DEFERRED")
                cursor.execute("RESET default_toast_compression")


def _fingerprint(record: TurnRecord) -> int:
    # Compared only within one import run, so Python's 64-bit string hash is enough and, unlike a
    # digest, needs no encoded copy of every turn's reference.
    return hash((record.response, record.user_message, record.dialogue.reference))


@dataclass
class _ChunkRows:
    dialogues: list = field(default_factory=list)
    turns: list = field(default_factory=list)
    sentences: list = field(default_factory=list)
    gold: list = field(default_factory=list)
    events: list = field(default_factory=list)
    triplets: list = field(default_factory=list)
    triplet_gold: list = field(default_factory=list)


def _chunk_rows(project, chunk, dialogue_ids, existing_turns, summary, batch, actor, reason, seen_here,
                allocate) -> _ChunkRows | None:
    """The rows of a chunk's new turns, with their primary keys; no database access but ``allocate``."""
    fresh: list[TurnRecord] = []
    for record in chunk:
        key = (record.dialogue.external_id, record.index)
        if key in seen_here:
            # The same turn twice in one import: harmless if identical, an error if not (which one is right?).
            first_position, fingerprint = seen_here[key]
            if fingerprint != _fingerprint(record):
                raise ImportFormatError(
                    ", ".join(summary.files) or "import", record.position or "?", "turn",
                    f"dialogue {key[0]!r} turn {key[1]} appears twice with different content "
                    f"(first at {first_position or '?'})",
                )
            summary.duplicates += 1
            continue
        if key in existing_turns:
            summary.duplicates += 1
            continue
        existing_turns.add(key)
        seen_here[key] = (record.position, _fingerprint(record))
        fresh.append(record)
    if not fresh:
        return None
    rows = _ChunkRows()
    now = db_datetime(timezone.now())
    batch_id = batch.pk if batch is not None else None
    actor_id = actor.pk if actor is not None else None

    new_dialogues = {}
    for record in fresh:
        d = record.dialogue
        if d.external_id not in dialogue_ids and d.external_id not in new_dialogues:
            new_dialogues[d.external_id] = d
    if new_dialogues:
        ids = allocate(Dialogue, len(new_dialogues))
        for pk, d in zip(ids, new_dialogues.values()):
            dialogue_ids[d.external_id] = pk
            rows.dialogues.append((pk, project.pk, batch_id, d.external_id, d.topic, d.language,
                                   d.generator_model, d.reference, d.metadata))

    turn_ids = allocate(Turn, len(fresh))
    sentence_ids = iter(allocate(Sentence, sum(len(record.sentences) for record in fresh)))
    triplet_ids = iter(allocate(ClaimTriplet, sum(len(record.triplets) for record in fresh)))
    for turn_id, record in zip(turn_ids, fresh):
        if not (record.dialogue.reference or "").strip():
            summary.without_reference += 1
        metadata = record.metadata
        extras = {str(s.index): s.extras for s in record.sentences if s.extras}
        if extras:
            metadata = {**metadata, IMPORTED_SENTENCE_EXTRAS: extras}
        rows.turns.append((turn_id, dialogue_ids[record.dialogue.external_id], record.index, record.external_id,
                           record.user_message, record.response, record.history, metadata,
                           record.is_qualification, now))
        by_index = {}
        for s in record.sentences:
            sentence_id = next(sentence_ids)
            by_index[s.index] = sentence_id
            rows.sentences.append((sentence_id, turn_id, s.index, s.text, s.start, s.end))
            g = s.gold
            if g is None:
                summary.unlabelled += 1
                continue
            path = _PATH_JSON[g.label] if g.path == CANONICAL_PATHS.get(g.label) else json.dumps(g.path)
            rows.gold.append(
                (sentence_id, g.label, path, g.provenance, g.reason, g.severity, g.error_type, None, now)
            )
            rows.events.append((sentence_id, "", g.label, GoldProvenance.IMPORTED, reason, actor_id, now))
        for t in record.triplets:
            triplet_id = next(triplet_ids)
            rows.triplets.append((triplet_id, turn_id, by_index.get(t.sentence_index), t.index, t.head, t.relation,
                                  t.tail, t.source, t.reference_label, t.metadata, actor_id))
            if t.gold is not None:
                rows.triplet_gold.append((triplet_id, t.gold.label, t.gold.provenance, t.gold.reason, now))
    return rows


def _chunk_insert(rows: _ChunkRows, summary: ImportSummary) -> None:
    if rows.dialogues:
        summary.dialogues += insert_rows(
            Dialogue,
            ["id", "project_id", "batch_id", "external_id", "topic", "language", "generator_model", "reference",
             "metadata"],
            rows.dialogues, json_columns=["metadata"],
        )
    summary.turns += insert_rows(
        Turn,
        ["id", "dialogue_id", "index", "external_id", "user_message", "assistant_response", "history", "metadata",
         "is_qualification", "created_at"],
        rows.turns, json_columns=["history", "metadata"],
    )
    summary.sentences += insert_rows(Sentence, ["id", "turn_id", "index", "text", "start", "end"], rows.sentences)
    if rows.gold:
        summary.labels += insert_rows(
            GoldLabel,
            ["sentence_id", "label", "path", "provenance", "reason", "severity", "error_type", "decided_by_id",
             "updated_at"],
            rows.gold,
        )
        insert_rows(
            GoldEvent,
            ["sentence_id", "old_label", "new_label", "provenance", "reason", "actor_id", "created_at"],
            rows.events,
        )
    if rows.triplets:
        summary.triplets += insert_rows(
            ClaimTriplet,
            ["id", "turn_id", "sentence_id", "index", "head", "relation", "tail", "source", "reference_label",
             "metadata", "created_by_id"],
            rows.triplets, json_columns=["metadata"],
        )
    if rows.triplet_gold:
        insert_rows(TripletGold, ["triplet_id", "label", "provenance", "reason", "updated_at"], rows.triplet_gold)

