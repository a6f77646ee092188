"""CogniBench's sequential protocol as module functions, kept for the callers that predate per-project protocols.

Every function delegates to ``protocol.document.COGNIBENCH``, the protocol loaded from the built-in document
``annotator/protocols/cognibench.json``; steps and labels come back as the vocabulary's enums, as before. New
code takes the project's protocol (``annotator.projects.protocols.protocol_for``) and calls the same methods
on it.
"""

from __future__ import annotations

from collections.abc import Mapping

from .document import COGNIBENCH, ProtocolError
from ..vocabulary import Label, Step

Path = dict[str, str]

__all__ = ["ProtocolError", "next_step", "label_of", "steps_of", "answer", "undo", "ordered", "validate",
           "path_for_label", "divergence", "describe", "paths", "COGNIBENCH"]


def next_step(path: Mapping[str, str]) -> Step | None:
    """The step to ask next, or None when the path has reached a label."""
    step = COGNIBENCH.next_step(path)
    return None if step is None else Step(step)


def label_of(path: Mapping[str, str]) -> Label | None:
    """The final label a complete path yields; None while it is incomplete."""
    label = COGNIBENCH.label_of(path)
    return None if label is None else Label(label)


def steps_of(path: Mapping[str, str]) -> list[Step]:
    """The steps a valid path answered, in protocol order."""
    return [Step(step) for step in COGNIBENCH.steps_of(path)]


def answer(path: Mapping[str, str], step: str, value: str) -> Path:
    """Answer ``step`` with ``value`` and return the new path (changing an answer clears the later ones)."""
    return COGNIBENCH.answer(path, step, value)


def undo(path: Mapping[str, str]) -> Path:
    """Remove the last answer."""
    return COGNIBENCH.undo(path)


def ordered(path: Mapping[str, str] | None) -> Path:
    """The path with its steps in protocol order (jsonb sorts an object's keys)."""
    return COGNIBENCH.ordered(path)


def validate(path: Mapping[str, str]) -> None:
    """Raise ProtocolError unless ``path`` is a walk the protocol can produce (in any key order)."""
    COGNIBENCH.validate(path)


def path_for_label(label: str) -> Path:
    """The one path that yields ``label`` (used for independent mode and gold)."""
    return COGNIBENCH.path_for_label(str(Label(label)))


def divergence(first: Mapping[str, str], second: Mapping[str, str]) -> Step | None:
    """The first step at which two paths differ, or None if they are the same walk."""
    step = COGNIBENCH.divergence(first, second)
    return None if step is None else Step(step)


def describe(node_extras=None) -> dict:
    """The protocol as data, for the annotation page to walk in the browser (see ``Protocol.describe``)."""
    return COGNIBENCH.describe(node_extras)


def paths() -> list[Path]:
    """Every complete path the protocol allows (one per label), in key order of their answers."""
    return COGNIBENCH.paths()
