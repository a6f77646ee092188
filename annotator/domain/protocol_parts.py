"""The parts of a loaded protocol: its steps and their answers, its labels and the groups the studio reads.

Immutable values that ``Protocol`` (protocol_document) builds from a canonical document.
"""

from __future__ import annotations

from dataclasses import dataclass


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
    answers: tuple[Answer, ...]

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(answer.value for answer in self.answers)


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
