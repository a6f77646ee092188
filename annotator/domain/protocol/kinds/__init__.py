"""The kinds of a protocol step (issue 42): ``choice`` (the default), ``multiple``, ``scale`` and ``text``.

One module per kind, each exposing the same five functions, gathered in ``KINDS``:

- ``validate_step(step_doc, where) -> [(path, message), ...]``: the kind's own problems of a step of the right
  shape (the schema checked types); ``where`` is the step's JSON pointer (``/steps/3``).
- ``canonical(step_doc) -> dict``: the step with every default written out (protocol.canonical).
- ``parse_value(step, raw)``: the path value of an answer ``raw``, in its one stored form, or ``ProtocolError``.
- ``describe(step) -> dict``: the kind's fields for the page (``Protocol.describe``).
- ``summary(step) -> str``: one line for a person (``protocol_show --steps``, ``protocol_set``).

A kind's measures live in its module too (``measures`` holds the values they return):

- ``agree(units, ...) -> StepAgreement``: its agreement (``annotator/domain/agreement_kinds.py``'s ``MEASURES``);
- ``vote(values, ...) -> KindVote`` and ``score(pairs, ...)``: the pre-labeler's vote over its samples and its
  score against gold, for a kind that is not a choice (``autolabel/labelling/kind_votes.py``,
  ``autolabel/evaluation/kind_scores.py`` dispatch to them).

A path maps each step to a value: a str for a choice (the answer's value) and a text step, the list of the
chosen values in the step's answer order for a multiple step, an int for a scale. Only a choice step branches;
the other kinds carry ``next`` or ``yields`` on the step. docs/protocols.md, "Adding a step kind", lists every
reader of a path that a new kind must teach.
"""

from __future__ import annotations

from types import MappingProxyType

from ..parts import CHOICE, Answer, ProtocolError, Step
from . import choice, multiple, scale, text
from .common import kind_of

KINDS = MappingProxyType({"choice": choice, "multiple": multiple, "scale": scale, "text": text})
KIND_NAMES = tuple(KINDS)

__all__ = ["KINDS", "KIND_NAMES", "CHOICE", "kind_of", "build_step", "holds", "parse_value", "summary", "ProtocolError"]


def build_step(doc: dict) -> Step:
    """The Step of a canonical step document."""
    answers = tuple(Answer(a["value"], a["label"], a["key"], a.get("yn", ""), a.get("next"), a.get("yields"),
                           a.get("evidence", False)) for a in doc.get("answers", ()))
    anchors = tuple(sorted((int(point), wording) for point, wording in doc.get("anchors", {}).items()))
    return Step(doc["id"], doc["question"], doc["definition"], doc["guideline"], answers, kind=kind_of(doc),
                min=doc.get("min"), max=doc.get("max"), anchors=anchors, max_length=doc.get("max_length"),
                optional=bool(doc.get("optional", False)), next=doc.get("next"), yields=doc.get("yields"))


def summary(step: Step) -> str:
    """``"severity: scale, 1 to 5 (1 cosmetic, 5 outcome-changing)"``."""
    return f"{step.id}: {step.kind}, {KINDS[step.kind].summary(step)}"


def parse_value(step: Step, raw):
    """The stored form of the answer ``raw`` to ``step``; ProtocolError naming the step if the step refuses it."""
    return KINDS[step.kind].parse_value(step, raw)


def holds(step: Step, value) -> bool:
    """Whether ``value`` is an answer to ``step`` in its stored form (a path's value as the walk reads it)."""
    try:
        parsed = KINDS[step.kind].parse_value(step, value)
    except ProtocolError:
        return False
    return type(parsed) is type(value) and parsed == value
