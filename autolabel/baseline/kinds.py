"""The baseline judge's values for a protocol's non-choice steps (multiple, scale, text: issue 42).

The judge still knows no protocol: it reads each such step from the prompt's protocol block (its kind line, its
answers or points, its length; prompting._kind_lines) and fills the value tags of the reply it chose
(``<step id="severity">…</step>``, prompting.reply_pattern) by lexical rules as plain as its others:

- multiple: the answers whose wording (with the step's definition part about it) shares most content words
  with the sentence, as many as the step's ``min`` (document order on equal overlap);
- scale: the middle point, shifted towards the top by the share of the sentence's content words the reference
  lacks (the sample's jitter moves it, so five samples disagree on borderline sentences and the median is
  voted), one point up for a number the reference does not hold, one down for a hedge;
- text: a short justification naming the sentence's words the reference lacks (or saying the reference holds
  them), cut to the step's length.

Deterministic: the same prompt and seed give the same reply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from autolabel.labelling.kind_replies import render_value, split_tag

_STEP_RE = re.compile(r"^step ([a-z0-9_]+): (.*)$")
_KIND_RE = re.compile(r"^  kind: (multiple|scale|text) \((.*)\)$")
_RANGE_RE = re.compile(r"(\d+) to (\d+)")
_LENGTH_RE = re.compile(r"at most (\d+) characters")
_ANSWER_RE = re.compile(r"^  answer ([a-z0-9_]+) \((.*)\): may be picked$")
_WORDS_RE = re.compile(r"[^\W\d_]{3,}", re.UNICODE)


@dataclass
class KindStep:
    id: str
    kind: str
    low: int = 1  # multiple: fewest picks; scale: the lowest point
    high: int = 1
    length: int = 200  # text
    optional: bool = False
    answers: list = field(default_factory=list)  # multiple: (value, wording)


def read_kind_steps(protocol_text: str) -> dict[str, KindStep]:
    """The non-choice steps described in a prompt's protocol block, by id."""
    steps: dict[str, KindStep] = {}
    current_id, current = "", None
    for line in protocol_text.splitlines():
        if found := _STEP_RE.match(line):
            current_id, current = found.group(1), None
        elif (found := _KIND_RE.match(line)) and current_id:
            current = steps[current_id] = KindStep(current_id, found.group(1))
            detail = found.group(2)
            if bounds := _RANGE_RE.search(detail):
                current.low, current.high = int(bounds.group(1)), int(bounds.group(2))
            if length := _LENGTH_RE.search(detail):
                current.length = int(length.group(1))
            current.optional = "may be empty" in detail
        elif current is not None and (found := _ANSWER_RE.match(line)):
            current.answers.append((found.group(1), found.group(2)))
    return steps


@dataclass(frozen=True)
class Sentence:
    """What the value rules read of one sentence: its content words, those the reference lacks, and cues."""

    words: tuple  # content-word stems
    missing: tuple  # its words (as written) whose stem the reference lacks, in order, once each
    support: float  # share of its content words in the reference, moved by the sample's jitter
    unsupported_number: bool
    hedged: bool


def _multiple(step: KindStep, sentence: Sentence, stems_of) -> list[str]:
    words = set(sentence.words)
    overlap = [(-len(words & set(stems_of(f"{value.replace('_', ' ')} {wording}"))), position, value)
               for position, (value, wording) in enumerate(step.answers)]
    picked = {value for _, _, value in sorted(overlap)[:max(step.low, 1)]}
    return [value for value, _ in step.answers if value in picked]


def _scale(step: KindStep, sentence: Sentence) -> int:
    middle = (step.low + step.high) // 2
    lacking = 1.0 - min(max(sentence.support, 0.0), 1.0)
    point = middle + round(lacking * (step.high - middle)) + int(sentence.unsupported_number) - int(sentence.hedged)
    return min(max(point, step.low), step.high)


def _text(step: KindStep, sentence: Sentence) -> str:
    if sentence.missing:
        text = f"The reference does not mention: {', '.join(sentence.missing[:6])}."
    else:
        text = "The reference holds the sentence's words, but not what the sentence says with them."
    return text[:step.length]


def value_for(step: KindStep, sentence: Sentence, stems_of):
    if step.kind == "multiple":
        return _multiple(step, sentence, stems_of)
    if step.kind == "scale":
        return _scale(step, sentence)
    return _text(step, sentence)


def fill(pattern: str, steps: dict[str, KindStep], sentence: Sentence, stems_of) -> str:
    """The chosen reply with each ``<step id="x">…</step>`` filled in; a step the protocol block does not
    describe is left out (the reply stays readable, its value counted missing)."""
    _, values = split_tag(pattern)
    if not values:
        return pattern
    filled = pattern
    for step_id, _ in values:
        placeholder = render_value(step_id, "…")
        found = steps.get(step_id)
        filled = filled.replace(placeholder, render_value(step_id, value_for(found, sentence, stems_of)) if found else "", 1)
    return filled


def sentence_of(text: str, reference_stems: set, support: float, unsupported_number: bool, hedged: bool,
                stems_of) -> Sentence:
    missing = []
    for word in _WORDS_RE.findall(text):
        stems = stems_of(word)
        if stems and stems[0] not in reference_stems and word.lower() not in (w.lower() for w in missing):
            missing.append(word)
    return Sentence(tuple(stems_of(text)), tuple(missing), support, unsupported_number, hedged)
