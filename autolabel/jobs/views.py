"""Pages of the auto-labeller (leads only): jobs, a job's live progress, a turn's predictions. A job's evaluation
and comparison pages are in ``autolabel.evaluation.views``."""

from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotator.access import access_project_as_lead, access_turn_not_blind, blind_turn_ids, is_blind_in
from annotator.domain.protocol.groups import reading
from annotator.domain.protocol.wording import name_list
from annotator.projects.protocols import protocol_for
from annotator.views.common import bad_request

from autolabel.jobs import estimation, live
from autolabel.jobs.learned import judge_label, learned_estimate
from autolabel.jobs import selectors
from autolabel.jobs import services
from autolabel.jobs.forms import JobPageQueryForm, JobStartForm, PredictionsQueryForm
from autolabel.learned.store import JudgeRefused
from autolabel.learned.decision import SAMPLES as JUDGE_SAMPLES, THRESHOLD as JUDGE_THRESHOLD
from autolabel.models import AutoLabelJob, Prediction


def _start_form(request, project, data):
    """The job form with the learned judge among its endpoints (refused to a lead blind in the project)."""
    return JobStartForm(data, project=project, learned=True, blind=is_blind_in(request.user, project))


def _job_start(request, project, form):
    data = form.cleaned_data
    if form.learned_chosen:  # the learned judge: no endpoint, none of the LLM's options
        return services.learned_job_create(project=project, judge=data["profile"], created_by=request.user)
    return services.job_create(
        project=project, profile=data["profile"], model=data["model"], samples=data["samples"],
        threshold=data["threshold"], prompt_version=data["prompt_version"], use_n=data["use_n"],
        batch_mode=data["batch_mode"], created_by=request.user,
        turn_ids=selectors.turn_ids_of_import(data.get("turns_of_import")),
    )


def job_list(request, slug):
    project = access_project_as_lead(request.user, slug)
    form = _start_form(request, project, request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            job = _job_start(request, project, form)
        except (services.JobError, JudgeRefused) as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, f"Job {job.pk} queued: {job.total_turns} turns.")
            return redirect("autolabel:job_detail", slug=project.slug, job_id=job.pk)
    jobs = AutoLabelJob.objects.filter(project=project).select_related("prompt_version", "profile",
                                                                        "learned_judge")[:50]
    # A malformed form is answered 400 (the page again, with what was wrong); a job the service refuses, 200.
    status = 400 if request.method == "POST" and form.errors and not form.non_field_errors() else 200
    read = reading(protocol_for(project))
    second_request = name_list([f"“{read.step_questions[step]}”" for step in read.steps if step in read.stage_two_steps
                                and step != read.start], "and")
    context = {"project": project, "jobs": jobs, "form": form, "second_request": second_request}
    return render(request, "autolabel/job_list.html", context, status=status)


def job_estimate(request, slug):
    """The job form's estimate (htmx, as its fields change): what a job with these options would send and cost.
    Builds the prompts, sends nothing."""
    project = access_project_as_lead(request.user, slug)
    form = _start_form(request, project, request.GET)
    if request.htmx and not request.GET.get("profile"):
        # The page's first request, before a profile is chosen: nothing to estimate, and nothing wrong yet.
        return render(request, "autolabel/partials/job_estimate.html", {"form": form, "estimate": None,
                                                                         "untouched": True})
    if not form.is_valid():
        if request.htmx:  # shown in the estimate's place, naming the field
            return render(request, "autolabel/partials/job_estimate.html", {"form": form, "estimate": None})
        return bad_request(request, form, back_url=reverse("autolabel:job_list", args=[project.slug]))
    data = form.cleaned_data
    if form.learned_chosen:
        return render(request, "autolabel/partials/job_estimate.html",
                      {"form": form, "estimate": learned_estimate(project), "judge": data["profile"],
                       "judge_votes": {"samples": JUDGE_SAMPLES, "threshold": JUDGE_THRESHOLD}})
    turn_ids = selectors.turn_ids_of_import(data.get("turns_of_import"))
    turns = selectors.job_scope(project, turn_ids)[0] if turn_ids is not None else None
    estimate = estimation.estimate_for(project, data["profile"], turns=turns, samples=data["samples"],
                                       use_n=data["use_n"], batch_mode=data["batch_mode"],
                                       prompt_version=data["prompt_version"])
    profile = data["profile"]
    # The prices as the lead typed them (2.5, not 2.5000): the estimate's cost is in their currency.
    prices = [f"{price:f}".rstrip("0").rstrip(".") if "." in f"{price:f}" else f"{price:f}"
              for price in (profile.input_price_per_million, profile.output_price_per_million)]
    return render(request, "autolabel/partials/job_estimate.html",
                  {"form": form, "estimate": estimate, "profile": profile, "prices": prices})


def job_detail(request, slug, job_id):
    """The job's page: progress (polled while the job runs), the latest turns' predictions as they arrive,
    then, once the job has finished, every prediction in turn order, a page at a time."""
    project = access_project_as_lead(request.user, slug)
    job = selectors.job_of_project(project, job_id)
    query = JobPageQueryForm(request.GET)
    if not query.is_valid():
        return bad_request(request, query, back_url=reverse("autolabel:job_detail", args=[project.slug, job.pk]))
    partial = query.cleaned_data["partial"]
    if request.htmx and partial == "progress":
        return _progress_poll(request, project, job, after=query.cleaned_data["after"] or 0)
    if request.htmx and partial == "admin_progress":
        return render(request, "autolabel/partials/admin_progress.html", {"project": project, "job": job})
    context = {"project": project, "job": job, **_predictions_context(request, project, job),
               "judge_label": judge_label(job.learned_judge) if job.learned_judge_id else ""}
    return render(request, "autolabel/job_detail.html", context)


def _predictions_context(request, project, job, after=0):
    """The predictions part of the page: the live feed while the job runs (None: nothing newer than
    ``after``), every prediction page by page once it has finished."""
    # Never the pre-labels (nor gold) of the turns the lead holds an unsubmitted slot on.
    hidden = blind_turn_ids(request.user, project)
    label_protocol = services.job_protocol(job)  # the labels' names: those of the protocol the job labelled with
    if not job.is_finished:
        feed = live.live_feed(job, hidden, after=after)
        return {"feed": feed, "cursor": feed.cursor if feed else after, "label_protocol": label_protocol}
    predictions = (
        Prediction.objects.filter(job=job).exclude(sentence__turn_id__in=hidden)
        .select_related("sentence__turn__dialogue", "sentence__gold")
        .order_by("sentence__turn_id", "sentence__index")
    )
    return {"page": Paginator(predictions, 100).get_page(request.GET.get("page")), "cursor": after,
            "label_protocol": label_protocol}


def _progress_poll(request, project, job, after):
    """The progress card; with it, out of band, the latest turns when newer predictions were stored, or the
    whole first page of predictions when the job has just finished (the page stops polling then)."""
    context = {"project": project, "job": job, **_predictions_context(request, project, job, after)}
    context["oob"] = job.is_finished or context.get("feed") is not None
    return render(request, "autolabel/partials/job_poll.html", context)


@require_POST
def job_cancel(request, slug, job_id):
    project = access_project_as_lead(request.user, slug)
    job = services.job_cancel(selectors.job_of_project(project, job_id))
    if request.htmx:
        return _progress_poll(request, project, job, after=0)
    messages.info(request, f"Job {job.pk}: cancellation requested.")
    return redirect("autolabel:job_detail", slug=project.slug, job_id=job.pk)


def turn_predictions(request, slug, turn_id):
    """The per-turn predictions partial, for the lead's turn page (included or fetched with htmx)."""
    project = access_project_as_lead(request.user, slug)
    turn = access_turn_not_blind(request.user, project, turn_id)
    query = PredictionsQueryForm(request.GET)
    if not query.is_valid():
        return bad_request(request, query)
    job = selectors.job_of_project(project, query.cleaned_data["job"]) if query.cleaned_data["job"] is not None else None
    return render(request, "autolabel/partials/turn_predictions.html", {
        "project": project, "turn": turn, "predictions": selectors.predictions_for_turn(turn, job),
    })
