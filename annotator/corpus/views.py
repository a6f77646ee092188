"""A lead's data pages: turns of a project, one turn with its gold, imports, exports.

Lead-only on purpose: these pages show gold labels, which annotators must never
see before they submit. A lead who holds an unsubmitted annotation slot is blind on
that turn too: it is left out of the list, its page is a 404, and exports are
refused until the slot is submitted (an export without it would be incomplete gold).
"""

from django.core.paginator import Paginator
from django.http import FileResponse, Http404, HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from ..access import BLIND_EXPORT_MESSAGE, access_project_as_lead, blind_turn_ids, is_blind_on
from annotator.corpus.exports.exporters import CONTENT_TYPES, FILENAMES, FORMATS, export_pieces, streamed_pieces
from .forms import CsvExportOptionsForm, TurnFilterForm
from .selectors import job_waits_for_a_worker
from annotator.corpus.imports.forms import ImportUploadForm
from ..models import ExportJob, ImportBatch, Turn
from annotator.corpus.imports import selectors
from annotator.corpus.exports.services import export_job_create, export_job_progress
from annotator.corpus.imports.services import import_batch_progress, import_batch_start
from ..leases import job_lease_lapsed
from ..templatetags.import_tags import import_file_names
from ..views.common import bad_request, blind_refusal

PAGE_SIZE = 50


def _export_refused(request, project):
    return blind_refusal(request, project, BLIND_EXPORT_MESSAGE)


def turn_list(request, slug):
    project = access_project_as_lead(request.user, slug)
    form = TurnFilterForm(request.GET)
    if not form.is_valid():
        return bad_request(request, form, back_url=reverse("turn_list", args=[project.slug]))
    data = form.cleaned_data
    # The batch as text, as the page's select compares it with its options' values.
    filters = {"batch": str(data["batch"]) if data["batch"] else None, "topic": data["topic"] or None, "model": data["model"] or None,
               "search": data["q"] or None}
    turns = selectors.turn_list(project, **filters).exclude(pk__in=blind_turn_ids(request.user, project))
    page = Paginator(turns, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "project": project, "page": page, "filters": filters, "options": selectors.turn_filter_options(project),
        "query": query.urlencode(), "import_numbers": selectors.import_numbers(project),
    }
    template = "data/partials/turn_table.html" if request.htmx else "data/turn_list.html"
    return render(request, template, context)


def turn_detail(request, slug, turn_id):
    project = access_project_as_lead(request.user, slug)
    try:
        turn = selectors.turn_detail(project, turn_id)
    except Turn.DoesNotExist:
        raise Http404("No such turn") from None
    if is_blind_on(request.user, turn):
        raise Http404("No such turn")
    previous, following = selectors.neighbour_turns(turn)
    context = {"project": project, "turn": turn, "dialogue": turn.dialogue, "previous": previous,
               "following": following, "sentences": list(turn.sentences.all()), "triplets": list(turn.triplets.all()),
               "import_number": selectors.import_number(turn.dialogue.batch) if turn.dialogue.batch else None}
    return render(request, "data/turn_detail.html", context)


def export(request, slug, fmt):
    """A streamed download of the project's gold (memory flat, however large the project).

    ``?min_severity=`` (1-5 or ``project``) marks each hallucinated sentence's gold ``severe`` (JSONL);
    ``?bom=1``, ``?annotators=1``: the CSV's options (CsvExportOptionsForm).
    """
    project = access_project_as_lead(request.user, slug)
    if fmt not in FORMATS:
        raise Http404("No such format")
    refused = _export_refused(request, project)
    if refused:
        return refused
    options = CsvExportOptionsForm(request.GET)
    options.is_valid()  # two check boxes: any value is on or off
    try:
        pieces = export_pieces(project, fmt, min_severity=request.GET.get("min_severity"),
                               csv_options=options.cleaned_data if fmt == "csv" else None)
    except ValueError as exc:
        return HttpResponseBadRequest(f"Cannot export: {exc}.", content_type="text/plain; charset=utf-8")
    response = StreamingHttpResponse(streamed_pieces(pieces), content_type=CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{FILENAMES[fmt].format(slug=project.slug)}"'
    response["Cache-Control"] = "no-store"
    response["X-Content-Type-Options"] = "nosniff"
    return response


def import_list(request, slug):
    project = access_project_as_lead(request.user, slug)
    batches = ImportBatch.objects.filter(project=project).select_related("created_by")[:200]
    return render(request, "data/import_list.html", {"project": project, "batches": batches,
                                                     "import_numbers": selectors.import_numbers(project),
                                                     "form": ImportUploadForm(project=project)})


def import_status(request, slug, batch_id):
    """An import job's progress bar, then its summary or error; htmx polls the partial while it runs."""
    project = access_project_as_lead(request.user, slug)
    batch = get_object_or_404(ImportBatch, pk=batch_id, project=project)
    context = {"project": project, "batch": batch, "number": selectors.import_number(batch),
               "progress": import_batch_progress(batch),
               "no_worker": job_waits_for_a_worker(batch), "worker_stopped": job_lease_lapsed(batch)}
    if request.htmx:
        return render(request, "data/partials/import_status.html", context)
    return render(request, "data/import_status.html", context)


@require_POST
def export_job_start(request, slug, fmt):
    """Start a background export (large projects); the status page shows progress, then a download link."""
    project = access_project_as_lead(request.user, slug)
    if fmt not in FORMATS:
        raise Http404("No such format")
    refused = _export_refused(request, project)
    if refused:
        return refused
    try:
        job = export_job_create(project, fmt, request.user)
    except ValueError as exc:
        return HttpResponseBadRequest(f"Cannot export: {exc}.", content_type="text/plain; charset=utf-8")
    return redirect("export_job_status", slug=project.slug, job_id=job.pk)


def export_job_status(request, slug, job_id):
    project = access_project_as_lead(request.user, slug)
    job = get_object_or_404(ExportJob, pk=job_id, project=project)
    job.progress = export_job_progress(job)
    percent = 100 if job.status == ExportJob.Status.DONE else (
        round(100 * job.progress / job.total) if job.total else 0)
    context = {"project": project, "job": job, "percent": percent, "no_worker": job_waits_for_a_worker(job),
               "worker_stopped": job_lease_lapsed(job)}
    if request.htmx:
        return render(request, "data/partials/export_job_status.html", context)
    return render(request, "data/export_job_status.html", context)


def export_job_download(request, slug, job_id):
    project = access_project_as_lead(request.user, slug)
    job = get_object_or_404(ExportJob, pk=job_id, project=project, status=ExportJob.Status.DONE)
    refused = _export_refused(request, project)
    if refused:
        return refused
    filename = FILENAMES[job.format].format(slug=project.slug)
    response = FileResponse(job.file.open("rb"), as_attachment=True, filename=filename,
                            content_type=CONTENT_TYPES[job.format])
    response["Cache-Control"] = "no-store"
    response["X-Content-Type-Options"] = "nosniff"
    return response


def import_upload(request, slug):
    """A lead's upload form (also on the project page): stores the files, queues the job, shows its progress."""
    project = access_project_as_lead(request.user, slug)
    if request.method == "POST":
        form = ImportUploadForm(request.POST, request.FILES, project=project)
        if form.is_valid():
            data = form.cleaned_data
            batch = import_batch_start(project, data["kind"], data["upload"], data.get("second_upload"),
                                       actor=request.user)
            return redirect("import_status", slug=project.slug, batch_id=batch.pk)
        return render(request, "data/import_upload.html", {"project": project, "form": form}, status=400)
    return render(request, "data/import_upload.html", {"project": project, "form": ImportUploadForm(project=project)})


@require_safe
def import_file_download(request, slug, batch_id, number):
    """An import's uploaded file, to the project's leads only, as an attachment (never shown inline).

    ``number`` 1 is the upload, 2 the second upload (CogniBench labels.json). The file is sent
    under its original name; the stored name is unguessable and no URL serves the folder.
    """
    project = access_project_as_lead(request.user, slug)
    batch = get_object_or_404(ImportBatch, pk=batch_id, project=project)
    # An uploaded file may carry a source's gold labels: refused like an export to whoever is blind here.
    refused = _export_refused(request, project)
    if refused:
        return refused
    stored = {1: batch.upload, 2: batch.second_upload}.get(number)
    if not stored or not stored.storage.exists(stored.name):
        raise Http404("No such file")
    filename = dict(import_file_names(batch))[number]
    response = FileResponse(stored.open("rb"), as_attachment=True, filename=filename,
                            content_type="application/octet-stream")
    response["Cache-Control"] = "no-store"
    response["X-Content-Type-Options"] = "nosniff"
    return response
