"""The learned judge's page (leads only; refused to a lead blind in the project): train it on the project's gold
(a worker trains it; the page polls), its cross-validated figures and learning curve, and a job labelling the
project with it."""

from django.contrib import messages
from django.http import FileResponse, Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotator.access import BLIND_EXPORT_MESSAGE, access_project_as_lead
from annotator.leases import job_lease_lapsed
from annotator.projects.protocols import protocol_for, protocol_of_version
from annotator.views.common import bad_request, blind_refusal

from autolabel.evaluation.protocol_views import scoring
from autolabel.jobs.services import JobError, learned_job_create
from autolabel.learned.chart import learning_curve_chart
from autolabel.learned.forms import JudgeLabelForm, JudgeTrainForm
from autolabel.learned.store import JudgeRefused, judge_predictions_open
from autolabel.learned.training import STRATEGY_NAMES, TrainingInProgress, judge_train_create
from autolabel.models import AutoLabelJob, LearnedJudge


def _shape(options: dict) -> str:
    return f"{STRATEGY_NAMES.get(options.get('strategy'), options.get('strategy'))} (C = {options.get('regularization')})"


def _judge_context(project, judge):
    if judge is None or not judge.figures:
        return {"judge": judge, "worker_stopped": judge is not None and job_lease_lapsed(judge)}
    read = scoring(protocol_of_version(judge.protocol_version))
    figures = judge.figures
    cross = figures["cross_validated"]
    curve = figures.get("learning_curve", [])
    # A judge trained before the intervals existed has none: its rows show the figure alone.
    intervals = cross.get("intervals") or {"macro_f1": None, "views": {}}
    # The headline: the mean and sd over the group splits (a judge trained before they were kept has the first only).
    splits = cross.get("splits") or {"count": 1, "mean": None, "sd": None, "views": {}}
    return {
        "judge": judge, "cross": cross, "macro_interval": intervals["macro_f1"], "splits": splits,
        "view_rows": [{"name": read.names[view], "f1": f1, "interval": intervals["views"].get(view),
                       "spread": splits["views"].get(view) or {"mean": None, "sd": None}}
                      for view, f1 in cross["views"].items()],
        "predictions": bool(figures.get("out_of_fold_file")),
        "macro_name": read.names[read.macro_id] if read.macro_id else None,
        "curve": curve,
        # The model shape the choosing took (``strategy="choose"``), and what each candidate read on the gold.
        "chosen": _shape(figures["chosen"]) if figures.get("chosen") else None,
        "candidates": [{"shape": _shape(c), "macro_f1": c.get("macro_f1")} for c in figures.get("candidates", [])],
        "chart": learning_curve_chart(f"Learning curve of learned judge #{judge.pk}", curve) if curve else "",
    }


@require_GET
def learned_judge(request, slug):
    project = access_project_as_lead(request.user, slug)
    refused = blind_refusal(request, project)  # trained and scored on all gold
    if refused:
        return refused
    judges = list(LearnedJudge.objects.filter(project=project).select_related("protocol_version")[:10])
    latest = judges[0] if judges else None
    context = {"project": project, **_judge_context(project, latest)}
    if request.htmx and request.GET.get("partial") == "status":
        return render(request, "autolabel/partials/learned_judge_status.html", context)
    jobs = AutoLabelJob.objects.filter(project=project, learned_judge__isnull=False)[:10]
    protocol = protocol_for(project)
    return render(request, "autolabel/learned_judge.html", {
        **context, "judges": judges, "jobs": jobs, "train_form": JudgeTrainForm(),
        "label_form": JudgeLabelForm(project=project),
        # Steps of another kind than choice are not learned (docs/autolabel.md): the page names them.
        "kind_steps": [protocol.step(step).question for step in protocol.kind_steps()],
    })


@require_GET
def learned_judge_predictions(request, slug, judge_id):
    """A judge's out-of-fold predictions, one JSON line per sentence and split (docs/autolabel.md)."""
    project = access_project_as_lead(request.user, slug)
    refused = blind_refusal(request, project, BLIND_EXPORT_MESSAGE)
    if refused:
        return refused
    judge = LearnedJudge.objects.filter(project=project, pk=judge_id).first()
    handle = judge_predictions_open(judge) if judge is not None else None
    if handle is None:
        raise Http404("This learned judge kept no out-of-fold predictions.")
    return FileResponse(handle, content_type="application/x-ndjson", as_attachment=True,
                        filename=f"{project.slug}-judge-{judge.pk}-out-of-fold.jsonl")


@require_POST
def learned_judge_train(request, slug):
    project = access_project_as_lead(request.user, slug)
    refused = blind_refusal(request, project)
    if refused:
        return refused
    form = JudgeTrainForm(request.POST)
    if not form.is_valid():
        return bad_request(request, form, back_url=reverse("autolabel:learned_judge", args=[project.slug]))
    try:
        judge = judge_train_create(project, created_by=request.user, shape=form.cleaned_data["shape"],
                                   learning_curve=form.cleaned_data["learning_curve"])
    except TrainingInProgress as running:
        messages.info(request, f"{str(running).capitalize()}.")
    else:
        messages.success(request, f"Learned judge {judge.pk} queued: a worker trains it on the project's gold.")
    return redirect("autolabel:learned_judge", slug=project.slug)


@require_POST
def learned_judge_label(request, slug):
    project = access_project_as_lead(request.user, slug)
    refused = blind_refusal(request, project)
    if refused:
        return refused
    form = JudgeLabelForm(request.POST, project=project)
    if not form.is_valid():
        return bad_request(request, form, back_url=reverse("autolabel:learned_judge", args=[project.slug]))
    try:
        job = learned_job_create(project=project, judge=form.cleaned_data["judge"], created_by=request.user)
    except (JudgeRefused, JobError) as refusal:
        messages.error(request, str(refusal))
        return redirect("autolabel:learned_judge", slug=project.slug)
    messages.success(request, f"Job {job.pk} queued: the learned judge labels {job.total_turns} turns.")
    return redirect("autolabel:job_detail", slug=project.slug, job_id=job.pk)
