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

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .protocol.kinds import choice, multiple, scale, text
from .protocol.kinds.measures import StepAgreement

KINDS = ("choice", "multiple", "scale", "text")
SCALE_LEVELS = scale.SCALE_LEVELS  # a scale's α: ordinal by default, interval when the project asks for it

# One function per kind, in the kind's module (annotator/domain/protocol/kinds/<kind>.py: ``agree``).
choice_agreement = choice.agree
scale_agreement = scale.agree
multiple_agreement = multiple.agree
text_agreement = text.agree

__all__ = ["KINDS", "SCALE_LEVELS", "StepAgreement", "choice_agreement", "scale_agreement", "multiple_agreement",
           "text_agreement", "KindMeasure", "MEASURES", "metric_of", "step_agreement", "path_units"]


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
