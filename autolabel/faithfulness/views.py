"""The LLM faithfulness page of a job (leads): chart, table, where the gold came from, and its CSV."""


from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_safe

from annotator.access import access_project_as_lead
from annotator.domain.protocol.groups import reading
from annotator.domain.protocol.wording import name_list
from annotator.views.common import blind_refusal, csv_writer

from autolabel.evaluation.protocol_views import job_protocol, job_protocol_caption
from autolabel.faithfulness.chart import interval_chart
from autolabel.faithfulness.report import faithfulness_report
from autolabel.models import AutoLabelJob

CSV_HEADER = ["generator_model", "measure", "sentences", "gold_sentences", "gold_turns", "auto", "gold_only", "gold_only_low",
              "gold_only_high", "corrected", "corrected_low", "corrected_high"]
ALL_MODELS = "all models"
def _report_for_lead(request, slug, job_id):
    """(project, job, report, calibration), or (None, ..., the refusal) for a lead blind on part of the project."""
    project = access_project_as_lead(request.user, slug)
    job = get_object_or_404(AutoLabelJob, pk=job_id, project=project)
    # The estimates use gold of the project's turns, those of the lead's own open slots included.
    refused = blind_refusal(request, project)
    if refused:
        return None, None, None, refused
    report, calibration = faithfulness_report(job)
    return project, job, (report, calibration), None


def _groups(report):
    """(display name, JSON model name or None for all models, group) in the page's order: all, then each model."""
    return [(ALL_MODELS, None, report["overall"])] + [
        (group["generator_model"] or "(unnamed model)", group["generator_model"], group) for group in report["models"]
    ]


def _percent(value) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


TOO_FEW = "too few drawn turns"


def _range(interval, estimate) -> str:
    """The interval; for an estimate without one, why (fewer than two drawn turns with a non-zero denominator)."""
    if interval is None:
        return TOO_FEW if estimate is not None else "–"
    return f"{100 * interval[0]:.1f} – {100 * interval[1]:.1f} %"


def _table_row(name, group, figures) -> dict:
    """The table shows percentages (the CSV and the JSON keep the proportions, to 4 decimals)."""
    return {"name": name, "sentences": f"{group['sentences']:,}", "gold_sentences": f"{group['gold_sentences']:,}",
            "auto": _percent(figures["auto"]), "gold_only": _percent(figures["gold_only"]),
            "gold_only_ci95": _range(figures["gold_only_ci95"], figures["gold_only"]),
            "corrected": _percent(figures["corrected"]),
            "corrected_ci95": _range(figures["corrected_ci95"], figures["corrected"])}


@require_safe
def job_faithfulness(request, slug, job_id):
    project, job, result, refused = _report_for_lead(request, slug, job_id)
    if refused:
        return refused
    report, calibration = result
    groups = _groups(report)
    measures = []
    for measure in report["measures"]:
        key, title = measure["id"], measure["title"]
        measures.append({
            "key": key, "title": title,
            "chart": interval_chart(title, [(name, group[key]) for name, _, group in groups]),
            "rows": [_table_row(name, group, group[key]) for name, _, group in groups],
        })
    return render(request, "autolabel/faithfulness.html", {
        "project": project, "job": job, "report": report, "calibration": calibration, "measures": measures,
        "protocol_caption": job_protocol_caption(job),
        "sentences": f"{report['overall']['sentences']:,}",
        "family_names": name_list([family.name for family in reading(job_protocol(job)).families], "and"),
        "few_turns": 0 < calibration.turns < 30, "draw_url": reverse("autolabel:job_checks", args=[project.slug, job.pk]),
    })


@require_safe
def job_faithfulness_csv(request, slug, job_id):
    """One row per model (and all models) and measure, the same figures as the page and the JSON."""
    project, job, result, refused = _report_for_lead(request, slug, job_id)
    if refused:
        return refused
    report, _ = result
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-job{job.pk}-faithfulness.csv"'
    writer = csv_writer(response)
    writer.writerow(CSV_HEADER)
    for name, model, group in _groups(report):
        for measure in (m["id"] for m in report["measures"]):
            figures = group[measure]
            gold_interval = figures["gold_only_ci95"] or [None, None]
            corrected_interval = figures["corrected_ci95"] or [None, None]
            row = [ALL_MODELS if model is None else model, measure, group["sentences"], group["gold_sentences"],
                   group["gold_turns"], figures["auto"], figures["gold_only"], *gold_interval, figures["corrected"], *corrected_interval]
            writer.writerow(row)
    return response
