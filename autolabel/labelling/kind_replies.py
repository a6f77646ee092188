"""How a reply carries the values of a protocol's non-choice steps (multiple, scale, text), and how they are read.

A sentence's tag is still the choice answers walked, space separated (stages.py); each non-choice step the walk
passes through adds its value in a tag of its own, named by the step, where the walk passes it::

    <s2>no <step id="error_types">fabricated_fact wrong_citation</step> <step id="severity">4</step>
    <step id="justification">The reference dates the ruling 2019, not 2021.</step></s2>

The step's id is an attribute, not the tag's name, so that no step id (``s1`` is a valid one) can look like
a sentence marker. A value is read by the step's kind:

- multiple: the answer values, separated by spaces or commas; each must be an answer of the step, once; their
  number within ``min..max``; stored in the step's document order;
- scale: one integer within ``min..max``;
- text: the text, trimmed; at most ``max_length`` characters, not blank unless the step is optional.

Anything else is no value: the sample's label still counts, and the reply's problem is counted
(``parsing.Problem.INVALID_VALUE`` / ``MISSING_VALUE``), never raised. The kind's own ``parse_value``
(``annotator.domain.protocol.kinds``) has the last word, so a value read here is one a path accepts.
"""

from __future__ import annotations

import re

from annotator.domain.protocol.kinds import ProtocolError, parse_value

CHOICE = "choice"
_VALUE_RE = re.compile(r"""<step id=["']?([a-z][a-z0-9_]*)["']?>(.*?)</step>""", re.DOTALL)
_ANSWER_SPLIT_RE = re.compile(r"[\s,;|]+")
_INTEGER_RE = re.compile(r"^[+-]?\d{1,3}$")


def split_tag(content: str) -> tuple[str, list[tuple[str, str]]]:
    """(the tag without its step values, [(step id, raw value), ...] in reply order)."""
    values = [(found.group(1), found.group(2)) for found in _VALUE_RE.finditer(content)]
    return _VALUE_RE.sub(" ", content), values


def read_value(step, raw: str):
    """The value ``raw`` gives the non-choice ``step``, or None when it is not one the step accepts."""
    kind = step.kind
    if kind == "multiple":
        chosen = [word for word in _ANSWER_SPLIT_RE.split(raw.strip().lower()) if word]
        order = {answer.value: position for position, answer in enumerate(step.answers)}
        if len(set(chosen)) != len(chosen) or any(word not in order for word in chosen):
            return None
        value = sorted(chosen, key=order.__getitem__)
    elif kind == "scale":
        if not _INTEGER_RE.match(raw.strip()):
            return None
        value = int(raw.strip())
    elif kind == "text":
        value = raw.strip()
    else:
        return None
    try:
        return parse_value(step, value)
    except (ProtocolError, ValueError, TypeError):
        return None


def render_value(step_id: str, value) -> str:
    """A value as the reply writes it (the stored stage-1 tag keeps the values so, read back by ``read_value``)."""
    shown = " ".join(value) if isinstance(value, (list, tuple)) else str(value)
    return f'<step id="{step_id}">{shown}</step>'


def frozen(value):
    """A value that can sit in a frozen reading (a list becomes a tuple)."""
    return tuple(value) if isinstance(value, list) else value


def thawed(value):
    """The value as a path stores it (a tuple back to a list)."""
    return list(value) if isinstance(value, tuple) else value


def what_a_reply_may_contain(step) -> str:
    """The format block's line for a non-choice step: what its tag may hold."""
    if step.kind == "multiple":
        answers = ", ".join(answer.value for answer in step.answers)
        picks = f"{step.min} to {step.max}" if step.min != step.max else f"exactly {step.min}"
        return (f'<step id="{step.id}">…</step>: a list of {picks} of the answer values {answers}, '
                "separated by spaces, each at most once")
    if step.kind == "scale":
        return f'<step id="{step.id}">…</step>: one whole number from {step.min} to {step.max}'
    optional = "; may be empty" if step.optional else "; not empty"
    return f'<step id="{step.id}">…</step>: a text of at most {step.max_length} characters{optional}'


def example_value(step):
    """A value for the format block's example: the first answers a multiple step needs, a scale's top, a short
    text."""
    if step.kind == "multiple":
        return [answer.value for answer in step.answers[:step.min]]
    if step.kind == "scale":
        return step.max
    return "" if step.optional else "A short reason for these answers."


def stage2_pattern(reply) -> str:
    """An allowed stage-2 reply as the format block lists it: the label, then a value tag for each non-choice
    step on the way to it (``stages.Stage2Reply``)."""
    return " ".join([reply.label, *(render_value(step, "…") for step in reply.kind_steps)])


def stage2_example(protocol, reply) -> str:
    """A stage-2 reply filled in, for the example (``example_value``)."""
    return " ".join([reply.label, *(render_value(step, example_value(protocol.step(step)))
                                    for step in reply.kind_steps)])


def values_rule(protocol, steps) -> list[str]:
    """What the value tag of each non-choice step a request asks may hold (none when it asks none)."""
    if not steps:
        return []
    return ["Write each … as that step's value (its tag where the walk passes the step, never left out):",
            *(what_a_reply_may_contain(protocol.step(step)) for step in steps)]
