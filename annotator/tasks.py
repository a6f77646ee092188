"""Celery tasks of the core app: thin, they take ids and call services."""

from celery import shared_task

from .services.imports import import_batch_execute


@shared_task(name="annotator.import_batch_run")
def import_batch_run(batch_id: int) -> None:
    """Run an uploaded import; progress, summary and error are written to the ImportBatch."""
    import_batch_execute(batch_id)


@shared_task(name="annotator.export_job_run")
def export_job_run(job_id: int) -> None:
    """Write a gold export to a file; progress and the file are recorded on the ExportJob."""
    from .services.exports import export_job_execute

    export_job_execute(job_id)
