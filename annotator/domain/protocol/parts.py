"""The parts of a loaded protocol: its steps and their answers, its labels and the groups the studio reads.

Immutable values that ``Protocol`` (protocol.document) builds from a canonical document. ``ProtocolError`` lives
here (re-exported by protocol.document) so that the per-kind modules (``protocol.kinds``) can raise it without
importing the Protocol that imports them.
"""

from __future__ import annotations

from dataclasses import dataclass


class ProtocolError(ValueError):
    """An answer or a path that the protocol does not allow."""


CHOICE = "choice"


@dataclass(frozen=True)
class Answer:
    value: str
    label: str  # the wording on the button
    key: str  # 1-9
    yn: str  # "y", "n" or ""
    next: str | None  # the step that follows, or None where the path ends ...
    yields: str | None  # ... on this label
    evidence: bool  # needs evidence when the project requires it


@dataclass(frozen=True)
class Step:
    id: str
    question: str
    definition: str
    guideline: str
    answers: tuple[Answer, ...]  # a choice or a multiple step's; none for a scale or a text step
    # Issue 42's kinds (docs/protocols.md); a choice step keeps the defaults. Only a choice step branches (each
    # answer leads on); the other kinds lead to one place, ``next`` or ``yields`` on the step itself.
    kind: str = CHOICE  # "choice", "multiple", "scale" or "text"
    min: int | None = None  # multiple: fewest answers picked; scale: the lowest point
    max: int | None = None  # multiple: most answers picked; scale: the highest point
    anchors: tuple[tuple[int, str], ...] = ()  # scale: (point, wording), in point order
    max_length: int | None = None  # text
    optional: bool = False  # text: "" is an answer
    next: str | None = None  # not choice: the step that follows, or None where the path ends ...
    yields: str | None = None  # ... on this label

    @property
    def values(self) -> tuple[str, ...]:
        """The answers' values (a choice or a multiple step's); empty for a scale or a text step."""
        return tuple(answer.value for answer in self.answers)

    @property
    def points(self) -> tuple[int, ...]:
        """A scale's points, min to max; empty for the other kinds."""
        return tuple(range(self.min, self.max + 1)) if self.kind == "scale" else ()


@dataclass(frozen=True)
class Label:
    id: str
    name: str
    definition: str
    examples: tuple[str, ...]
    colour: str
    key: str
    requires_evidence: bool


@dataclass(frozen=True)
class Family:
    id: str
    name: str
    colour: str
    labels: tuple[str, ...]


@dataclass(frozen=True)
class EvaluationView:
    id: str
    name: str
    positive: frozenset[str]
    scope: tuple[str, ...]  # the labels the view counts


@dataclass(frozen=True)
class MacroView:
    id: str
    name: str
    views: tuple[str, ...]  # the evaluation views it averages
