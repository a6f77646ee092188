"""A scale step: one integer point from ``min`` to ``max`` (at most nine), picked by its position digit 1-9.

``anchors`` words some points (``{"1": "cosmetic", "5": "outcome-changing"}``). The step carries ``next`` or
``yields``. The path value is the int (a bool, a float or a string of digits is refused).
"""

from __future__ import annotations

import math
import statistics
import warnings
from collections import Counter
from collections.abc import Sequence

from ..parts import ProtocolError, Step
from .common import foreign_fields, target_of, target_problems, text_fields
from .measures import KindVote, Pair, StepAgreement, _counts, _ratio, _shared

SCALE = "scale"

FIELDS = ("min", "max", "anchors", "next", "yields")
MAX_POINTS = 9  # one digit key per point
SCALE_LEVELS = ("ordinal", "interval")  # a scale's α: ordinal by default, interval when the project asks for it


def validate_step(step_doc: dict, where: str) -> list[tuple[str, str]]:
    found = foreign_fields(step_doc, where, FIELDS) + target_problems(step_doc, where)
    low, high = step_doc["min"], step_doc["max"]
    if low >= high:
        return [*found, (where, f"a scale's min ({low}) must be below its max ({high})")]  # no points to anchor
    if high - low + 1 > MAX_POINTS:
        found.append((where, f"a scale from {low} to {high} has {high - low + 1} points; at most {MAX_POINTS} "
                             "(one digit key each)"))
    for point in step_doc.get("anchors", {}):
        try:
            number = int(point)
        except ValueError:
            number = None
        if number is None or str(number) != point or not low <= number <= high:
            found.append((f"{where}/anchors/{point}", f"an anchor names a point of the scale, an integer from "
                                                      f"{low} to {high}; not {point!r}"))
    return found


def canonical(step_doc: dict) -> dict:
    anchors = dict(sorted(step_doc.get("anchors", {}).items(), key=lambda item: int(item[0])))
    return {**text_fields(step_doc), "min": step_doc["min"], "max": step_doc["max"], "anchors": anchors,
            **target_of(step_doc)}


def parse_value(step: Step, raw) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or not step.min <= raw <= step.max:
        raise ProtocolError(f"step {step.id!r} takes a whole number from {step.min} to {step.max}, not {raw!r}")
    return raw


def key_of(step: Step, point: int) -> str:
    """The digit that picks ``point``: its position on the scale (for a 1-5 scale, the point itself)."""
    return str(point - step.min + 1)


def describe(step: Step) -> dict:
    # The keys are given, not recomputed by the page: one rule for the screen, the preview and the adjudicator.
    return {"min": step.min, "max": step.max, "anchors": [[point, wording] for point, wording in step.anchors],
            "points": [[key_of(step, point), point] for point in range(step.min, step.max + 1)]}


def summary(step: Step) -> str:
    anchors = ", ".join(f"{point} {wording}" for point, wording in step.anchors)
    return f"{step.min} to {step.max}" + (f" ({anchors})" if anchors else "")


# ------------------------------------------------------- agreement, the pre-labeler's vote and score


def agree(units: Sequence[Sequence[int]], lowest: int, highest: int, level: str = "ordinal") -> StepAgreement:
    """A scale step: α at the ordinal (default) or interval level over the points ``lowest``..``highest``."""
    if level not in SCALE_LEVELS:
        raise ValueError(f"a scale's level is one of {', '.join(SCALE_LEVELS)}, not {level!r}")
    from ... import agreement  # NumPy and krippendorff: only when agreement is measured (measures._counts)

    points = tuple(range(lowest, highest + 1))
    counts, weights = _counts(units, points)
    answered = sum(1 for values in units if values)
    return StepAgreement("scale", f"{level} α", agreement.alpha(counts, level, domain=points, weights=weights),
                         agreement.percent_agreement(counts, weights), agreement.pairable_units(counts, weights),
                         answered)


def vote(values: Sequence[int | None]) -> KindVote:
    """The median of the valid points; the lower middle one for an even count."""
    valid = [value for value in values if isinstance(value, int) and not isinstance(value, bool)]
    value = statistics.median_low(valid) if valid else None
    return KindVote(SCALE, value, len(valid), dict(Counter(valid)))


def quadratic_kappa(gold: Sequence[int], predicted: Sequence[int], points: Sequence[int]) -> float | None:
    """Quadratic-weighted Cohen's κ (scikit-learn's), None when undefined."""
    if len(gold) < 2:
        return None
    from sklearn.metrics import cohen_kappa_score  # scikit-learn is heavy to import: only when scoring a scale

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a zero division is reported as NaN, which is None here
        kappa = cohen_kappa_score(list(gold), list(predicted), labels=list(points), weights="quadratic")
    return None if math.isnan(kappa) else round(float(kappa), 4)


def _point(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def score(pairs: Sequence[Pair], minimum: int, maximum: int) -> dict:
    """Mean absolute error (points) and quadratic-weighted κ over the scale ``minimum..maximum``."""
    shared = [pair for pair in _shared(pairs) if _point(pair.gold) and _point(pair.predicted)]
    gold = [pair.gold for pair in shared]
    predicted = [pair.predicted for pair in shared]
    mae = round(sum(abs(g - p) for g, p in zip(gold, predicted)) / len(shared), 4) if shared else None
    # κ of a rater who gives one point whatever the sentence is 0 by construction (its expected agreement equals
    # the observed), which reads as "no better than chance": say it is undefined, and why.
    undefined = ""
    if len(shared) >= 2 and len(set(predicted)) == 1:
        undefined = "undefined: the pre-labeler gave one value"
    elif len(shared) >= 2 and len(set(gold)) == 1:
        undefined = "undefined: gold has one value"
    kappa = None if undefined else quadratic_kappa(gold, predicted, range(minimum, maximum + 1))
    return {"kind": SCALE, "metric": "mean absolute error, quadratic-weighted κ", "pairs": len(shared),
            "mae": mae, "kappa": kappa, "kappa_undefined": undefined,
            "exact_match": _ratio(sum(1 for g, p in zip(gold, predicted) if g == p), len(shared))}
