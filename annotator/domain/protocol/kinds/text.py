"""A text step: the annotator types an answer (at most ``max_length`` characters, default and most 5,000; blank
only if ``optional``).

The step carries ``next`` or ``yields``. The path value is the string as typed; an optional step left empty is
answered with ``""``. A NUL or a lone surrogate is refused, as everywhere (``domain.storable``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...storable import text_problem
from ..parts import ProtocolError, Step
from .common import VALUE_TEXT_MAX, foreign_fields, target_of, target_problems, text_fields
from .measures import KindVote, Pair, StepAgreement, _shared

TEXT = "text"

FIELDS = ("max_length", "optional", "next", "yields")
MAX_LENGTH = VALUE_TEXT_MAX


def validate_step(step_doc: dict, where: str) -> list[tuple[str, str]]:
    return foreign_fields(step_doc, where, FIELDS) + target_problems(step_doc, where)


def canonical(step_doc: dict) -> dict:
    return {**text_fields(step_doc), "max_length": step_doc.get("max_length", MAX_LENGTH),
            "optional": bool(step_doc.get("optional", False)), **target_of(step_doc)}


def parse_value(step: Step, raw) -> str:
    if not isinstance(raw, str):
        raise ProtocolError(f"step {step.id!r} takes a text, not {type(raw).__name__} {raw!r:.40}")
    if problem := text_problem(raw):  # a NUL, a lone surrogate: no database stores it
        raise ProtocolError(f"step {step.id!r}: the text {problem}")
    if len(raw) > step.max_length:
        raise ProtocolError(f"step {step.id!r} takes at most {step.max_length:,} characters, not {len(raw):,}")
    if not step.optional and not raw.strip():
        raise ProtocolError(f"step {step.id!r} needs an answer (the step is not optional)")
    return raw


def describe(step: Step) -> dict:
    return {"max_length": step.max_length, "optional": step.optional}


def summary(step: Step) -> str:
    return f"at most {step.max_length:,} characters" + (", optional" if step.optional else "")


# ------------------------------------------------------- agreement, the pre-labeler's vote and score


def agree(units: Sequence[Sequence[str]]) -> StepAgreement:
    """A text step: counted, not scored (two justifications differ in words without disagreeing)."""
    answered = sum(1 for values in units if values)
    pairable = sum(1 for values in units if len(values) >= 2)
    return StepAgreement("text", "counted only", None, None, pairable, answered)


def vote(values: Sequence[str | None]) -> KindVote:
    """The first valid text in sample order (a blank text counts as valid only for an optional step: the
    caller passes None for a blank reply to a required one)."""
    valid = [value for value in values if isinstance(value, str)]
    return KindVote(TEXT, valid[0] if valid else None, len(valid))


def score(pairs: Sequence[Pair]) -> dict:
    return {"kind": TEXT, "metric": "not scored (counted)", "pairs": len(_shared(pairs)),
            "predicted": sum(1 for pair in pairs if pair.predicted is not None),
            "gold": sum(1 for pair in pairs if pair.gold is not None)}
