"""Gold exports written to a file by a worker: a progress bar and a download link for large projects."""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from annotator.corpus.exports.exporters import FILENAMES, FORMATS, encoded_pieces, format_refusal
from annotator.models import ExportJob, Turn
from annotator.storage import export_file_path
from annotator.leases import job_release, job_take_up, jobs_orphaned, lease_kept, lease_owner
from annotator.queue import task_send_after_commit

logger = logging.getLogger(__name__)
PROGRESS_EVERY = 1000
EXPORT_GAVE_UP = ("The worker writing this export stopped {} times before it finished (killed, or out of memory?): "
                  "no file was written. The workers' logs say more; start the export again to retry.")


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


def export_job_execute(job_id: int, owner: str | None = None) -> ExportJob | None:
    """Write the export to the private files folder under an unguessable name; progress is visible while it
    runs (through the cache).

    The worker takes the job up first and keeps its lease while it writes (``annotator.leases``): a job that is
    finished, or held by a live worker, is left alone (None); a worker killed mid-export leaves its job to be
    taken up again by another (or failed after JOB_MAX_ATTEMPTS), and the file is recorded only by the worker
    that still holds the job.
    """
    owner = owner or lease_owner()
    job = job_take_up(ExportJob, job_id, owner, gave_up=EXPORT_GAVE_UP.format(settings.JOB_MAX_ATTEMPTS))
    if job is None:
        return None
    job = ExportJob.objects.select_related("project").get(pk=job.pk)
    total = Turn.objects.filter(dialogue__project=job.project).count()
    ExportJob.objects.filter(pk=job.pk, lease_owner=owner).update(total=total, progress=0)

    key = export_job_progress_key(job)

    def progress(done):
        cache.set(key, done, timeout=24 * 3600)

    name = export_file_path(job, FILENAMES[job.format].format(slug=job.project.slug))
    path = Path(job.file.storage.path(name))
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".part")
    try:
        with lease_kept(job, owner):
            with open(partial, "wb") as handle:  # a value not UTF-8 fails the job, naming its line
                for piece in encoded_pieces(FORMATS[job.format](job.project, progress=progress)):
                    handle.write(piece)
            partial.replace(path)
    except Exception as exc:
        logger.exception("export job %s failed", job.pk)
        partial.unlink(missing_ok=True)
        job_release(ExportJob, job.pk, owner, status=ExportJob.Status.FAILED, error=str(exc),
                    finished_at=timezone.now())
    else:
        if not job_release(ExportJob, job.pk, owner, status=ExportJob.Status.DONE, file=name, progress=total,
                           finished_at=timezone.now()):
            logger.warning("export job %s was taken over by another worker; this worker's file is dropped", job.pk)
            path.unlink(missing_ok=True)
    cache.delete(key)
    job.refresh_from_db()
    return job


def export_jobs_orphaned() -> list[int]:
    """Running exports whose worker died: released for another worker (the ids, to send again) or failed."""
    return jobs_orphaned(ExportJob, gave_up=EXPORT_GAVE_UP.format(settings.JOB_MAX_ATTEMPTS))
