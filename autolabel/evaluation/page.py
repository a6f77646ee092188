"""What the evaluation and comparison pages show, shaped from the reports into rows (no reads, no rules)."""

from __future__ import annotations

from autolabel.evaluation.calibration import KIND_NAMES, KINDS
from autolabel.evaluation.calibration_charts import reliability_diagram
from autolabel.evaluation.comparison import COMPARED_VIEWS
from autolabel.evaluation.scores import BASELINES, MACRO, VIEW_NAMES, VIEWS


def _view_cells(scores: dict) -> dict:
    return {"macro": scores[MACRO]["f1"], "views": [scores[view] for view in VIEWS]}


def detection_rows(report: dict, job_threshold: int) -> list[dict]:
    """One row per threshold: the macro F1, then P/R/F1 of any hallucination (pooled), factual, cognitive."""
    return [{"threshold": threshold, "current": threshold == job_threshold, **_view_cells(scores)}
            for threshold, scores in report["thresholds"].items()]


def baseline_rows(report: dict) -> list[dict]:
    return [{"name": name, **_view_cells(report["baselines"][key])} for key, name in BASELINES.items()]


def calibration_panels(calibration: dict, job_pk: int) -> list[dict]:
    panels = []
    for kind in KINDS:
        figures = calibration[kind]
        title = f"Reliability of job #{job_pk}: {KIND_NAMES[kind]}"
        panels.append({
            "kind": kind, "name": KIND_NAMES[kind], **figures,
            "chart": reliability_diagram(title, figures["bins"]) if figures["n"] else "",
        })
    return panels


def figure(value: float | None) -> str:
    """A measure as the pages print it: three decimals, or "n/a" when it is undefined."""
    return "n/a" if value is None else f"{value:.3f}"


def _cell(measure: dict, key: str) -> dict:
    return {"value": figure(measure[key]), "n": measure["n"]}


def rater_rows(rater: dict) -> list[dict]:
    rows = []
    for figures in rater["variables"].values():
        rows.append({
            "name": figures["name"], "scope": figures["scope"],
            "kappa_gold": _cell(figures["kappa_gold"], "kappa"),
            "kappa_annotators": [_cell(figures["kappa_annotators"][name], "kappa") for name in rater["annotators"]],
            "alpha_humans": _cell(figures["alpha_humans"], "alpha"),
            "alpha_with_prelabeler": _cell(figures["alpha_with_prelabeler"], "alpha"),
        })
    return rows


def comparison_rows(report: dict) -> list[dict]:
    return [{"name": VIEW_NAMES[view], "view": view, **report["views"][view]} for view in COMPARED_VIEWS]
