"""The reports page (leads): agreement and what the gold labels say, as charts, tables and CSV."""


from django.http import Http404, HttpResponse
from django.shortcuts import render
from django_htmx.http import HttpResponseClientRefresh

from . import charts
from ..access import access_project_as_lead
from ..views.common import blind_refusal, csv_writer
from .selectors import (
    comparison_candidates, project_report, project_report_or_older, protocol_comparison, report_tables,
    shown_families,
)
from .services import report_refresh_request
from ..domain.protocol.groups import reading
from ..projects.protocols import protocol_for

HALLUCINATION_COLOUR = "#c62828"
MEASURE_SERIES = [("Krippendorff's alpha", "alpha", "#1f5fbf"), ("Percent agreement", "percent", "#e07b00"),
                  ("Cohen's kappa", "kappa", "#2e7d32")]


def _comparison(request, project):
    candidates = comparison_candidates(project, request.user)
    chosen = request.GET.get("compare")
    other = next((p for p in candidates if p.slug == chosen), None)
    if other is None and chosen is None:
        other = next((p for p in candidates if p.shared), None)
    return candidates, other


def _short_name(variable: str) -> str:
    """A bar's name: the final label, a step, or a multiple step's answer ("Error types · fabricated")."""
    if variable == "label":
        return "Final label"
    step, _, answer = variable.partition(":")
    name = step.replace("_", " ").capitalize()
    return f"{name} · {answer.replace('_', ' ')}" if answer else name


def _charts(report, read):
    """The page's charts; labels, families and their colours from the project's protocol document."""
    agreement, gold = report["agreement"], report["gold"]
    measures = agreement["measures"]
    step_names = [_short_name(m["variable"]) for m in measures]
    label_names = [read.label_name(label) for label in agreement["labels"]]
    weekly = agreement["weekly"]
    rate_series = ([(f"{family.name} share (of sentences in a family)", f"{family.id}_share", family.colour)
                    for family in shown_families(read)]
                   + [("Hallucination rate (all sentences)", "hallucination_rate", HALLUCINATION_COLOUR)])
    rate_title = " and ".join([name for name, _, _ in rate_series[:-1]] + ["hallucination rate"])
    rate_title = rate_title[0].upper() + rate_title[1:]

    def rates(rows, key, title):
        return charts.bar_chart(title, [str(r[key]) for r in rows], [(n, [r.get(k) for r in rows], c) for n, k, c in rate_series])

    by_label = {row["label"]: row["count"] for row in gold["labels"]}
    stacks = []
    if gold["families"]:
        stacks.append(("All", [(read.label_name(label), by_label.get(label, 0), read.colour(label)) for label in gold["outside"]]
                       + [(family["name"], family["count"], family["colour"]) for family in gold["families"]]))
        stacks.extend((family["name"], [(read.label_name(label), by_label.get(label, 0), read.colour(label))
                                        for label in family["labels"]]) for family in gold["families"])
    else:
        stacks.append(("All", [(read.label_name(label), by_label.get(label, 0), read.colour(label)) for label in read.labels]))
    return {
        # α and κ are not shares: one axis from their own scale (up to 1), percent agreement on it as a share, where
        # a percent axis drew an α of 0.889 as 88.9 %.
        "steps": charts.bar_chart(
            "Agreement per protocol step (0 to 1; percent agreement as a share)", step_names,
            [(name, [m[key] for m in measures], colour) for name, key, colour in MEASURE_SERIES], percent=False,
            y_min=None, y_max=1.0, width=760,
        ),
        "weekly": charts.line_chart(
            "Agreement on the final label by week", [w["week"] for w in weekly],
            [(name, [w[key] for w in weekly], colour) for name, key, colour in MEASURE_SERIES],
        ),
        "confusion": charts.heatmap("Confusion between annotators", label_names, label_names, agreement["confusion"]),
        "labels": charts.stacked_bars("Gold labels", stacks),
        "turn_index": rates(gold["by_turn"], "turn", f"{rate_title} by turn index"),
        "position": rates(gold["by_position"], "position", f"{rate_title} by position"),
        "model": rates(gold["by_model"], "model", f"{rate_title} by generator model"),
        "rate_legend": [(name, colour) for name, _, colour in rate_series],
    }


def reports(request, slug):
    """The page; after new gold it shows the previous numbers at once while a worker computes the new ones."""
    project = access_project_as_lead(request.user, slug)
    refused = blind_refusal(request, project)  # agreement and gold figures include the turns the user is blind on
    if refused:
        return refused
    report, is_current, version = project_report_or_older(project)
    if report is None or (not is_current and not report_refresh_request(project, version)):
        report, is_current = project_report(project, version), True  # nothing older to show, or no worker came
    candidates, other = _comparison(request, project)
    comparison = protocol_comparison(project, other, report)
    read = reading(protocol_for(project))
    context = {
        "project": project,
        "report": report,
        "protocol": read,
        "tables": report_tables(report, read, comparison),
        "charts": _charts(report, read),
        "candidates": candidates,
        "other": other,
        "measure_legend": [(name, colour) for name, _, colour in MEASURE_SERIES],
        "label_legend": [(read.label_name(label), read.colour(label)) for label in read.labels],
        "family_legend": [(family.name, family.colour) for family in read.families],
        "hallucination_names": [read.label_name(label) for label in read.labels if label in read.hallucinated],
        "is_current": is_current,
    }
    return render(request, "reports/reports.html", context)


def reports_status(request, slug):
    """Polled while the page shows older numbers: reloads the page once the current ones are ready."""
    project = access_project_as_lead(request.user, slug)
    refused = blind_refusal(request, project)  # agreement and gold figures include the turns the user is blind on
    if refused:
        return refused
    _, is_current, _ = project_report_or_older(project)
    if is_current:
        return HttpResponseClientRefresh()
    return render(request, "reports/partials/refreshing.html", {"project": project})


def report_csv(request, slug, table):
    """One table of the reports page as CSV, with the raw (unrounded) numbers."""
    project = access_project_as_lead(request.user, slug)
    refused = blind_refusal(request, project)  # agreement and gold figures include the turns the user is blind on
    if refused:
        return refused
    report = project_report(project)
    comparison = None
    if table == "protocols":
        _, other = _comparison(request, project)
        comparison = protocol_comparison(project, other, report)
    tables = report_tables(report, reading(protocol_for(project)), comparison)
    if table not in tables:
        raise Http404("No such table")
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-{table}.csv"'
    writer = csv_writer(response)
    writer.writerow(tables[table]["header"])
    for row in tables[table]["rows"]:
        writer.writerow(row)
    return response


