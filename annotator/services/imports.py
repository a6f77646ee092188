"""Writing imported records to the database: atomic, idempotent, fast.

``import_files`` is the one entry point used by the management commands, the
admin upload job and the benchmarks. A file is parsed into ``TurnRecord``s
(``annotator.importers``) and written in chunks inside one transaction: a
malformed record anywhere rolls the whole import back. A turn that already
exists in the project (same dialogue external id and turn index) is skipped and
counted as a duplicate, so importing the same file again changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import queue
import threading
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.utils import timezone

from ..importers import CANONICAL_PATHS, IMPORTED_SENTENCE_EXTRAS, ImportFormatError, ImportSummary, TurnRecord
from ..models import (
    ClaimTriplet,
    Dialogue,
    GoldEvent,
    GoldLabel,
    ImportBatch,
    Project,
    Sentence,
    TripletGold,
    Turn,
)
from ..domain.vocabulary import GoldProvenance
from .bulk import db_datetime, id_allocator, insert_rows

logger = logging.getLogger(__name__)
Progress = Callable[[int, int], None]
CHUNK_TURNS = 2000
# An import of at least this many turns refreshes PostgreSQL's planner statistics when it commits.
ANALYZE_AFTER_TURNS = 500
_PATH_JSON = {label: json.dumps(path) for label, path in CANONICAL_PATHS.items()}


def parse_files(kind: str, paths: list[Path], summary: ImportSummary, progress: Progress | None = None,
                names: list[str] | None = None):
    """The records of the files, as an iterator (parsing happens as it is consumed).

    ``names`` are the files' original names: an upload is stored under an unguessable one, and
    messages, RefChecker's dialogue ids and its dataset and model come from the name.
    """
    names = names if names and len(names) == len(paths) else [p.name for p in paths]
    if kind == ImportBatch.Kind.COGNIBENCH:
        from ..importers import cognibench

        if not 1 <= len(paths) <= 2:
            raise ValueError("a CogniBench import takes DIALOGUES.json and optionally LABELS.json")
        return cognibench.parse(paths[0], paths[1] if len(paths) > 1 else None, summary, progress, names=names)
    if kind == ImportBatch.Kind.REFCHECKER:
        from ..importers import refchecker

        return refchecker.parse(paths, summary, progress, names=names)
    if kind == ImportBatch.Kind.JSONL:
        from ..importers import jsonl

        if len(paths) != 1:
            raise ValueError("a JSONL import takes one file")
        return jsonl.parse(paths[0], summary, progress, name=names[0])
    raise ValueError(f"unknown import kind {kind!r}")


def import_files(
    project: Project,
    kind: str,
    paths: list[Path | str],
    *,
    batch: ImportBatch | None = None,
    actor=None,
    progress: Progress | None = None,
    display_names: list[str] | None = None,
) -> ImportSummary:
    """Import ``paths`` into ``project`` atomically; raises ImportFormatError (nothing written) on bad input."""
    paths = [Path(p) for p in paths]
    summary = ImportSummary(files=display_names or [p.name for p in paths])
    records = parse_files(kind, paths, summary, progress, names=display_names)
    with transaction.atomic():
        records_import(project, records, summary=summary, batch=batch, actor=actor)
    return summary


def import_run(
    project: Project,
    kind: str,
    paths: list[Path | str],
    *,
    actor=None,
    batch: ImportBatch | None = None,
    progress: Progress | None = None,
    display_names: list[str] | None = None,
) -> tuple[ImportSummary, ImportBatch | None]:
    """Import files as one ImportBatch (the unit of per-batch filters and reports).

    Without ``batch`` (command line) a batch is created, and dropped again when
    the import changed nothing, so that re-importing a file leaves the database
    exactly as it was. With ``batch`` (an upload job) its status, summary and
    error are updated. Raises ImportFormatError after marking the batch failed.
    """
    paths = [Path(p) for p in paths]
    names = display_names or [p.name for p in paths]
    if batch is None:
        with transaction.atomic():
            batch = ImportBatch.objects.create(
                project=project, kind=kind, filename=", ".join(names), sha256=file_sha256(paths),
                status=ImportBatch.Status.RUNNING, created_by=actor,
            )
            summary = import_files(project, kind, paths, batch=batch, actor=actor, progress=progress,
                                   display_names=names)
            if not summary.changed:
                batch.delete()
                return summary, None
            _finish(batch, summary)
        return summary, batch
    batch.status = ImportBatch.Status.RUNNING
    batch.sha256 = batch.sha256 or file_sha256(paths)
    batch.save(update_fields=["status", "sha256"])
    if progress is not None:
        progress(0, 0)
    try:
        summary = import_files(project, kind, paths, batch=batch, actor=actor, progress=progress,
                               display_names=names)
    except (ImportFormatError, ValueError) as exc:
        batch.status = ImportBatch.Status.FAILED
        batch.error = str(exc)
        batch.finished_at = timezone.now()
        batch.save(update_fields=["status", "error", "finished_at"])
        raise
    _finish(batch, summary)
    return summary, batch


def import_progress_key(batch: ImportBatch) -> str:
    return f"import-progress:{batch.pk}:{batch.created_at.timestamp():.6f}"


def import_batch_execute(batch_id: int) -> ImportBatch:
    """Run an uploaded ImportBatch (the Celery job's body); failures end up in ``batch.error``."""
    batch = ImportBatch.objects.select_related("project", "created_by").get(pk=batch_id)
    if batch.status in (ImportBatch.Status.DONE, ImportBatch.Status.FAILED):
        return batch  # a redelivered job does not run twice
    paths = [batch.upload.path] + ([batch.second_upload.path] if batch.second_upload else [])
    names = [name.strip() for name in batch.filename.split(",")]
    if len(names) != len(paths):
        names = [Path(p).name for p in paths]
    key = import_progress_key(batch)

    def progress(done, total):
        cache.set(key, (done, total), timeout=24 * 3600)

    try:
        import_run(batch.project, batch.kind, paths, batch=batch, actor=batch.created_by, progress=progress,
                   display_names=names)
    except (ImportFormatError, ValueError):
        pass  # import_run recorded the error on the batch
    except Exception as exc:
        logger.exception("import batch %s failed", batch.pk)
        ImportBatch.objects.filter(pk=batch.pk).update(
            status=ImportBatch.Status.FAILED, error=f"internal error: {exc}", finished_at=timezone.now()
        )
    finally:
        cache.delete(key)
    batch.refresh_from_db()
    return batch


def import_batch_progress(batch: ImportBatch) -> dict:
    """Done / total / percent of a batch, live while it runs."""
    if batch.status == ImportBatch.Status.DONE:
        return {"done": batch.total, "total": batch.total, "percent": 100}
    if batch.status == ImportBatch.Status.RUNNING:
        done, total = cache.get(import_progress_key(batch)) or (0, 0)
        return {"done": done, "total": total, "percent": round(100 * done / total) if total else 0}
    return {"done": 0, "total": 0, "percent": 0}


def import_batch_start(project: Project, kind: str, upload, second_upload=None, *, actor) -> ImportBatch:
    """Store an uploaded import and queue its job: the one write path of the admin, the API and the project page.

    The caller has checked the files (``importers.uploads.uploads_problems``). They are stored
    in the private storage under unguessable names; the batch keeps their original names. The
    job starts after commit; if the batch cannot be saved, the files stored for it are deleted.
    """
    files = [upload] + ([second_upload] if second_upload else [])
    batch = ImportBatch(project=project, kind=kind, filename=", ".join(Path(f.name).name for f in files),
                        created_by=actor, status=ImportBatch.Status.PENDING)
    batch.upload = upload
    batch.second_upload = second_upload or ""
    try:
        with transaction.atomic():
            batch.save()
            import_batch_enqueue(batch)
    except BaseException:
        upload_files_delete(batch)
        raise
    return batch


def upload_files_delete(batch: ImportBatch) -> None:
    """Delete the stored files of a batch that is not kept (nothing else refers to them)."""
    for stored in (batch.upload, batch.second_upload):
        if stored and stored.name and getattr(stored, "_committed", True):
            stored.storage.delete(stored.name)


def import_batch_enqueue(batch: ImportBatch) -> None:
    from ..tasks import import_batch_run

    transaction.on_commit(lambda: import_batch_run.delay(batch.pk))


def _finish(batch, summary):
    batch.status = ImportBatch.Status.DONE
    batch.summary = summary.as_dict()
    batch.progress = batch.total = summary.turns + summary.duplicates
    batch.finished_at = timezone.now()
    batch.error = ""
    batch.save(update_fields=["status", "summary", "progress", "total", "finished_at", "error"])


def file_sha256(paths: list[Path | str]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()


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
    with id_allocator() as allocate, _chunk_writer() as write:
        while chunk := list(islice(records, chunk_size)):
            rows = _chunk_rows(project, chunk, dialogue_ids, existing_turns, summary, batch, actor, reason,
                               seen_here, allocate)
            if rows is not None:
                write(rows, summary)
    if summary.turns >= ANALYZE_AFTER_TURNS and connection.vendor == "postgresql":
        transaction.on_commit(_planner_statistics_refresh)
    return summary


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
            path = _PATH_JSON[g.label] if g.path == CANONICAL_PATHS[g.label] else json.dumps(g.path)
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


__all__ = ["ImportFormatError", "ImportSummary", "file_sha256", "import_files", "import_run", "parse_files", "records_import"]
