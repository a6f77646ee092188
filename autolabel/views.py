"""Pages of the auto-labeller (leads only): jobs, a job's live progress, evaluation, a turn's predictions."""

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotator.access import access_project_as_lead
from annotator.models import Turn

from . import selectors, services
from .forms import JobStartForm
from .models import AutoLabelJob, Prediction


def _job(project, job_id):
    return get_object_or_404(AutoLabelJob.objects.select_related("profile", "prompt_version"), pk=job_id, project=project)


def job_list(request, slug):
    project = access_project_as_lead(request.user, slug)
    form = JobStartForm(request.POST or None, project=project)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            job = services.job_create(
                project=project, profile=data["profile"], model=data["model"], samples=data["samples"],
                threshold=data["threshold"], prompt_version=data["prompt_version"], use_n=data["use_n"],
                batch_mode=data["batch_mode"], created_by=request.user,
            )
        except services.JobError as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, f"Job {job.pk} queued: {job.total_turns} turns.")
            return redirect("autolabel:job_detail", slug=project.slug, job_id=job.pk)
    jobs = AutoLabelJob.objects.filter(project=project).select_related("prompt_version", "profile")[:50]
    return render(request, "autolabel/job_list.html", {"project": project, "jobs": jobs, "form": form})


def job_detail(request, slug, job_id):
    project = access_project_as_lead(request.user, slug)
    job = _job(project, job_id)
    partial = request.GET.get("partial")
    if request.htmx and partial == "progress":
        return render(request, "autolabel/partials/job_progress.html", {"project": project, "job": job})
    if request.htmx and partial == "admin_progress":
        return render(request, "autolabel/partials/admin_progress.html", {"project": project, "job": job})
    predictions = (
        Prediction.objects.filter(job=job).select_related("sentence__turn__dialogue", "sentence__gold")
        .order_by("sentence__turn_id", "sentence__index")
    )
    page = Paginator(predictions, 100).get_page(request.GET.get("page"))
    return render(request, "autolabel/job_detail.html", {"project": project, "job": job, "page": page})


@require_POST
def job_cancel(request, slug, job_id):
    project = access_project_as_lead(request.user, slug)
    job = services.job_cancel(_job(project, job_id))
    if request.htmx:
        return render(request, "autolabel/partials/job_progress.html", {"project": project, "job": job})
    messages.info(request, f"Job {job.pk}: cancellation requested.")
    return redirect("autolabel:job_detail", slug=project.slug, job_id=job.pk)


def job_evaluation(request, slug, job_id):
    project = access_project_as_lead(request.user, slug)
    job = _job(project, job_id)
    report = selectors.job_evaluation(job)
    rows = []
    for threshold, views in report["thresholds"].items():
        rows.append({"threshold": threshold, "current": threshold == job.threshold,
                     "views": [(view, views[view]) for view in ("overall", "factual", "cognitive")]})
    cognitive = report["cognitive"]
    matrix = [(gold, [cognitive["matrix"][gold][c] for c in cognitive["columns"]]) for gold in cognitive["rows"]]
    return render(request, "autolabel/job_evaluation.html", {
        "project": project, "job": job, "report": report, "rows": rows, "cognitive": cognitive, "matrix": matrix,
    })


def turn_predictions(request, slug, turn_id):
    """The per-turn predictions partial, for the lead's turn page (included or fetched with htmx)."""
    project = access_project_as_lead(request.user, slug)
    turn = get_object_or_404(Turn.objects.select_related("dialogue"), pk=turn_id, dialogue__project=project)
    job = None
    if request.GET.get("job"):
        try:
            job = _job(project, int(request.GET["job"]))
        except ValueError:
            raise Http404("No such job") from None
    return render(request, "autolabel/partials/turn_predictions.html", {
        "project": project, "turn": turn, "predictions": selectors.predictions_for_turn(turn, job),
    })
