"""A scale step: one integer point from ``min`` to ``max`` (at most nine), picked by its position digit 1-9.

``anchors`` words some points (``{"1": "cosmetic", "5": "outcome-changing"}``). The step carries ``next`` or
``yields``. The path value is the int (a bool, a float or a string of digits is refused).
"""

from __future__ import annotations

from ..parts import ProtocolError, Step
from .common import foreign_fields, target_of, target_problems, text_fields

FIELDS = ("min", "max", "anchors", "next", "yields")
MAX_POINTS = 9  # one digit key per point


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
    return {"min": step.min, "max": step.max, "anchors": [[point, wording] for point, wording in step.anchors]}


def summary(step: Step) -> str:
    anchors = ", ".join(f"{point} {wording}" for point, wording in step.anchors)
    return f"{step.min} to {step.max}" + (f" ({anchors})" if anchors else "")
