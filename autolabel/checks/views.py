"""The "Human checks" page of a finished job (leads only): draw its turns for human annotation, at random or
smallest vote margin first, and follow what became of each draw and the gold it produced."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from annotator.access import access_project_as_lead, blind_turn_ids
from annotator.corpus.draws.services import DrawError, draws_progress

from autolabel.checks.forms import DrawForm
from autolabel.checks.drawing import draw_for_job
from autolabel.models import AutoLabelJob


@require_http_methods(["GET", "HEAD", "POST"])
def job_checks(request, slug, job_id):
    project = access_project_as_lead(request.user, slug)
    job = get_object_or_404(AutoLabelJob, pk=job_id, project=project)
    form = DrawForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if not form.is_valid():
            status = 400  # malformed: the page again, with what was wrong
        else:
            data = form.cleaned_data
            try:
                draw = draw_for_job(job, strategy=data["strategy"], size=data["size"], seed=data["seed"],
                                    actor=request.user, note=data["note"])
            except DrawError as refusal:
                form.add_error(None, str(refusal))
            else:
                seed = f" with seed {draw.seed}" if draw.seed is not None else ""
                messages.success(request, f"Draw {draw.pk}: {draw.drawn_turns.count()} turns drawn "
                                          f"({draw.get_strategy_display().lower()}{seed}); annotators get them first.")
                return redirect("autolabel:job_checks", slug=project.slug, job_id=job.pk)
    draws = draws_progress(project, source_job_id=job.pk, blind_turn_ids=blind_turn_ids(request.user, project))
    return render(request, "autolabel/job_checks.html", {
        "project": project, "job": job, "form": form, "draws": draws,
        "random_with_gold": sum(d.with_any_gold for d in draws if d.draw.strategy == "random"),
    }, status=status)
