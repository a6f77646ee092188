"""Celery tasks of the core app: thin, they take ids and call services.

Each worker also runs a watchdog thread (started when the worker is ready, and looking at once) that sends
again the imports and exports whose worker stopped renewing its lease, so that a batch whose worker was
killed is taken up by a live worker, or failed with the reason (annotator/leases.py).
"""

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown

from annotator.corpus.exports.services import export_job_execute, export_jobs_orphaned
from annotator.corpus.imports.services import import_batch_execute, import_batches_orphaned
from annotator.leases import Watchdog, lease_seconds
from annotator.models import Project
from annotator.reports.selectors import project_report


@shared_task(name="annotator.import_batch_run")
def import_batch_run(batch_id: int) -> None:
    """Run an uploaded import; progress, summary and error are written to the ImportBatch."""
    import_batch_execute(batch_id)


@shared_task(name="annotator.export_job_run")
def export_job_run(job_id: int) -> None:
    """Write a gold export to a file; progress and the file are recorded on the ExportJob."""
    export_job_execute(job_id)


@shared_task(name="annotator.reports_refresh")
def reports_refresh(project_id: int) -> None:
    """Compute the reports page's numbers for the project's current data (they land in the cache)."""
    project = Project.objects.filter(pk=project_id).first()
    if project is not None:  # deleted since: nothing to compute
        project_report(project)




def adopt_orphaned_jobs() -> None:
    for batch_id in import_batches_orphaned():
        import_batch_run.delay(batch_id)
    for job_id in export_jobs_orphaned():
        export_job_run.delay(job_id)


watchdog = Watchdog("import-export-watchdog", adopt_orphaned_jobs)


@worker_ready.connect
def start_watchdog(**kwargs):
    watchdog.start(interval=max(1.0, lease_seconds() / 2))


@worker_shutdown.connect
def stop_watchdog(**kwargs):
    watchdog.stop()
