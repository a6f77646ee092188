"""Agreement of one protocol step by its kind (issue 42): plain functions over the values annotators gave.

A step's data is a sequence of *units* (sentences), each the values its annotators gave at the step (a coder who
was not asked the step is simply absent). The value is what a path holds: a str (choice, text), a list of answer
values (multiple) or an int (scale). Each kind has its own measure, from the packages that define it:

- choice: Krippendorff's α at the nominal level (``agreement.alpha``, the one the reports use today);
- scale: Krippendorff's α at the ordinal level (interval on request) over the scale's points, the ``krippendorff``
  package's metrics (equal to ``krippendorff.alpha``: tests/test_agreement_kinds.py);
- multiple: Krippendorff's α over NLTK's MASI distance between the chosen sets (Passonneau 2006; equal to
  ``nltk.metrics.agreement.AnnotationTask(distance=masi_distance).alpha()``), plus one binary α per answer
  (chosen or not, among the annotators who answered the step), which says which answers the disagreement is on;
- text: no measure (free text is not a category): the units are counted, not scored.

α is computed by ``agreement.alpha`` from a value-counts matrix and the distance between its values, so the
memory stays O(distinct units × values) on a project of hundreds of thousands of sentences; where the libraries
and this module differ is only the undefined case: no pairable unit, or no variation, is None here (NLTK says 1).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from nltk.metrics.distance import masi_distance

from . import agreement

KINDS = ("choice", "multiple", "scale", "text")
SCALE_LEVELS = ("ordinal", "interval")  # a scale's α: ordinal by default, interval when the project asks for it


@dataclass(frozen=True)
class StepAgreement:
    """Agreement of one step: its kind, the metric used, α (None: undefined or not scored), the share of agreeing
    annotator pairs (exact equality of values), the pairable units (two values or more) and the units answered at
    all; a multiple step adds one binary α per answer."""

    kind: str
    metric: str
    alpha: float | None
    percent: float | None
    units: int
    answered: int
    per_answer: tuple[tuple[str, float | None], ...] = field(default=())

    def as_dict(self) -> dict:
        return {"kind": self.kind, "metric": self.metric, "alpha": self.alpha, "percent": self.percent,
                "units": self.units, "answered": self.answered, "per_answer": dict(self.per_answer)}


# --------------------------------------------------------------------------- value counts of any hashable values


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _counts(units: Sequence[Sequence], domain: Sequence) -> tuple[np.ndarray, np.ndarray]:
    """Distinct value-count rows (units × domain) and how many units each stands for; a value outside the domain
    (a path of another version, a value of another kind) is left out, like a coder who was not asked.

    Units are grouped by the values they hold before any array is built: a project's hundreds of thousands of
    sentences give a few dozen distinct rows, so memory follows the distinct rows, not the sentences."""
    index = {value: i for i, value in enumerate(domain)}
    # A bool is not a scale's point 1 (True == 1 in a dict): the type is part of the key.
    grouped = Counter(tuple(sorted(index[value] for value in values
                                   if _hashable(value) and not isinstance(value, bool) and value in index))
                      for values in units)
    counts = np.zeros((len(grouped), len(domain)), dtype=np.int64)
    for row, columns in enumerate(grouped):
        for column in columns:
            counts[row, column] += 1
    return counts, np.fromiter(grouped.values(), dtype=np.float64, count=len(grouped))


def _measure(kind: str, metric: str, units, domain, level, per_answer=()) -> StepAgreement:
    counts, weights = _counts(units, domain)
    answered = sum(1 for values in units if values)
    if counts.shape[1] == 0:
        return StepAgreement(kind, metric, None, None, 0, answered, tuple(per_answer))
    return StepAgreement(kind, metric, agreement.alpha(counts, level, weights=weights),
                         agreement.percent_agreement(counts, weights), agreement.pairable_units(counts, weights),
                         answered, tuple(per_answer))


# --------------------------------------------------------------------------- one function per kind


def choice_agreement(units: Sequence[Sequence[str]], answers: Sequence[str]) -> StepAgreement:
    """A choice step: nominal α over its answers (as ``agreement.measures`` does for the labels and steps)."""
    return _measure("choice", "nominal α", units, tuple(answers), "nominal")


def scale_agreement(units: Sequence[Sequence[int]], lowest: int, highest: int, level: str = "ordinal") -> StepAgreement:
    """A scale step: α at the ordinal (default) or interval level over the points ``lowest``..``highest``."""
    if level not in SCALE_LEVELS:
        raise ValueError(f"a scale's level is one of {', '.join(SCALE_LEVELS)}, not {level!r}")
    points = tuple(range(lowest, highest + 1))
    counts, weights = _counts(units, points)
    answered = sum(1 for values in units if values)
    return StepAgreement("scale", f"{level} α", agreement.alpha(counts, level, domain=points, weights=weights),
                         agreement.percent_agreement(counts, weights), agreement.pairable_units(counts, weights),
                         answered)


def _masi_metric(sets: Sequence[frozenset]) -> Callable:
    """The MASI distance between the domain's sets, as a metric of ``krippendorff`` (it reads the columns'
    indices): computed once per pair of distinct sets by NLTK."""
    table = np.array([[masi_distance(set(a), set(b)) for b in sets] for a in sets], dtype=np.float64)

    def metric(v1, v2, i1, i2, n_v, dtype=np.float64):
        return table[i1, i2].astype(dtype)

    return metric


def multiple_agreement(units: Sequence[Sequence[Sequence[str]]], answers: Sequence[str]) -> StepAgreement:
    """A multiple step: α over the MASI distance between the chosen sets, and a binary α per answer."""
    sets = [[frozenset(chosen) for chosen in values if isinstance(chosen, (list, tuple))] for values in units]
    domain = sorted({chosen for values in sets for chosen in values}, key=lambda s: (len(s), sorted(s)))
    counts, weights = _counts(sets, domain)
    answered = sum(1 for values in units if values)
    # Each annotator who answered the step either chose an answer or not: per answer, a two-valued nominal
    # variable, whose counts follow from the sets' counts (chosen: the sets holding it; not: the others).
    membership = np.array([[answer in chosen for answer in answers] for chosen in domain], dtype=np.int64)
    given = counts.sum(axis=1)
    per_answer = []
    for column, answer in enumerate(answers):
        chosen = counts @ membership[:, column] if domain else np.zeros(len(counts), dtype=np.int64)
        binary = np.column_stack([given - chosen, chosen])
        per_answer.append((answer, agreement.alpha(binary, "nominal", weights=weights)))
    if not domain:
        return StepAgreement("multiple", "MASI α", None, None, 0, answered, tuple(per_answer))
    return StepAgreement("multiple", "MASI α", agreement.alpha(counts, _masi_metric(domain), weights=weights),
                         agreement.percent_agreement(counts, weights), agreement.pairable_units(counts, weights),
                         answered, tuple(per_answer))


def text_agreement(units: Sequence[Sequence[str]]) -> StepAgreement:
    """A text step: counted, not scored (two justifications differ in words without disagreeing)."""
    answered = sum(1 for values in units if values)
    pairable = sum(1 for values in units if len(values) >= 2)
    return StepAgreement("text", "counted only", None, None, pairable, answered)


# --------------------------------------------------------------------------- the registry


@dataclass(frozen=True)
class KindMeasure:
    """How one kind is measured: the metric's name (what reports print) and the function of a step's units."""

    metric: str
    measure: Callable[..., StepAgreement]


def _choice(step, units, level=None):
    return choice_agreement(units, [answer.value for answer in step.answers])


def _multiple(step, units, level=None):
    return multiple_agreement(units, [answer.value for answer in step.answers])


def _scale(step, units, level=None):
    return scale_agreement(units, step.min, step.max, level or "ordinal")


def _text(step, units, level=None):
    return text_agreement(units)


MEASURES = {
    "choice": KindMeasure("nominal α", _choice),
    "multiple": KindMeasure("MASI α + per-answer α", _multiple),
    "scale": KindMeasure("ordinal α", _scale),
    "text": KindMeasure("counted only", _text),
}


def metric_of(kind: str, level: str | None = None) -> str:
    """The metric a report names for a step of ``kind`` (a scale measured at the interval level says so)."""
    if kind == "scale" and level == "interval":
        return "interval α"
    return MEASURES[kind].metric


def step_agreement(step, units: Sequence[Sequence], level: str | None = None) -> StepAgreement:
    """Agreement of a protocol step (a ``Step``: ``.kind``, ``.answers``, ``.min``, ``.max``) over ``units``."""
    return MEASURES[getattr(step, "kind", "choice") or "choice"].measure(step, units, level)


def path_units(paths_by_unit: Sequence[Sequence[dict]], step_id: str) -> list[list]:
    """The values given at ``step_id`` by each unit's annotators, from their paths (a path without the step: that
    annotator was not asked it)."""
    return [[path[step_id] for path in paths if isinstance(path, dict) and step_id in path]
            for paths in paths_by_unit]
