"""A job's evaluation page (scores against gold, calibration, the pre-labeler as a rater) and the comparison
of two jobs on the same gold (leads only; refused to a lead blind in the project)."""

from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from annotator.access import access_project_as_lead
from annotator.views.common import bad_request, blind_refusal

from autolabel.evaluation import page as evaluation_page
from autolabel.evaluation import selectors as calibration_selectors
from autolabel.evaluation.forms import CompareQueryForm
from autolabel.evaluation.protocol_views import job_protocol, job_protocol_caption
from autolabel.jobs.selectors import job_of_project


def job_evaluation(request, slug, job_id):
    project = access_project_as_lead(request.user, slug)
    job = job_of_project(project, job_id)
    refused = blind_refusal(request, project)  # scored against all gold, that of the lead's open slots included
    if refused:
        return refused
    protocol = job_protocol(job)
    report = calibration_selectors.job_scores(job)
    calibration = calibration_selectors.job_calibration(job)
    rater = calibration_selectors.job_rater_agreement(job)
    return render(request, "autolabel/job_evaluation.html", {
        "project": project, "job": job, "report": report, "protocol_caption": job_protocol_caption(job),
        "header": evaluation_page.detection_header(protocol),
        "confusions": evaluation_page.confusion_panels(protocol, report),
        "rows": evaluation_page.detection_rows(protocol, report, job.threshold),
        "baselines": evaluation_page.baseline_rows(protocol, report),
        "calibration": calibration, "calibration_panels": evaluation_page.calibration_panels(calibration, job.pk),
        "rater": rater, "rater_rows": evaluation_page.rater_rows(rater),
        "compare_form": CompareQueryForm(candidates=calibration_selectors.comparable_jobs(job)),
    })


@require_GET
def job_comparison(request, slug, job_id):
    """Two jobs on the same gold (``?other=``): F1 per view with bootstrap intervals and the paired difference."""
    project = access_project_as_lead(request.user, slug)
    job = job_of_project(project, job_id)
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
        "rows": evaluation_page.comparison_rows(job_protocol(job), report),
    })
