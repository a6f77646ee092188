"""A lead's data pages: turns of a project, one turn with its gold, imports, exports.

Lead-only on purpose: these pages show gold labels, which annotators must never
see before they submit.
"""

from django.core.paginator import Paginator
from django.http import FileResponse, Http404, HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from ..access import access_project_as_lead
from ..exporters import CONTENT_TYPES, FILENAMES, FORMATS, export_pieces
from ..models import ExportJob, ImportBatch, Turn
from ..selectors import data as selectors
from ..services.exports import export_job_create, export_job_progress
from ..services.imports import import_batch_progress

PAGE_SIZE = 50


def turn_list(request, slug):
    project = access_project_as_lead(request.user, slug)
    filters = {
        "batch": request.GET.get("batch") or None,
        "topic": request.GET.get("topic") or None,
        "model": request.GET.get("model") or None,
        "search": (request.GET.get("q") or "").strip() or None,
    }
    if filters["batch"] and not filters["batch"].isdigit():
        filters["batch"] = None
    page = Paginator(selectors.turn_list(project, **filters), PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "project": project, "page": page, "filters": filters, "options": selectors.turn_filter_options(project),
        "query": query.urlencode(),
    }
    template = "data/partials/turn_table.html" if request.htmx else "data/turn_list.html"
    return render(request, template, context)


def turn_detail(request, slug, turn_id):
    project = access_project_as_lead(request.user, slug)
    try:
        turn = selectors.turn_detail(project, turn_id)
    except Turn.DoesNotExist:
        raise Http404("No such turn") from None
    previous, following = selectors.neighbour_turns(turn)
    context = {"project": project, "turn": turn, "dialogue": turn.dialogue, "previous": previous,
               "following": following, "sentences": list(turn.sentences.all()), "triplets": list(turn.triplets.all())}
    return render(request, "data/turn_detail.html", context)


def export(request, slug, fmt):
    """A streamed download of the project's gold (memory flat, however large the project).

    ``?min_severity=`` (1-5 or ``project``) marks each hallucinated sentence's gold ``severe`` (JSONL).
    """
    project = access_project_as_lead(request.user, slug)
    if fmt not in FORMATS:
        raise Http404("No such format")
    try:
        pieces = export_pieces(project, fmt, min_severity=request.GET.get("min_severity"))
    except ValueError as exc:
        return HttpResponseBadRequest(f"Cannot export: {exc}.", content_type="text/plain; charset=utf-8")
    response = StreamingHttpResponse(pieces, content_type=CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{FILENAMES[fmt].format(slug=project.slug)}"'
    response["Cache-Control"] = "no-store"
    return response


def import_list(request, slug):
    project = access_project_as_lead(request.user, slug)
    batches = ImportBatch.objects.filter(project=project).select_related("created_by")[:200]
    return render(request, "data/import_list.html", {"project": project, "batches": batches})


def import_status(request, slug, batch_id):
    """An import job's progress bar, then its summary or error; htmx polls the partial while it runs."""
    project = access_project_as_lead(request.user, slug)
    batch = get_object_or_404(ImportBatch, pk=batch_id, project=project)
    context = {"project": project, "batch": batch, "progress": import_batch_progress(batch)}
    if request.htmx:
        return render(request, "data/partials/import_status.html", context)
    return render(request, "data/import_status.html", context)


@require_POST
def export_job_start(request, slug, fmt):
    """Start a background export (large projects); the status page shows progress, then a download link."""
    project = access_project_as_lead(request.user, slug)
    if fmt not in FORMATS:
        raise Http404("No such format")
    job = export_job_create(project, fmt, request.user)
    return redirect("export_job_status", slug=project.slug, job_id=job.pk)


def export_job_status(request, slug, job_id):
    project = access_project_as_lead(request.user, slug)
    job = get_object_or_404(ExportJob, pk=job_id, project=project)
    job.progress = export_job_progress(job)
    percent = 100 if job.status == ExportJob.Status.DONE else (
        round(100 * job.progress / job.total) if job.total else 0)
    context = {"project": project, "job": job, "percent": percent}
    if request.htmx:
        return render(request, "data/partials/export_job_status.html", context)
    return render(request, "data/export_job_status.html", context)


def export_job_download(request, slug, job_id):
    project = access_project_as_lead(request.user, slug)
    job = get_object_or_404(ExportJob, pk=job_id, project=project, status=ExportJob.Status.DONE)
    filename = FILENAMES[job.format].format(slug=project.slug)
    response = FileResponse(job.file.open("rb"), as_attachment=True, filename=filename,
                            content_type=CONTENT_TYPES[job.format])
    response["Cache-Control"] = "no-store"
    return response
