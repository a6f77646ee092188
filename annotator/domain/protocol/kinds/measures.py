"""What the step kinds' agreement, vote and score (``agree``, ``vote``, ``score`` of each kind's module) share:
the values they return and the counting they do alike.

- ``StepAgreement`` and the value counts behind α (``annotator/domain/agreement_kinds.py`` dispatches by kind);
- ``KindVote``, a non-choice step's vote over the pre-labeler's samples (``autolabel/labelling/kind_votes.py``);
- ``Pair`` and the ratios of a step's score against gold (``autolabel/evaluation/kind_scores.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


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
    # Imported here, not with the module: every request reads a protocol (and so this module), few measure
    # agreement; NumPy and krippendorff cost a web worker ~16 MB and 0.15 s (docs/benchmarks.md, issue 49).
    import numpy as np

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
    from ... import agreement  # NumPy and krippendorff: only when agreement is measured (see _counts)

    return StepAgreement(kind, metric, agreement.alpha(counts, level, weights=weights),
                         agreement.percent_agreement(counts, weights), agreement.pairable_units(counts, weights),
                         answered, tuple(per_answer))


# --------------------------------------------------------------------------- the pre-labeler's vote and score


@dataclass(frozen=True)
class KindVote:
    kind: str
    value: object  # list[str] | int | str | None (None: no sample gave a valid value, or min cannot be met)
    voters: int  # samples on the majority path with a valid value for the step
    counts: dict = field(default_factory=dict)  # multiple: answer -> samples; scale: point -> samples

    def as_json(self) -> dict:
        counts = {str(key): count for key, count in sorted(self.counts.items(), key=lambda item: str(item[0]))}
        return {"kind": self.kind, "value": self.value, "voters": self.voters, "counts": counts}


@dataclass(frozen=True)
class Pair:
    """A sentence's gold value and predicted value for one step (either None when absent)."""

    gold: object
    predicted: object


def _ratio(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def _f1(correct: int, predicted: int, gold: int) -> float | None:
    return round(2 * correct / (predicted + gold), 4) if gold else None


def _shared(pairs: Sequence[Pair]) -> list[Pair]:
    return [pair for pair in pairs if pair.gold is not None and pair.predicted is not None]
