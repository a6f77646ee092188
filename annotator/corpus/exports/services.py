"""Gold exports written to a file by a worker: a progress bar and a download link for large projects."""

from __future__ import annotations

import logging
from pathlib import Path

from django.core.cache import cache
from django.utils import timezone

from annotator.corpus.exports.exporters import FILENAMES, FORMATS, format_refusal
from annotator.models import ExportJob, Turn
from annotator.storage import export_file_path
from annotator.queue import task_send_after_commit

logger = logging.getLogger(__name__)
PROGRESS_EVERY = 1000


def export_job_create(project, fmt: str, user) -> ExportJob:
    """Record an export job and queue it once the transaction commits."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}")
    if refusal := format_refusal(project, fmt):
        raise ValueError(refusal)
    job = ExportJob.objects.create(project=project, format=fmt, created_by=user)
    # A broker that refuses it marks the job failed with the reason and raises BrokerUnavailable (answered 503).
    task_send_after_commit("annotator.export_job_run", job.pk, job=ExportJob.objects.filter(pk=job.pk))
    return job


def export_job_progress_key(job: ExportJob) -> str:
    return f"export-progress:{job.pk}"


def export_job_progress(job: ExportJob) -> int:
    """Turns written so far: the export reads one database snapshot (a single transaction), so while it
    runs its progress goes through the cache, which every process sees at once."""
    if job.status == ExportJob.Status.RUNNING:
        return cache.get(export_job_progress_key(job), job.progress)
    return job.progress


def export_job_execute(job_id: int) -> ExportJob:
    """Write the export to the private files folder under an unguessable name; progress is visible while it
    runs (through the cache)."""
    job = ExportJob.objects.select_related("project").get(pk=job_id)
    if job.status in (ExportJob.Status.DONE, ExportJob.Status.FAILED):
        return job
    total = Turn.objects.filter(dialogue__project=job.project).count()
    ExportJob.objects.filter(pk=job.pk).update(status=ExportJob.Status.RUNNING, total=total, progress=0)

    key = export_job_progress_key(job)

    def progress(done):
        cache.set(key, done, timeout=24 * 3600)

    name = export_file_path(job, FILENAMES[job.format].format(slug=job.project.slug))
    path = Path(job.file.storage.path(name))
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".part")
    try:
        with open(partial, "w", encoding="utf-8", newline="\n") as handle:
            for piece in FORMATS[job.format](job.project, progress=progress):
                handle.write(piece)
        partial.replace(path)
    except Exception as exc:
        logger.exception("export job %s failed", job.pk)
        partial.unlink(missing_ok=True)
        ExportJob.objects.filter(pk=job.pk).update(status=ExportJob.Status.FAILED, error=str(exc),
                                                   finished_at=timezone.now())
    else:
        ExportJob.objects.filter(pk=job.pk).update(status=ExportJob.Status.DONE, file=name, progress=total,
                                                   finished_at=timezone.now())
    cache.delete(key)
    job.refresh_from_db()
    return job
