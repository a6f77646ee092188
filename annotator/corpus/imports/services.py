"""Importing files: atomic, idempotent, fast; the life of an import batch.

``import_files`` is the one entry point used by the management commands, the
admin upload job and the benchmarks. A file is parsed into ``TurnRecord``s
(``annotator.corpus.imports.importers``, read by ``import_reading``) and written in chunks
(``import_records``) inside one transaction: a malformed record anywhere rolls
the whole import back. A turn that already exists in the project (same
dialogue external id and turn index) is skipped and counted as a duplicate, so
importing the same file again changes nothing.

An upload is an ``ImportBatch``: stored, queued, run by a job, its progress
shown while it runs, its summary or error kept.
"""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from annotator.domain.protocol.document import ProtocolDocumentError
from annotator.projects.protocol_services import protocol_set
from annotator.projects.protocols import protocol_for
from annotator.corpus.imports.importers import ImportFormatError, ImportSummary
from annotator.corpus.imports.importers.jsonl import protocol_header
from annotator.models import ImportBatch, Project
from annotator.corpus.imports.reading import file_sha256, parse_files
from annotator.corpus.imports.records import Progress, records_import
from annotator.leases import (LeaseLost, job_release, job_still_held, job_take_up, jobs_orphaned, lease_kept,
                              lease_owner)
from annotator.queue import BrokerUnavailable, task_send_after_commit

logger = logging.getLogger(__name__)

IMPORT_GAVE_UP = ("The worker running this import stopped {} times before it finished (killed, or out of memory?): "
                  "nothing was imported (an import is all or nothing). The workers' logs say more; upload the file "
                  "again to retry.")


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
    header = None
    if kind == ImportBatch.Kind.JSONL and len(paths) == 1:
        header = protocol_header(paths[0], (display_names or [paths[0].name])[0])
    records = parse_files(kind, paths, summary, progress, names=display_names, protocol=header or protocol_for(project),
                          default_language=project.default_language)
    with transaction.atomic():
        if header is not None:
            summary.protocol_changed = _adopt_protocol(project, header, (display_names or [paths[0].name])[0], actor)
        records_import(project, records, summary=summary, batch=batch, actor=actor)
    return summary


def _adopt_protocol(project: Project, protocol, filename: str, actor) -> str:
    """A file exported with its protocol restores it in the project (unless the project already follows it).
    Returns what changed, for the import's summary ("" when nothing did)."""
    current = protocol_for(project)
    if current == protocol:
        return ""
    try:
        version = protocol_set(project, protocol.document, user=actor)
    except ProtocolDocumentError:
        raise ImportFormatError(
            filename, "line 1", "protocol",
            f"the file's protocol is {protocol.name} v{protocol.version}, the project's {current.name} "
            f"v{current.version} and it has annotations: set the file's protocol first, with a label mapping "
            "(protocol_set --label-mapping, docs/protocols.md)") from None
    project.refresh_from_db(fields=["protocol_version"])
    if version is None:
        return ""
    return (f"protocol changed: the project now follows the file's {protocol.name} v{protocol.version} (project "
            f"version {version.number}) instead of {current.name} v{current.version} (pages opened before the "
            "change reload onto it)")


def import_run(
    project: Project,
    kind: str,
    paths: list[Path | str],
    *,
    actor=None,
    batch: ImportBatch | None = None,
    progress: Progress | None = None,
    display_names: list[str] | None = None,
    owner: str | None = None,
) -> tuple[ImportSummary, ImportBatch | None]:
    """Import files as one ImportBatch (the unit of per-batch filters and reports).

    Without ``batch`` (command line) a batch is created, and dropped again when
    the import changed nothing, so that re-importing a file leaves the database
    exactly as it was. With ``batch`` (an upload job, held by the worker ``owner``)
    its summary and error are updated. Raises ImportFormatError after marking the
    batch failed.
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
    batch.sha256 = batch.sha256 or file_sha256(paths)
    ImportBatch.objects.filter(pk=batch.pk).update(sha256=batch.sha256)
    if progress is not None:
        progress(0, 0)
    try:
        # The records and the batch's "done" in one transaction, and only while this worker holds the batch:
        # a worker presumed dead whose batch another took over rolls its import back (LeaseLost).
        with transaction.atomic():
            summary = import_files(project, kind, paths, batch=batch, actor=actor, progress=progress,
                                   display_names=names)
            if owner is not None:
                job_still_held(ImportBatch, batch.pk, owner)
            _finish(batch, summary)
    except (ImportFormatError, ValueError) as exc:
        ImportBatch.objects.filter(pk=batch.pk, **({"lease_owner": owner} if owner else {})).update(
            status=ImportBatch.Status.FAILED, error=str(exc), finished_at=timezone.now(), lease_owner="",
            lease_until=None)
        batch.refresh_from_db()
        raise
    return summary, batch


def import_progress_key(batch: ImportBatch) -> str:
    return f"import-progress:{batch.pk}:{batch.created_at.timestamp():.6f}"


def import_batch_execute(batch_id: int, owner: str | None = None) -> ImportBatch | None:
    """Run an uploaded ImportBatch (the Celery job's body); failures end up in ``batch.error``.

    The worker takes the batch up first (``annotator.leases``): a batch that is finished, or held by a live
    worker, is left alone (None). While it imports, its lease is renewed; killed, it leaves no record behind
    (one transaction) and its batch is taken up again by another worker, or failed after JOB_MAX_ATTEMPTS.
    """
    owner = owner or lease_owner()
    batch = job_take_up(ImportBatch, batch_id, owner, gave_up=IMPORT_GAVE_UP.format(settings.JOB_MAX_ATTEMPTS))
    if batch is None:
        return None
    batch = ImportBatch.objects.select_related("project", "created_by").get(pk=batch.pk)
    paths = [batch.upload.path] + ([batch.second_upload.path] if batch.second_upload else [])
    names = [name.strip() for name in batch.filename.split(",")]
    if len(names) != len(paths):
        names = [Path(p).name for p in paths]
    key = import_progress_key(batch)

    def progress(done, total):
        cache.set(key, (done, total), timeout=24 * 3600)

    try:
        with lease_kept(batch, owner):
            import_run(batch.project, batch.kind, paths, batch=batch, actor=batch.created_by, progress=progress,
                       display_names=names, owner=owner)
    except (ImportFormatError, ValueError):
        pass  # import_run recorded the error on the batch
    except LeaseLost as lost:
        logger.warning("import batch %s: %s; this worker's import was rolled back", batch.pk, lost)
        return None
    except Exception as exc:
        logger.exception("import batch %s failed", batch.pk)
        job_release(ImportBatch, batch.pk, owner, status=ImportBatch.Status.FAILED, error=f"internal error: {exc}",
                    finished_at=timezone.now())
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
    A broker that refuses the job leaves the batch failed with the reason and raises
    ``BrokerUnavailable`` (the views answer 503).
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
    except BrokerUnavailable:
        raise  # the batch is kept, failed with the reason, its files with it (as any failed import's)
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
    task_send_after_commit("annotator.import_batch_run", batch.pk, job=ImportBatch.objects.filter(pk=batch.pk))


def _finish(batch, summary):
    batch.status = ImportBatch.Status.DONE
    batch.summary = summary.as_dict()
    batch.progress = batch.total = summary.turns + summary.duplicates
    batch.finished_at = timezone.now()
    batch.error = ""
    batch.lease_owner, batch.lease_until = "", None
    batch.save(update_fields=["status", "summary", "progress", "total", "finished_at", "error", "lease_owner",
                              "lease_until"])



def import_batches_orphaned() -> list[int]:
    """Running batches whose worker died: released for another worker (the ids, to send again) or failed."""
    return jobs_orphaned(ImportBatch, gave_up=IMPORT_GAVE_UP.format(settings.JOB_MAX_ATTEMPTS))

__all__ = ["ImportFormatError", "ImportSummary", "file_sha256", "import_files", "import_run", "parse_files", "records_import"]
