"""Celery tasks of the core app: thin, they take ids and call services."""

from celery import shared_task

from annotator.corpus.exports.services import export_job_execute
from annotator.corpus.imports.services import import_batch_execute
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
