"""CogniBench's protocol as it was written in Python before protocols became documents (frozen copy).

``tests/test_protocol_document.py`` compares the built-in CogniBench document's walk and ``describe()`` with
this, path by path. It keeps its own copy of the vocabulary and wording so that it stays the "before" side
whatever happens to annotator/domain/vocabulary.py.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.db.models.enums import TextChoices


class Label(TextChoices):
    IRRELEVANT = "irrelevant", "Irrelevant"
    FAITHFUL = "faithful", "Faithful"
    INVENTED = "invented", "Invented"
    MISLEADING = "misleading", "Misleading"
    SPECULATIVE = "speculative", "Speculative"
    RELIABLE = "reliable", "Reliable"
    UNEQUIVOCAL = "unequivocal", "Unequivocal"


class Step(TextChoices):
    # Reworded by issue 26 (item 8) so that y, like 1, is the first answer at every step; the walk is unchanged.
    RELEVANCE = "relevance", "Is the sentence relevant?"
    KIND = "kind", "Factual or cognitive?"
    FAITHFULNESS = "faithfulness", "Faithful or invented?"
    RATIONAL = "rational", "Is it rational?"
    GROUNDED = "grounded", "Is it grounded in the reference?"
    UNEQUIVOCAL = "unequivocal", "Is it unequivocal?"


class Answer(TextChoices):
    IRRELEVANT = "irrelevant", "Irrelevant"
    RELEVANT = "relevant", "Relevant"
    FACTUAL = "factual", "Factual"
    COGNITIVE = "cognitive", "Cognitive"
    FAITHFUL = "faithful", "Faithful"
    INVENTED = "invented", "Invented"
    YES = "yes", "Yes"
    NO = "no", "No"


STEP_ANSWERS = {
    Step.RELEVANCE: (Answer.RELEVANT, Answer.IRRELEVANT),
    Step.KIND: (Answer.FACTUAL, Answer.COGNITIVE),
    Step.FAITHFULNESS: (Answer.FAITHFUL, Answer.INVENTED),
    Step.RATIONAL: (Answer.YES, Answer.NO),
    Step.GROUNDED: (Answer.YES, Answer.NO),
    Step.UNEQUIVOCAL: (Answer.YES, Answer.NO),
}
YES_NO_KEYS = {Answer.YES: "y", Answer.NO: "n", Answer.RELEVANT: "y", Answer.IRRELEVANT: "n"}

STEP_DEFINITIONS: dict[Step, str] = {
    Step.RELEVANCE: (
        "Irrelevant sentences carry nothing to check against the reference: greetings, filler, "
        "restating the question, offers of further help. Anything that says something about the "
        "topic is relevant."
    ),
    Step.KIND: (
        "Factual: the sentence reports information (a fact, figure, name, date or event) that can be "
        "checked directly against the reference. Cognitive: it goes beyond reporting: an inference, "
        "explanation, evaluation, comparison, prediction, opinion or advice."
    ),
    Step.FAITHFULNESS: (
        "Faithful: the reference states this information. Invented: the reference does not contain "
        "it, or says something different."
    ),
    Step.RATIONAL: (
        "Rational: the reasoning is logically sound and does not lead the reader to a wrong "
        "conclusion. No means misleading: illogical, self-contradictory or drawing a conclusion "
        "the premises cannot support."
    ),
    Step.GROUNDED: (
        "Grounded: the reference supplies evidence for the statement. No means speculative: "
        "sensible, but nothing in the reference backs it."
    ),
    Step.UNEQUIVOCAL: (
        "Unequivocal: the reference leaves no other reasonable conclusion. No means reliable: well "
        "supported, but other conclusions remain possible."
    ),
}

LABEL_DEFINITIONS: dict[Label, str] = {
    Label.IRRELEVANT: "Carries nothing to check: greetings, filler, restating the question.",
    Label.FAITHFUL: "Factual, and the reference states it.",
    Label.INVENTED: "Factual, but the reference does not contain it or contradicts it.",
    Label.MISLEADING: "Cognitive, and not rational: illogical or leading to a wrong conclusion.",
    Label.SPECULATIVE: "Cognitive and rational, but nothing in the reference backs it.",
    Label.RELIABLE: "Cognitive, rational and grounded in the reference, but other conclusions remain possible.",
    Label.UNEQUIVOCAL: "Cognitive, rational, grounded, and the only reasonable conclusion.",
}


def evidence_required(path) -> bool:
    """annotator/work/services.py before the document: the answers that need evidence."""
    return path.get(Step.FAITHFULNESS) == Answer.FAITHFUL or path.get(Step.GROUNDED) == Answer.YES

Path = dict[str, str]


class ProtocolError(ValueError):
    """An answer that the protocol does not allow at this point."""


def next_step(path: Mapping[str, str]) -> Step | None:
    """The step to ask next, or None when the path has reached a label."""
    relevance = path.get(Step.RELEVANCE)
    if relevance is None:
        return Step.RELEVANCE
    if relevance == Answer.IRRELEVANT:
        return None
    kind = path.get(Step.KIND)
    if kind is None:
        return Step.KIND
    if kind == Answer.FACTUAL:
        return None if Step.FAITHFULNESS in path else Step.FAITHFULNESS
    # Cognitive: rational -> grounded -> unequivocal, stopping at the first 'no'.
    for criterion in (Step.RATIONAL, Step.GROUNDED, Step.UNEQUIVOCAL):
        answer = path.get(criterion)
        if answer is None:
            return criterion
        if answer == Answer.NO:
            return None
    return None


def label_of(path: Mapping[str, str]) -> Label | None:
    """The final label a complete path yields; None while it is incomplete."""
    if next_step(path) is not None:
        return None
    if path[Step.RELEVANCE] == Answer.IRRELEVANT:
        return Label.IRRELEVANT
    if path[Step.KIND] == Answer.FACTUAL:
        return Label(path[Step.FAITHFULNESS])
    if path[Step.RATIONAL] == Answer.NO:
        return Label.MISLEADING
    if path[Step.GROUNDED] == Answer.NO:
        return Label.SPECULATIVE
    if path[Step.UNEQUIVOCAL] == Answer.NO:
        return Label.RELIABLE
    return Label.UNEQUIVOCAL


def steps_of(path: Mapping[str, str]) -> list[Step]:
    """The steps a valid path answered, in protocol order."""
    return [step for step in Step if step in path]


def answer(path: Mapping[str, str], step: str, value: str) -> Path:
    """Answer ``step`` with ``value`` and return the new path.

    The step must be one already answered (the annotator changes an earlier
    answer) or the one asked next. Changing an answer clears every answer after
    it, because later questions depend on earlier ones.
    """
    try:
        step = Step(step)
    except ValueError:
        raise ProtocolError(f"unknown protocol step {step!r}") from None
    if value not in STEP_ANSWERS[step]:
        allowed = " or ".join(STEP_ANSWERS[step])
        raise ProtocolError(f"step {step.value!r} takes {allowed}, not {value!r}")
    validate(path)
    kept: Path = {}
    for answered in steps_of(path):
        if answered == step:
            break
        kept[answered] = path[answered]
    if next_step(kept) != step:
        raise ProtocolError(f"step {step.value!r} is not asked after the answers given so far")
    kept[step] = value
    return kept


def undo(path: Mapping[str, str]) -> Path:
    """Remove the last answer."""
    steps = steps_of(path)
    return {s: path[s] for s in steps[:-1]}


def ordered(path: Mapping[str, str] | None) -> Path:
    """The path with its steps in protocol order.

    PostgreSQL's jsonb does not keep the order of an object's keys (it sorts
    them), so a path read back from the database may come in any order; a path
    is a set of step -> answer, its order is the protocol's.
    """
    path = path or {}
    known = {str(step): path[step] for step in Step if step in path}
    known.update((str(k), v) for k, v in path.items() if k not in known)  # unknown steps last, for validate
    return known


def validate(path: Mapping[str, str]) -> None:
    """Raise ProtocolError unless ``path`` is a walk the protocol can produce (in any key order)."""
    walked: Path = {}
    for key, value in ordered(path).items():
        expected = next_step(walked)
        if expected is None:
            raise ProtocolError(f"step {key!r} comes after the path reached a label")
        if key != expected:
            raise ProtocolError(f"step {key!r} answered where {expected.value!r} was asked")
        if value not in STEP_ANSWERS[expected]:
            raise ProtocolError(f"step {key!r} takes {' or '.join(STEP_ANSWERS[expected])}, not {value!r}")
        walked[key] = value


def path_for_label(label: str) -> Path:
    """The one path that yields ``label`` (used for independent mode and gold)."""
    label = Label(label)
    if label == Label.IRRELEVANT:
        return {Step.RELEVANCE: Answer.IRRELEVANT}
    path: Path = {Step.RELEVANCE: Answer.RELEVANT}
    if label in (Label.FAITHFUL, Label.INVENTED):
        path[Step.KIND] = Answer.FACTUAL
        path[Step.FAITHFULNESS] = label.value
        return _plain(path)
    path[Step.KIND] = Answer.COGNITIVE
    yes_count = {
        Label.MISLEADING: 0,
        Label.SPECULATIVE: 1,
        Label.RELIABLE: 2,
        Label.UNEQUIVOCAL: 3,
    }[label]
    for position, criterion in enumerate((Step.RATIONAL, Step.GROUNDED, Step.UNEQUIVOCAL)):
        if position < yes_count:
            path[criterion] = Answer.YES
        else:
            path[criterion] = Answer.NO
            break
    return _plain(path)


def divergence(first: Mapping[str, str], second: Mapping[str, str]) -> Step | None:
    """The first step at which two paths differ, or None if they are the same walk."""
    for step in Step:
        if first.get(step) != second.get(step):
            return step
    return None


def _plain(path: Mapping[str, str]) -> Path:
    """Store plain strings, so paths serialise to JSON and compare equal."""
    return {str(k): str(v) for k, v in path.items()}


def describe(node_extras=None) -> dict:
    """The protocol as data, for the annotation page to walk in the browser.

    Produced from the functions above (``next_step``, ``label_of``,
    ``path_for_label``) and the vocabulary, so the page never carries a second
    copy of the rules:

    - ``steps``: each question's wording, definition and its two answers with
      their keys (``1``/``2`` and ``y``/``n`` as the question is worded);
    - ``tree``: from the empty path, the step asked and, for each answer, the
      node that follows: another step, or ``{"label": ...}`` where a path ends;
    - ``labels``: the seven labels in key order (``1``-``7``) with their
      wording, definition and the one path that yields each (independent mode).

    ``node_extras(path)``, if given, adds its keys to the node of each path
    (the page marks where an answer needs evidence).
    """
    steps = {
        str(step): {
            "question": str(step.label),
            "definition": STEP_DEFINITIONS[step],
            "answers": [
                {"value": str(value), "label": str(value.label), "key": str(number), "yn": YES_NO_KEYS.get(value, "")}
                for number, value in enumerate(STEP_ANSWERS[step], start=1)
            ],
        }
        for step in Step
    }

    def node(path: Path) -> dict:
        step = next_step(path)
        extras = node_extras(path) if node_extras else {}
        if step is None:
            return {"label": str(label_of(path)), **extras}
        return {"step": str(step), **extras,
                "then": {str(value): node({**path, str(step): str(value)}) for value in STEP_ANSWERS[step]}}

    labels = [
        {"value": str(label), "label": str(label.label), "key": str(number), "definition": LABEL_DEFINITIONS[label],
         "path": path_for_label(label)}
        for number, label in enumerate(Label, start=1)
    ]
    return {"steps": steps, "tree": node({}), "labels": labels}


def paths() -> list[Path]:
    """Every complete path the protocol allows (one per label), in key order of their answers."""
    found: list[Path] = []

    def walk(path: Path) -> None:
        step = next_step(path)
        if step is None:
            found.append(path)
            return
        for value in STEP_ANSWERS[step]:
            walk({**path, str(step): str(value)})

    walk({})
    return found
