"""A choice step (the default kind): one of two to nine answers, each leading to a step or ending on a label.

Its canonical form has no ``kind`` (every document written before issue 42 keeps its bytes and checksum).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..parts import ProtocolError, Step
from .common import foreign_fields
from .measures import StepAgreement, _measure

FIELDS = ("answers",)


def validate_step(step_doc: dict, where: str) -> list[tuple[str, str]]:
    return foreign_fields(step_doc, where, FIELDS)


def canonical(step_doc: dict) -> dict:
    answers = []
    for number, answer in enumerate(step_doc["answers"], start=1):
        entry = {"value": answer["value"], "label": answer["label"], "key": answer.get("key", str(number)),
                 "yn": answer.get("yn", "")}
        entry.update({"next": answer["next"]} if "next" in answer else {"yields": answer["yields"]})
        entry["evidence"] = bool(answer.get("evidence", False))
        answers.append(entry)
    return {"id": step_doc["id"], "question": step_doc["question"], "definition": step_doc.get("definition", ""),
            "guideline": step_doc.get("guideline", ""), "answers": answers}


def parse_value(step: Step, raw) -> str:
    if not isinstance(raw, str) or raw not in step.values:
        raise ProtocolError(f"step {step.id!r} takes {' or '.join(step.values)}, not {raw!r}")
    return str(raw)  # a plain str (the vocabulary's enums are str subclasses): a path is plain JSON


def describe(step: Step) -> dict:
    return {"answers": [{"value": a.value, "label": a.label, "key": a.key, "yn": a.yn} for a in step.answers]}


def summary(step: Step) -> str:
    return f"{len(step.answers)} answers, each leading on"


# --------------------------------------------------------------------------- agreement


def agree(units: Sequence[Sequence[str]], answers: Sequence[str]) -> StepAgreement:
    """A choice step: nominal α over its answers (as ``agreement.measures`` does for the labels and steps)."""
    return _measure("choice", "nominal α", units, tuple(answers), "nominal")
