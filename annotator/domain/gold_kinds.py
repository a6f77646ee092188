"""Gold by step kind (issue 42): when annotators who gave the same label agree, and what the gold's walk is.

Two annotators agree on a multiple step when they chose the same set of answers (in whatever order), on a scale
when they gave the same point; a choice step agrees through the label, as it always has. Text never decides gold:
two justifications worded differently are not a dispute (an adjudicator writes or picks the gold text when the
sentence is disputed for another reason). So a sentence whose annotators gave one label but differ on a multiple
or scale step is a dispute and reaches the adjudication queue like a label disagreement.

What a gold's path may hold (a text step left out, a label named without a walk, an older version's walk carried
over), and what the JSONL import takes back, is one rule: ``gold_paths``.

A protocol without such steps (every project before issue 42) keeps today's rule exactly: the label decides and
the gold's walk is the one its label implies (``path_for_label``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .protocol.parts import ProtocolError

DECIDING_KINDS = frozenset({"multiple", "scale"})  # the kinds whose values must agree, besides the label
_ABSENT = object()


def _kind(protocol, step: str) -> str | None:
    """The step's kind, or None for a step the protocol does not have (a path of another version)."""
    try:
        return protocol.step_kind(step)
    except ProtocolError:
        return None


def same_answer(kind: str, values: Sequence) -> bool:
    """Whether all ``values`` given at a step of ``kind`` are the same answer (a multiple step's: the same set)."""
    first = values[0]
    if kind == "multiple":
        return isinstance(first, (list, tuple)) and all(
            isinstance(value, (list, tuple)) and set(value) == set(first) for value in values)
    # A scale's 4 and a bool True (or 4.0) are not the same point: the path refuses those anyway.
    return all(type(value) is type(first) and value == first for value in values)


def disputed_steps(protocol, paths: Sequence[Mapping]) -> list[str]:
    """The multiple and scale steps on which ``paths`` differ: different values, or one annotator answered the
    step and another did not."""
    disputed = []
    for step in protocol.kind_steps():
        kind = _kind(protocol, step)
        if kind not in DECIDING_KINDS:
            continue
        values = [path.get(step, _ABSENT) for path in paths]
        if all(value is _ABSENT for value in values):
            continue
        if any(value is _ABSENT for value in values) or not same_answer(kind, values):
            disputed.append(step)
    return disputed


def _choices(protocol, path: Mapping) -> dict:
    return {step: value for step, value in path.items() if _kind(protocol, step) == "choice"}


def agreed_path(protocol, label: str, paths: Sequence[Mapping]) -> dict | None:
    """The gold walk of annotators who all gave ``label``, or None when they disagree on a multiple or scale step.

    The walk is theirs: the choice answers they share (a label two paths reach: the one its label implies), the
    values they agree on, and a text step only when every annotator wrote the same text (different texts leave
    the gold without it: none of them is the gold text until an adjudicator picks or writes one).
    """
    if not protocol.kind_steps():
        return protocol.path_for_label(label) or {}
    paths = [path if isinstance(path, Mapping) else {} for path in paths]
    if not paths or disputed_steps(protocol, paths):
        return None
    choices = _choices(protocol, paths[0])
    if not choices or any(_choices(protocol, path) != choices for path in paths[1:]):
        choices = dict(protocol.path_for_label(label) or {})
    gold = dict(choices)
    for step in protocol.kind_steps():
        values = [path.get(step, _ABSENT) for path in paths]
        if any(value is _ABSENT for value in values):
            continue
        if _kind(protocol, step) in DECIDING_KINDS or same_answer("text", values):
            gold[step] = values[0]
    return protocol.ordered(gold)


def agreement_holds(protocol, label: str, path: Mapping, paths: Sequence[Mapping], labels: Sequence[str]) -> bool:
    """Whether gold by agreement (``label``, its walk ``path``) still rests on the annotators' answers (their
    ``labels`` and ``paths``): every one gives its label and its value at each multiple and scale step."""
    if any(given != label for given in labels):
        return False
    if not protocol.kind_steps():
        return True
    path = path if isinstance(path, Mapping) else {}
    for step in protocol.kind_steps():
        kind = _kind(protocol, step)
        if kind not in DECIDING_KINDS or step not in path:
            continue
        for given in paths:
            value = given.get(step, _ABSENT) if isinstance(given, Mapping) else _ABSENT
            if value is _ABSENT or not same_answer(kind, [path[step], value]):
                return False
    return True


def reviewed_path(protocol, label: str, path: Mapping) -> dict:
    """The gold walk of one annotator's review: their own walk when it ends on ``label`` (its values and text
    are the gold's), else the walk the label implies."""
    if protocol.kind_steps() and isinstance(path, Mapping) and path:
        try:
            if protocol.label_of(dict(path)) == label:
                return protocol.ordered(dict(path))
        except (ProtocolError, TypeError):  # a walk the current protocol refuses: the label's own walk
            pass
    return protocol.path_for_label(label) or {}

