"""A multiple step: pick ``min`` to ``max`` of its two to nine answers (digits toggle, Enter confirms).

The answers do not branch: the step carries ``next`` or ``yields``. The path value is the list of the chosen
values in the step's answer order, without repeats, so two equal sets are equal values.
"""

from __future__ import annotations

from ..parts import ProtocolError, Step
from .common import foreign_fields, target_of, target_problems, text_fields

FIELDS = ("answers", "min", "max", "next", "yields")


def validate_step(step_doc: dict, where: str) -> list[tuple[str, str]]:
    found = foreign_fields(step_doc, where, FIELDS) + target_problems(step_doc, where)
    answers = step_doc.get("answers", [])
    for k, answer in enumerate(answers):
        for field in ("next", "yields"):
            if field in answer:
                found.append((f"{where}/answers/{k}/{field}", "a multiple step's answers do not branch: put "
                              "'next' or 'yields' on the step"))
        if answer.get("yn"):
            found.append((f"{where}/answers/{k}/yn", "y and n answer a yes/no question; a multiple step's keys "
                          "toggle its answers"))
    low, high = step_doc.get("min", 1), step_doc.get("max", len(answers))
    if high > len(answers):
        found.append((f"{where}/max", f"max {high} exceeds the step's {len(answers)} answers"))
    if low > high:
        found.append((f"{where}/min", f"min {low} is above max {high}"))
    return found


def canonical(step_doc: dict) -> dict:
    answers = [{"value": a["value"], "label": a["label"], "key": a.get("key", str(number)),
                "evidence": bool(a.get("evidence", False))} for number, a in enumerate(step_doc["answers"], start=1)]
    return {**text_fields(step_doc), "answers": answers, "min": step_doc.get("min", 1),
            "max": step_doc.get("max", len(answers)), **target_of(step_doc)}


def parse_value(step: Step, raw) -> list[str]:
    values = step.values
    if not isinstance(raw, (list, tuple)) or not all(isinstance(value, str) for value in raw):
        raise ProtocolError(f"step {step.id!r} takes a list of its answers ({', '.join(values)}), not {raw!r}")
    unknown = [value for value in raw if value not in values]
    if unknown:
        raise ProtocolError(f"step {step.id!r} has no answer {unknown[0]!r} (it has {', '.join(values)})")
    if len(set(raw)) != len(raw):
        raise ProtocolError(f"step {step.id!r}: an answer is picked twice in {list(raw)!r}")
    if not step.min <= len(raw) <= step.max:
        raise ProtocolError(f"step {step.id!r} takes {_between(step)} of its answers, not {len(raw)}")
    chosen = set(raw)
    return [value for value in values if value in chosen]


def _between(step: Step) -> str:
    return f"{step.min}" if step.min == step.max else f"{step.min} to {step.max}"


def describe(step: Step) -> dict:
    return {"answers": [{"value": a.value, "label": a.label, "key": a.key} for a in step.answers],
            "min": step.min, "max": step.max}


def summary(step: Step) -> str:
    return f"{_between(step)} of {len(step.answers)} answers"
