"""What the step kinds share: the wording fields, the one target of a non-choice step, fields of another kind."""

from __future__ import annotations

from ...storable import NUL_PROBLEM, text_problem
from ..parts import CHOICE

# How a path's value may look as JSON before any step reads it: a text (a choice's answer or a text step's), an
# integer (a scale's point) or a list of short strings (a multiple step's answers). The save route and the API
# both check it here; the step's own kind then checks the value (``parse_value``).
VALUE_TEXT_MAX = 5000
VALUE_INTEGER_BOUND = 1_000_000
VALUE_LIST_MAX = 9
VALUE_ID_MAX = 40

# The fields a step of some kind may carry beyond id, kind, question, definition, guideline.
KIND_FIELDS = ("answers", "min", "max", "anchors", "max_length", "optional", "next", "yields")


def kind_of(step_doc: dict) -> str:
    return step_doc.get("kind", CHOICE)


def target_problems(step_doc: dict, where: str) -> list[tuple[str, str]]:
    """A multiple, scale or text step leads to one place: exactly one of ``next`` or ``yields`` on the step."""
    if ("next" in step_doc) == ("yields" in step_doc):
        return [(where, f"a {kind_of(step_doc)} step needs exactly one of 'next' (the step that follows) or "
                        "'yields' (the label it ends on)")]
    return []


def foreign_fields(step_doc: dict, where: str, allowed: tuple[str, ...]) -> list[tuple[str, str]]:
    """A field of another kind on this step (e.g. ``max_length`` on a scale), by its path."""
    kind = kind_of(step_doc)
    return [(f"{where}/{field}", f"a {kind} step has no {field!r}" + (
        ": a choice step's answers lead on (put it on an answer)" if field in ("next", "yields") and kind == CHOICE else ""))
        for field in KIND_FIELDS if field in step_doc and field not in allowed]


def target_of(step_doc: dict) -> dict:
    return {"next": step_doc["next"]} if "next" in step_doc else {"yields": step_doc["yields"]}


def text_fields(step_doc: dict) -> dict:
    """The wording every kind shares, defaults written out, in the canonical order."""
    return {"id": step_doc["id"], "kind": kind_of(step_doc), "question": step_doc["question"],
            "definition": step_doc.get("definition", ""), "guideline": step_doc.get("guideline", "")}


def value_shape_problem(data) -> str | None:
    """Why ``data`` cannot be a path's value, as a code ("invalid": no kind's type; "too_long", "nul",
    "surrogate" (text no database stores: ``domain.storable``), "out_of_range", "too_many"), or None. Each caller
    words the code its own way."""
    if isinstance(data, str):
        return "too_long" if len(data) > VALUE_TEXT_MAX else _unstorable(data)
    if isinstance(data, int) and not isinstance(data, bool):
        return None if -VALUE_INTEGER_BOUND <= data <= VALUE_INTEGER_BOUND else "out_of_range"
    if isinstance(data, list) and all(isinstance(item, str) for item in data):
        if len(data) > VALUE_LIST_MAX or any(len(item) > VALUE_ID_MAX for item in data):
            return "too_many"
        return next((problem for item in data if (problem := _unstorable(item))), None)
    return "invalid"


def _unstorable(text: str) -> str | None:
    problem = text_problem(text)
    return None if problem is None else "nul" if problem == NUL_PROBLEM else "surrogate"
