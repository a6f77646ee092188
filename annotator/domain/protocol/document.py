"""A project's annotation protocol, read from its document: the walk, the labels and the groups.

A protocol document (JSON; format in docs/protocols.md, schema in annotator/protocols/protocol.schema.json)
names steps (questions; a choice step's two to nine answers each lead to another step or end on a label, a
multiple, scale or text step leads to one place whatever its answer: ``protocol.kinds``), labels
and the groups the studio reads (hallucinations, evaluation views, agreement steps, ...). ``load_protocol``
checks it (``protocol.validation``) and returns an immutable ``Protocol``; a document that does not hold
raises ``ProtocolDocumentError`` listing every problem by its path in the document.

A *path* is the mapping of the steps an annotator answered to the answers given: a string for a choice step
(the answer's value) and a text step, a list of values for a multiple step, an integer for a scale (issue 42;
the per-kind rules live in ``protocol.kinds``). Changing an earlier answer clears the later ones, because later
questions depend on earlier ones. Only choice steps branch, so the *shape* of a path (its choice answers)
decides the label. Nothing
here touches the database: the screens, the write routes, gold, agreement and the pre-labeler walk the
same object. CogniBench's protocol is the built-in default (``COGNIBENCH``).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path as FilePath

from ..colours import readable_text_colour
from .canonical import canonical as _canonical
from .parts import CHOICE, EvaluationView, Family, Label, MacroView, ProtocolError, Step
from .tree import topological, tree_node, walk_all
from .validation import problems_of
from .kinds import KINDS, build_step, holds

Path = dict[str, object]  # step id -> str (choice, text), list[str] (multiple) or int (scale)
PROTOCOLS_DIR = FilePath(__file__).resolve().parent.parent.parent / "protocols"


class ProtocolDocumentError(ValueError):
    """A protocol document that does not hold; ``problems`` lists (path in the document, message)."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = list(problems)
        super().__init__("; ".join(f"{where}: {message}" for where, message in self.problems))


# The shipped documents as they were before issue 39, by the checksum of their canonical form: their evaluation
# views declared a ``scope`` the code never applied, so every figure ever shown under them is the figure without
# it (CogniBench's Table 3, docs/autolabel.md). Today's shipped documents declare no scope; a stored copy of an
# older one (a project's protocol version, an export's header) is read as today's, which keeps every figure it
# gave, and an import or ``protocol_set`` of it is "the same protocol" on a project that follows today's.
SUPERSEDED_SHIPPED = {
    "92ba363ffd46abad112fb562ac8ebb02010ba41010b1383e359c215e1f820e6a": "cognibench",
    "85f436d6d81396103ad5dc9b55c6debfedfed953ff59954a007c701046448047": "cognibench_clinical",
}


def load_protocol(document) -> Protocol:
    """The protocol of ``document``; raises ProtocolDocumentError naming every problem. A superseded shipped
    document is read as the shipped one of today (``SUPERSEDED_SHIPPED``)."""
    problems = problems_of(document)
    if problems:
        raise ProtocolDocumentError(problems)
    protocol = Protocol(_canonical(document))
    successor = SUPERSEDED_SHIPPED.get(protocol.checksum)
    return _successor(successor) if successor else protocol


@functools.lru_cache(maxsize=8)
def _successor(name: str) -> Protocol:
    return load_shipped(name)


def read_checksum(stored_checksum: str) -> str:
    """The checksum of the protocol a stored document is read as (itself, but for a superseded shipped one)."""
    successor = SUPERSEDED_SHIPPED.get(stored_checksum)
    return _successor(successor).checksum if successor else stored_checksum


def load_shipped(name: str) -> Protocol:
    """A protocol shipped in annotator/protocols/ (``cognibench``, ...)."""
    return load_protocol(json.loads((PROTOCOLS_DIR / f"{name}.json").read_text()))


def shipped_names() -> list[str]:
    return sorted(p.stem for p in PROTOCOLS_DIR.glob("*.json") if not p.name.endswith(".schema.json"))


class Protocol:
    """An immutable, validated protocol. Build it with ``load_protocol``."""

    __slots__ = ("_document", "_json", "checksum", "id", "version", "name", "modes", "start", "steps", "labels",
                 "_steps", "_labels", "_order", "_rank", "_next", "_after", "_evidence_answers", "_paths", "_path_of",
                 "hallucination_labels", "families", "evaluation_views", "macro", "agreement_steps",
                 "stage_two_steps", "stage_two_labels", "severity_labels", "error_type_labels", "evidence_labels",
                 "_described")

    def __init__(self, document: dict):
        s = object.__setattr__
        s(self, "_document", document)
        s(self, "_json", json.dumps(document, sort_keys=True))
        s(self, "checksum", hashlib.sha256(self._json.encode()).hexdigest())  # identity for caches
        for name in ("id", "version", "name", "start"):
            s(self, name, document[name])
        s(self, "modes", tuple(document["modes"]))
        steps = {d["id"]: build_step(d) for d in document["steps"]}
        labels = {d["id"]: Label(d["id"], d["name"], d["definition"], tuple(d["examples"]), d["colour"], d["key"],
                                 d["requires_evidence"]) for d in document["labels"]}
        s(self, "_steps", steps)
        s(self, "_labels", labels)
        s(self, "steps", tuple(steps))
        s(self, "labels", tuple(labels))
        order = topological(document["start"], steps, list(steps))
        s(self, "_order", order)
        s(self, "_rank", {step: n for n, step in enumerate(order)})
        # step -> answer -> (True, next step) | (False, label)
        s(self, "_next", {sid: {a.value: (a.next is not None, a.next or a.yields) for a in step.answers}
                          for sid, step in steps.items() if step.kind == CHOICE})
        # a step of another kind -> (True, next step) | (False, label), whatever its answer
        s(self, "_after", {sid: (step.next is not None, step.next or step.yields)
                           for sid, step in steps.items() if step.kind != CHOICE})
        s(self, "_evidence_answers", frozenset((sid, a.value) for sid, st in steps.items() for a in st.answers if a.evidence))
        walks = walk_all(self.start, steps)
        all_paths = [shape for shape, _, _ in walks]
        s(self, "_paths", all_paths)
        by_label: dict[str, list[Path]] = {}
        for shape, label, _ in walks:
            by_label.setdefault(label, []).append(shape)
        s(self, "_path_of", {label: found[0] if len(found) == 1 else None for label, found in by_label.items()})
        groups = document["groups"]
        s(self, "hallucination_labels", frozenset(groups["hallucination"]))
        s(self, "families", tuple(Family(f["id"], f["name"], f["colour"], tuple(f["labels"])) for f in groups["families"]))
        s(self, "evaluation_views", tuple(EvaluationView(v["id"], v["name"], frozenset(v["positive"]), tuple(v["scope"]))
                                          for v in groups["evaluation"]["views"]))
        macro = groups["evaluation"].get("macro")
        s(self, "macro", MacroView(macro["id"], macro["name"], tuple(macro["views"])) if macro else None)
        s(self, "agreement_steps", tuple(groups["agreement_steps"]))
        s(self, "stage_two_steps", tuple(groups["stage_two_steps"]))
        stage_two = set(groups["stage_two_steps"])
        s(self, "stage_two_labels", frozenset(label for _, label, asked in walks if stage_two & set(asked)))
        s(self, "severity_labels", frozenset(groups["severity"]))
        s(self, "error_type_labels", frozenset(groups["error_type"]))
        s(self, "evidence_labels", frozenset(
            label for label in labels
            if labels[label].requires_evidence or (by_label.get(label) and all(self._answers_need_evidence(p) for p in by_label[label]))))
        s(self, "_described", None)

    def __setattr__(self, name, value):
        raise AttributeError("a Protocol is immutable; load a new document instead")

    def __eq__(self, other) -> bool:
        return isinstance(other, Protocol) and self._json == other._json

    def __hash__(self) -> int:
        return hash(self._json)

    def __repr__(self) -> str:
        return f"<Protocol {self.id} v{self.version}>"

    # -- the document ---------------------------------------------------------------------------------
    @property
    def document(self) -> dict:
        """The canonical document (a copy): ``load_protocol(p.document) == p``."""
        return copy.deepcopy(self._document)

    def step(self, step_id: str) -> Step:
        try:
            return self._steps[step_id]
        except (KeyError, TypeError):
            raise ProtocolError(f"unknown protocol step {step_id!r}") from None

    def label(self, label_id: str) -> Label:
        try:
            return self._labels[label_id]
        except (KeyError, TypeError):
            raise ProtocolError(f"unknown label {label_id!r}") from None

    def label_name(self, label_id: str) -> str:
        """The label's name, or the id itself for a label this protocol does not define (an older version's)."""
        label = self._labels.get(label_id)
        return label.name if label else str(label_id or "")

    def step_question(self, step_id: str) -> str:
        """The step's question, or the id itself for a step this protocol does not define."""
        step = self._steps.get(step_id)
        return step.question if step else str(step_id or "")

    def answer_name(self, step_id: str, value) -> str:
        """An answer's wording, or the value itself where the protocol does not define it (a multiple step's
        wordings joined by commas, a scale's point, a text as typed)."""
        if isinstance(value, list):
            return ", ".join(self.answer_name(step_id, one) for one in value)
        if value is None or not isinstance(value, str):
            return "" if value is None else str(value)
        step = self._steps.get(step_id)
        return next((a.label for a in step.answers if a.value == value), value) if step else value

    def answers(self, step_id: str) -> tuple[str, ...]:
        """A choice or a multiple step's answer values; empty for a scale or a text step."""
        return self.step(step_id).values

    def step_kind(self, step_id: str) -> str:
        """"choice", "multiple", "scale" or "text"."""
        return self.step(step_id).kind

    def kind_steps(self) -> tuple[str, ...]:
        """The steps that are not choice steps (multiple, scale, text), in protocol order."""
        return tuple(sid for sid in self._order if self._steps[sid].kind != CHOICE)

    def step_domains(self) -> dict[str, tuple[str, ...]]:
        """Each *choice* step's answer values, in key order (the categories of agreement per step). The other
        kinds are not categories of one value: ``kind_steps`` lists them (agreement_kinds measures them)."""
        return {sid: self._steps[sid].values for sid in self._order if self._steps[sid].kind == CHOICE}

    def family_of(self, label_id: str) -> Family | None:
        return next((family for family in self.families if label_id in family.labels), None)

    # -- the walk --------------------------------------------------------------------------------------
    def next_step(self, path: Mapping[str, str]) -> str | None:
        """The step to ask next (also one whose stored answer it does not offer), or None at a label."""
        step = self.start
        while True:
            value = path.get(step)
            if value is None:
                return step
            target = self._target(step, value)
            if target is None:
                return step
            if not target[0]:
                return None
            step = target[1]

    def label_of(self, path: Mapping[str, str]) -> str | None:
        """The label a complete path yields; None while it is incomplete (or not a walk of this protocol)."""
        step = self.start
        while True:
            value = path.get(step)
            target = self._target(step, value) if value is not None else None
            if target is None:
                return None
            if not target[0]:
                return target[1]
            step = target[1]

    def _target(self, step: str, value) -> tuple[bool, str] | None:
        """Where answering ``step`` with ``value`` leads, (True, next step) or (False, label); None where the step
        does not take ``value`` (in its stored form: a multiple step's list in answer order, a scale's int)."""
        after = self._after.get(step)
        if after is None:
            return self._next[step].get(value) if isinstance(value, str) else None
        return after if holds(self._steps[step], value) else None

    def label_of_shape(self, shape: Mapping[str, str]) -> str | None:
        """The label a path *shape* (its choice answers: ``paths()``, ``path_for_label``) leads to, passing the
        steps of other kinds unanswered; None where the shape stops short."""
        step = self.start
        while True:
            value = shape.get(step)
            target = self._after.get(step) or (self._next[step].get(value) if isinstance(value, str) else None)
            if target is None:
                return None
            if not target[0]:
                return target[1]
            step = target[1]

    def steps_of(self, path: Mapping[str, str]) -> list[str]:
        """The steps a path answered, in protocol order."""
        return [step for step in self._order if step in path]

    def answer(self, path: Mapping[str, str], step: str, value) -> Path:
        """Answer ``step`` with ``value`` (its kind's: a str, a list of a multiple step's values in any order, an
        int): the step must be answered already (later answers are dropped) or be the one asked next."""
        step = str(step)
        if step not in self._steps:
            raise ProtocolError(f"unknown protocol step {step!r}")
        value = KINDS[self._steps[step].kind].parse_value(self._steps[step], value)
        self.validate(path)
        kept: Path = {}
        for answered in self.steps_of(path):
            if answered == step:
                break
            value_so_far = path[answered]
            kept[answered] = (str(value_so_far) if isinstance(value_so_far, str)
                              else list(value_so_far) if isinstance(value_so_far, list) else value_so_far)
        if self.next_step(kept) != step:
            raise ProtocolError(f"step {step!r} is not asked after the answers given so far")
        kept[step] = value
        return kept

    def undo(self, path: Mapping[str, str]) -> Path:
        """The path without its last answer."""
        steps = self.steps_of(path)
        return {str(s): path[s] for s in steps[:-1]}

    def ordered(self, path: Mapping[str, str] | None) -> Path:
        """The path with its steps in protocol order (jsonb sorts an object's keys), unknown steps last."""
        path = path or {}
        walked = self._walk(path)
        if len(walked) == len(path):  # a walk of the tree (every stored path): its order is the protocol's
            return walked
        known = {step: path[step] for step in self._order if step in path}
        known.update((str(k), v) for k, v in path.items() if k not in known)
        return known

    def _walk(self, path: Mapping[str, str]) -> Path:
        """The answers of ``path`` along the tree from the start, as far as they lead (each step's answer one the
        step offers). Costs the path's length, not the protocol's size: the write path calls it on every key."""
        walked: Path = {}
        step: str | None = self.start
        while step is not None and step in path:
            target = self._target(step, path[step])
            if target is None:
                break
            walked[step] = path[step]
            step = target[1] if target[0] else None
        return walked

    def validate(self, path: Mapping[str, str]) -> None:
        """Raise ProtocolError unless ``path`` is a walk the protocol can produce (in any key order)."""
        if len(self._walk(path)) == len(path):
            return
        expected: str | None = self.start
        for key, value in self.ordered(path).items():
            if expected is None:
                raise ProtocolError(f"step {key!r} comes after the path reached a label")
            if key != expected:
                raise ProtocolError(f"step {key!r} answered where {expected!r} was asked")
            target = self._target(expected, value)
            if target is None:
                step = self._steps[expected]
                stored = KINDS[step.kind].parse_value(step, value)  # raises, naming what the step takes
                raise ProtocolError(f"step {key!r} stores its answer as {stored!r}, not {value!r}")
            expected = target[1] if target[0] else None

    def path_for_label(self, label: str) -> Path | None:
        """The one path shape that yields ``label`` (independent mode, gold); None if several paths yield it.
        A shape holds the choice answers only: the multiple, scale and text steps on the way are asked next."""
        if label not in self._labels:
            raise ProtocolError(f"unknown label {label!r}")
        found = self._path_of.get(label)
        return dict(found) if found is not None else None

    def paths(self) -> list[Path]:
        """Every path shape (the choice answers of a complete walk, one per way through the tree), in key order of
        their answers. Without multiple, scale or text steps a shape is the complete path."""
        return [dict(path) for path in self._paths]

    def divergence(self, first: Mapping[str, str], second: Mapping[str, str]) -> str | None:
        """The first step (in protocol order) at which two paths differ, or None."""
        for step in self._order:
            if first.get(step) != second.get(step):
                return step
        return None

    def evidence_required(self, path: Mapping[str, str]) -> bool:
        """Whether the answers so far (or the label reached) need evidence when the project requires it."""
        if self._answers_need_evidence(path):
            return True
        label = self.label_of(path)
        return bool(label and self._labels[label].requires_evidence)

    def _answers_need_evidence(self, path: Mapping[str, str]) -> bool:
        return any((step, value) in self._evidence_answers for step, values in path.items()
                   for value in (values if isinstance(values, list) else (values,)) if isinstance(value, str))

    # -- for the browser -------------------------------------------------------------------------------
    def describe(self, node_extras: Callable[[Path], dict] | None = None) -> dict:
        """The protocol as data for the page to walk (static/js/protocol_walk.js): ``steps`` (wording,
        definition, guideline, answers with keys), ``tree`` (from the empty path, the step asked and, per
        answer, the node that follows or ``{"label": ...}``), ``labels`` in key order with their path.
        ``node_extras(path)`` adds its keys to each node (the page marks where an answer needs evidence)."""
        if node_extras is None and self._described is not None:
            return copy.deepcopy(self._described)
        steps = {
            sid: {"kind": step.kind, "question": step.question, "definition": step.definition,
                  "guideline": step.guideline, **KINDS[step.kind].describe(step)}
            for sid, step in ((sid, self._steps[sid]) for sid in self._order)
        }

        labels = [
            {"value": label.id, "label": label.name, "key": label.key, "definition": label.definition,
             "path": self.path_for_label(label.id), "colour": label.colour, "text_colour": readable_text_colour(label.colour),
             "examples": list(label.examples)}
            for label in self._labels.values()
        ]
        described = {"id": self.id, "version": self.version, "name": self.name, "modes": list(self.modes),
                     "steps": steps, "tree": tree_node(self._steps, self.start, node_extras), "labels": labels}
        if node_extras is None:
            object.__setattr__(self, "_described", copy.deepcopy(described))
        return described


COGNIBENCH = load_shipped("cognibench")


def default_protocol() -> Protocol:
    """The protocol where there is no project (and of a project that never set one): CogniBench's."""
    return COGNIBENCH
