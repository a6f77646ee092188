"""What the rest of the studio reads of a protocol: its labels, steps and groups, from the document.

A protocol's document (annotator/protocols/protocol.schema.json, docs/protocols.md) names the labels, the
steps and their answers, and the groups the reports, the pre-labeler and the evaluation read: which labels
are a hallucination, the families shares are counted within, the evaluation views and their macro, the
steps agreement is measured on, the steps a pre-labeler asks in a second request, the labels that take a
severity or an error type. This module reads them once per protocol (``reading(protocol)``, cached by the
protocol's id and version), so no feature spells a label or a step of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .cache import ProtocolCache

NEUTRAL_COLOUR = "#5d4037"


@dataclass(frozen=True)
class EvaluationView:
    id: str
    name: str
    positive: frozenset
    scope: frozenset | None  # None: every label


@dataclass(frozen=True)
class Family:
    id: str
    name: str
    colour: str
    labels: tuple


@dataclass(frozen=True)
class Reading:
    """One protocol's labels, steps and groups, as plain values."""

    id: str
    version: int
    name: str
    labels: tuple
    label_names: dict
    label_definitions: dict
    label_colours: dict
    label_keys: dict
    steps: tuple
    step_questions: dict
    step_definitions: dict
    step_options: dict  # step -> tuple of {"value", "label", "key", "yn"} in key order (none: a scale, a text)
    step_answers: dict  # step -> tuple of answer values, in key order (a choice or a multiple step's)
    answer_names: dict  # (step, value) -> wording
    evidence_answers: frozenset  # (step, value) pairs that need evidence
    evidence_labels: frozenset
    hallucinated: frozenset
    families: tuple
    views: tuple
    macro: tuple  # the views the macro averages
    macro_name: str
    agreement_steps: tuple
    stage_two_steps: tuple
    severity_labels: frozenset
    error_type_labels: frozenset
    label_paths: dict = field(default_factory=dict)  # label -> list of the path shapes (choice answers) reaching it
    step_parents: dict = field(default_factory=dict)  # step -> ((step, choice answer value), ...) that lead to it
    start: str = ""

    def step_title(self, step: str) -> str:
        """"Step 3 · Faithful or invented?": its place in the document and its question."""
        if step == "label":
            return f"Final label ({len(self.labels)} categories)"
        return f"Step {self.steps.index(step) + 1} · {self.step_questions[step]}"

    def step_scope(self, step: str) -> str:
        """Which sentences a step's agreement is measured over: those both annotators were asked it on."""
        if step == "label":
            return "all sentences both annotators labelled"
        if step == self.start:
            return "all sentences"
        answers = [f"“{self.answer_names[parent]}” to “{self.step_questions[parent[0]]}”"
                   for parent in self.step_parents.get(step, ())]
        return "sentences both answered " + " or ".join(answers) if answers else "sentences both were asked it on"

    def label_name(self, label: str) -> str:
        return self.label_names.get(label, label)

    def answer_wording(self, step: str, value) -> str:
        """An answer as a page shows it, whatever its step's kind: a choice's wording, a multiple step's
        wordings joined by commas, a scale's point, a text as typed; the value itself where the protocol lacks it."""
        if isinstance(value, list):
            return ", ".join(self.answer_wording(step, one) for one in value)
        if not isinstance(value, str):
            return str(value)
        return self.answer_names.get((step, value), value)

    def colour(self, label: str) -> str:
        return self.label_colours.get(label) or NEUTRAL_COLOUR

    def family_of(self, label: str) -> Family | None:
        return next((family for family in self.families if label in family.labels), None)

    def view(self, view_id: str) -> EvaluationView | None:
        return next((view for view in self.views if view.id == view_id), None)

    def evidence_required(self, path: dict, label: str | None = None) -> bool:
        """Whether an answer on ``path`` (or the label it reached) needs evidence when the project requires it."""
        if label and label in self.evidence_labels:
            return True
        return any((step, value) in self.evidence_answers for step, values in path.items()
                   for value in (values if isinstance(values, list) else (values,)) if isinstance(value, str))

    @property
    def family_labels(self) -> frozenset:
        """The labels of some family (CogniBench: every label but irrelevant, its "relevant" sentences): the
        denominator of every family's share, and the labels the vote prefers, on a tie, to those outside every
        family. Every label when the protocol has no family."""
        if not self.families:
            return frozenset(self.labels)
        return frozenset(label for family in self.families for label in family.labels)

    @property
    def supported_labels(self) -> frozenset:
        """Labels backed by the reference: those that need evidence, or whose path has an answer that does."""
        return frozenset(label for label in self.labels if label in self.evidence_labels or any(
            (step, value) in self.evidence_answers for path in self.label_paths.get(label, ())
            for step, value in path.items()))


@dataclass(frozen=True)
class Rate:
    """One rate of the gold (the reports page) and of the faithfulness report, defined once for both:
    sentences whose label is in ``numerator`` / sentences whose label is in ``denominator`` (None: every
    sentence). ``denominator_name`` names the denominator wherever the figure is shown."""

    id: str
    title: str
    numerator: frozenset
    denominator: frozenset | None
    denominator_name: str
    header: str  # a table column's header: what it counts, over what
    family: str = ""  # the family a share or a family's rate is about


def shown_families(read: Reading) -> tuple:
    """The families whose share is a figure: every family, but of exactly two only the second (the first's share
    is one minus it)."""
    return read.families[1:] if len(read.families) == 2 else read.families


def rated_families(read: Reading) -> tuple:
    """The families whose hallucination rate is a figure: those holding hallucination labels and others. A
    family made only of hallucination labels has a rate of 1 by construction, measured by nothing."""
    return tuple(family for family in read.families
                 if set(family.labels) & read.hallucinated and not set(family.labels) <= read.hallucinated)


def rates(read: Reading) -> tuple:
    """Every rate, in the order the pages show them (docs/autolabel.md, *Definitions*):

    - ``hallucination_rate``: sentences with a hallucination label / every sentence;
    - ``<family>_share`` (``shown_families``): sentences of the family / sentences in some family;
    - ``<family>_hallucination_rate`` (``rated_families``): the family's hallucinated sentences / its sentences.
    """
    in_families = read.family_labels
    families_named = ", ".join(family.name.lower() for family in read.families)
    found = [Rate("hallucination_rate", "Hallucination rate (all sentences)", read.hallucinated, None,
                  "all sentences", "Hallucination rate (all sentences)")]
    found += [Rate(f"{family.id}_share", f"Share of {family.name.lower()} statements (of the sentences in a family: "
                                         f"{families_named})", frozenset(family.labels), in_families,
                   f"sentences in a family ({families_named})", f"{family.name} share (of sentences in a family)",
                   family.id)
              for family in shown_families(read)]
    for family in rated_families(read):
        wrong = [label for label in family.labels if label in read.hallucinated]
        title = " or ".join([read.label_name(wrong[0]), *(read.label_name(label).lower() for label in wrong[1:])])
        found.append(Rate(f"{family.id}_hallucination_rate", f"{title} ({family.name.lower()} sentences)",
                          frozenset(wrong), frozenset(family.labels), f"{family.name.lower()} sentences",
                          f"{family.name} hallucination rate (of {family.name.lower()} sentences)", family.id))
    return tuple(found)


def rate_of(rate: Rate, counts: dict) -> float | None:
    """A rate from gold label counts (label -> sentences); None when its denominator is 0."""
    denominator = sum(counts.values()) if rate.denominator is None else \
        sum(counts.get(label, 0) for label in rate.denominator)
    numerator = sum(counts.get(label, 0) for label in rate.numerator)
    return numerator / denominator if denominator else None


_BY_CHECKSUM: ProtocolCache[Reading] = ProtocolCache()


def reading(protocol) -> Reading:
    """The protocol's reading, computed once per distinct document (its checksum: two projects may hold
    different documents under the same id and version)."""
    return _BY_CHECKSUM.get_or_make(protocol.checksum, lambda: _read(protocol.document))


def _paths(document: dict) -> dict:
    """Label -> the path shapes reaching it: the choice answers only (a multiple, scale or text step leads to one
    place whatever its answer, so it adds nothing to a shape)."""
    steps = {step["id"]: step for step in document["steps"]}
    found: dict = {}

    def walk(step_id, path, seen):
        if step_id in seen:  # a cycle is refused by validation; never loop here
            return
        step = steps[step_id]
        if step.get("kind", "choice") != "choice":
            if "yields" in step:
                found.setdefault(step["yields"], []).append(path)
            elif step.get("next") in steps:
                walk(step["next"], path, seen | {step_id})
            return
        for answer in step["answers"]:
            after = {**path, step_id: answer["value"]}
            if "yields" in answer:
                found.setdefault(answer["yields"], []).append(after)
            elif answer.get("next") in steps:
                walk(answer["next"], after, seen | {step_id})

    if document.get("start") in steps:
        walk(document["start"], {}, frozenset())
    return found


def _read(document: dict) -> Reading:
    labels = tuple(label["id"] for label in document["labels"])
    steps = tuple(step["id"] for step in document["steps"])
    groups = document.get("groups") or {}
    evaluation = groups.get("evaluation") or {}
    views = tuple(
        EvaluationView(view["id"], view["name"], frozenset(view["positive"]),
                       frozenset(view["scope"]) if view.get("scope") else None)
        for view in evaluation.get("views", ()))
    macro = evaluation.get("macro") or {}
    return Reading(
        id=document.get("id", ""), version=document.get("version", 0), name=document.get("name", ""),
        labels=labels,
        label_names={label["id"]: label["name"] for label in document["labels"]},
        label_definitions={label["id"]: label.get("definition", "") for label in document["labels"]},
        label_colours={label["id"]: label.get("colour", "") for label in document["labels"]},
        label_keys={label["id"]: label.get("key") or str(n) for n, label in enumerate(document["labels"], start=1)},
        steps=steps,
        step_questions={step["id"]: step["question"] for step in document["steps"]},
        step_definitions={step["id"]: step.get("definition", "") for step in document["steps"]},
        step_options={step["id"]: tuple({"value": a["value"], "label": a["label"], "key": a.get("key") or str(n),
                                         "yn": a.get("yn", "")} for n, a in enumerate(step.get("answers", ()), start=1))
                      for step in document["steps"]},
        step_answers={step["id"]: tuple(a["value"] for a in step.get("answers", ())) for step in document["steps"]},
        answer_names={(step["id"], a["value"]): a["label"] for step in document["steps"] for a in step.get("answers", ())},
        evidence_answers=frozenset((step["id"], a["value"]) for step in document["steps"]
                                   for a in step.get("answers", ()) if a.get("evidence")),
        evidence_labels=frozenset(label["id"] for label in document["labels"] if label.get("requires_evidence")),
        hallucinated=frozenset(groups.get("hallucination", ())),
        families=tuple(Family(f["id"], f["name"], f.get("colour") or NEUTRAL_COLOUR, tuple(
            label for label in labels if label in f["labels"])) for f in groups.get("families", ())),
        views=views,
        macro=tuple(macro.get("views", ())),
        macro_name=macro.get("name", ""),
        agreement_steps=tuple(step for step in steps if step in groups["agreement_steps"])
        if groups.get("agreement_steps") else steps,
        stage_two_steps=tuple(groups.get("stage_two_steps", ())),
        severity_labels=frozenset(groups.get("severity", ())),
        error_type_labels=frozenset(groups.get("error_type", ())),
        label_paths=_paths(document),
        step_parents={step: tuple((s["id"], a["value"]) for s in document["steps"] for a in s.get("answers", ())
                                  if a.get("next") == step) for step in steps},
        start=document.get("start", ""),
    )
