"""What the evaluation and comparison pages show, shaped from the reports into rows (no reads, no rules)."""

from __future__ import annotations

from autolabel.evaluation.calibration import KIND_NAMES, KINDS
from autolabel.evaluation.calibration_charts import reliability_diagram
from autolabel.evaluation.protocol_views import scoring
from autolabel.evaluation.scores import BASELINES


def scope_note(protocol, view) -> str:
    """What a view with a narrower scope counts, said beside its figures ("" for a view over every label)."""
    if not scoring(protocol).narrow(view):
        return ""
    inside = [protocol.label_name(label) for label in protocol.labels if label in view.scope]
    return (f"{view.name}: counts only the sentences whose gold is {', '.join(inside)}; a prediction on any other "
            f"sentence is no false alarm there, so its precision is not over every sentence it flagged")


def detection_header(protocol) -> dict:
    """The detection table's columns: the macro (its name, or None) and each view's name, from the document, with
    the note of a view whose scope is narrower than every label."""
    read = scoring(protocol)
    views = [{"name": read.names[view.id], "scope_note": scope_note(protocol, view)} for view in read.views]
    return {"macro": read.names[read.macro_id] if read.macro_id else None,
            "macro_views": [read.names[view] for view in read.macro_views],
            "views": views, "scope_notes": [view["scope_note"] for view in views if view["scope_note"]]}


def _view_cells(read, scores: dict) -> dict:
    return {"macro": scores[read.macro_id]["f1"] if read.macro_id else None,
            "views": [scores[view] for view in read.view_ids]}


def detection_rows(protocol, report: dict, job_threshold: int) -> list[dict]:
    """One row per threshold: the macro F1, then P/R/F1 of each view (CogniBench: any hallucination (pooled),
    factual, cognitive)."""
    read = scoring(protocol)
    return [{"threshold": threshold, "current": threshold == job_threshold, **_view_cells(read, scores)}
            for threshold, scores in report["thresholds"].items()]


def baseline_rows(protocol, report: dict) -> list[dict]:
    read = scoring(protocol)
    return [{"name": name, **_view_cells(read, report["baselines"][key])} for key, name in BASELINES.items()]


def confusion_panels(protocol, report: dict) -> list[dict]:
    """Per family of the protocol: its confusion matrix as rows of (gold label's name, counts), the columns named
    from the document."""
    panels = []
    for family_id, figures in report["confusion"].items():
        panels.append({
            **figures, "accuracy_when_in_family": figures[f"accuracy_when_{family_id}"],
            "column_names": [protocol.label_name(c) if c in protocol.labels else c for c in figures["columns"]],
            "matrix_rows": [(protocol.label_name(gold), [figures["matrix"][gold][c] for c in figures["columns"]])
                            for gold in figures["rows"]],
        })
    return panels


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


def comparison_rows(protocol, report: dict) -> list[dict]:
    read = scoring(protocol)
    notes = {view.id: scope_note(protocol, view) for view in read.views}
    return [{"name": read.names[view], "view": view, "scope_note": notes.get(view, ""), **figures}
            for view, figures in report["views"].items()]
