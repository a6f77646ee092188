"""Pages of the auto-labeller (leads only): jobs, a job's live progress, evaluation and comparison, a turn's
predictions."""

from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotator.access import access_project_as_lead, access_turn_not_blind, blind_turn_ids
from annotator.corpus.views import blind_refusal
from annotator.views.common import bad_request

from . import calibration_selectors, evaluation_page, selectors, services
from .evaluation_forms import CompareQueryForm
from .forms import JobStartForm, PredictionsQueryForm
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
    # A malformed form is answered 400 (the page again, with what was wrong); a job the service refuses, 200.
    status = 400 if request.method == "POST" and form.errors and not form.non_field_errors() else 200
    return render(request, "autolabel/job_list.html", {"project": project, "jobs": jobs, "form": form}, status=status)


def job_detail(request, slug, job_id):
    project = access_project_as_lead(request.user, slug)
    job = _job(project, job_id)
    partial = request.GET.get("partial")
    if request.htmx and partial == "progress":
        return render(request, "autolabel/partials/job_progress.html", {"project": project, "job": job})
    if request.htmx and partial == "admin_progress":
        return render(request, "autolabel/partials/admin_progress.html", {"project": project, "job": job})
    predictions = (
        # Not the pre-labels (nor gold) of the turns the lead holds an unsubmitted slot on.
        Prediction.objects.filter(job=job).exclude(sentence__turn_id__in=blind_turn_ids(request.user, project))
        .select_related("sentence__turn__dialogue", "sentence__gold")
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
    refused = blind_refusal(request, project)  # scored against all gold, that of the lead's open slots included
    if refused:
        return refused
    report = calibration_selectors.job_scores(job)
    cognitive = report["cognitive"]
    matrix = [(gold, [cognitive["matrix"][gold][c] for c in cognitive["columns"]]) for gold in cognitive["rows"]]
    calibration = calibration_selectors.job_calibration(job)
    rater = calibration_selectors.job_rater_agreement(job)
    return render(request, "autolabel/job_evaluation.html", {
        "project": project, "job": job, "report": report, "cognitive": cognitive, "matrix": matrix,
        "rows": evaluation_page.detection_rows(report, job.threshold),
        "baselines": evaluation_page.baseline_rows(report),
        "calibration": calibration, "calibration_panels": evaluation_page.calibration_panels(calibration, job.pk),
        "rater": rater, "rater_rows": evaluation_page.rater_rows(rater),
        "compare_form": CompareQueryForm(candidates=calibration_selectors.comparable_jobs(job)),
    })


@require_GET
def job_comparison(request, slug, job_id):
    """Two jobs on the same gold (``?other=``): F1 per view with bootstrap intervals and the paired difference."""
    project = access_project_as_lead(request.user, slug)
    job = _job(project, job_id)
    refused = blind_refusal(request, project)
    if refused:
        return refused
    form = CompareQueryForm(request.GET, candidates=calibration_selectors.comparable_jobs(job))
    if not form.is_valid():
        return bad_request(request, form, back_url=reverse("autolabel:job_evaluation", args=[project.slug, job.pk]))
    other = form.cleaned_data["other"]
    report = calibration_selectors.job_comparison(job, other)
    return render(request, "autolabel/job_comparison.html", {
        "project": project, "job": job, "other": other, "report": report, "form": form,
        "rows": evaluation_page.comparison_rows(report),
    })


def turn_predictions(request, slug, turn_id):
    """The per-turn predictions partial, for the lead's turn page (included or fetched with htmx)."""
    project = access_project_as_lead(request.user, slug)
    turn = access_turn_not_blind(request.user, project, turn_id)
    query = PredictionsQueryForm(request.GET)
    if not query.is_valid():
        return bad_request(request, query)
    job = _job(project, query.cleaned_data["job"]) if query.cleaned_data["job"] is not None else None
    return render(request, "autolabel/partials/turn_predictions.html", {
        "project": project, "turn": turn, "predictions": selectors.predictions_for_turn(turn, job),
    })
