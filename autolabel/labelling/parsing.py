"""Reading the marker format back: a prompt into its parts (the baseline judge does), a reply into
one tag per sentence, by index, and a sample's tags into its reading of a sentence.

Pure functions, no database. The format is described in prompting.py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from annotator.domain.protocol.document import Protocol

from autolabel.labelling.stages import STAGE_1, Stage1Reading, Stage2Reading, Stages, stages_of

_MARKER_RE = re.compile(r"<s(\d+)>(.*?)</s\1>", re.DOTALL)
_BLOCK_RE = {
    "reference": re.compile(r"<reference>\n?(.*?)\n?</reference>", re.DOTALL),
    "question": re.compile(r"<question>\n?(.*?)\n?</question>", re.DOTALL),
    "response": re.compile(r"<response>\n?(.*?)\n?</response>", re.DOTALL),
}
_STAGE_RE = re.compile(r'<format stage="(\d)">')
_FORMAT_RE = re.compile(r'<format stage="\d">\n(.*?)\n</format>', re.DOTALL)
# An allowed reply: answer values, and value tags of non-choice steps (prompting.reply_pattern).
_ALLOWED_RE = re.compile(r'^((?:[a-z0-9_ ]|<step id="[a-z0-9_]+">…</step>)+) → (.+)$', re.MULTILINE)
_PROTOCOL_RE = re.compile(r"<protocol [^>]*>\n(.*?)\n</protocol>", re.DOTALL)
_ENTRIES_RE = re.compile(r"<entries>\n(.*?)\n</entries>", re.DOTALL)
_ENTRY_RE = re.compile(r"^sentence (\d+): step (.+)$", re.MULTILINE)


@dataclass
class ParsedPrompt:
    stage: int
    reference: str
    question: str
    sentences: list[tuple[int, str]]
    allowed: list[tuple[str, str]] = field(default_factory=list)  # (reply, where it ends), from the format block
    protocol: str = ""  # the protocol block's text: the questions, answers and labels asked
    entries: dict[int, list[str]] = field(default_factory=dict)  # stage 2: number -> the step(s) it comes in at


def parse_prompt(text: str) -> ParsedPrompt:
    """Read a prompt made by build_messages back into its parts (used by the baseline judge)."""
    stage_match = _STAGE_RE.search(text)
    stage = int(stage_match.group(1)) if stage_match else STAGE_1
    blocks = {}
    for name, regex in _BLOCK_RE.items():
        found = regex.search(text)
        blocks[name] = found.group(1) if found else ""
    sentences = [(int(m.group(1)), m.group(2)) for m in _MARKER_RE.finditer(blocks["response"])]
    found = _FORMAT_RE.search(text)
    allowed = [(m.group(1), m.group(2)) for m in _ALLOWED_RE.finditer(found.group(1))] if found else []
    described = _PROTOCOL_RE.search(text)
    listed = _ENTRIES_RE.search(text)
    entries = {int(m.group(1)): m.group(2).split(" or step ") for m in _ENTRY_RE.finditer(listed.group(1))} if listed else {}
    return ParsedPrompt(stage, blocks["reference"], blocks["question"], sentences, allowed,
                        described.group(1) if described else "", entries)


class Problem(StrEnum):
    """What can be wrong with a reply; counted per job and shown on its page."""

    MISSING = "missing"  # a sentence has no marker in the reply
    UNKNOWN_TAG = "unknown_tag"  # a marker holds tags we do not know
    EXTRA_TEXT = "extra_text"  # text outside the markers
    UNKNOWN_INDEX = "unknown_index"  # a marker for a sentence that was not asked
    DUPLICATE = "duplicate"  # two different answers for one sentence
    TRUNCATED = "truncated"  # the reply was cut off (finish_reason=length or an open marker)
    EMPTY = "empty"  # no reply text at all
    # A non-choice step's value (issue 42's kinds; kind_replies.py): the label still counts, the step abstains.
    MISSING_VALUE = "missing_value"  # a step the tag's walk passes has no value tag
    INVALID_VALUE = "invalid_value"  # a value the step does not accept, or one for a step the walk does not pass


@dataclass
class ParsedReply:
    tags: dict[int, object] = field(default_factory=dict)  # number -> Stage1Reading | Stage2Reading
    problems: dict[str, int] = field(default_factory=dict)

    def add(self, problem: Problem, count: int = 1):
        self.problems[problem.value] = self.problems.get(problem.value, 0) + count


_OPEN_MARKER_TAIL_RE = re.compile(r"<s\d*>?[^<]*$|<$|</s?\d*$")


def _read_tag(stages: Stages, content: str, stage: int):
    return stages.stage1_reading(content) if stage == STAGE_1 else stages.stage2_reading(content)


def parse_reply(text: str | None, stage: int, numbers: Sequence[int], truncated: bool = False,
                protocol: Protocol | None = None) -> ParsedReply:
    """Read the tags of the sentences ``numbers`` from a reply, by index, under ``protocol`` (the built-in
    default when None): a stage-1 tag is walked through the tree word by word (stages.py), a stage-2 tag
    must name a label stage 2 reaches (then the values of the non-choice steps on its way, as stage 1's); anything
    else is an unknown tag.

    Never raises: whatever is wrong is counted in ``problems`` and the sentences
    that could not be read are left out of ``tags`` (the sample abstains on them).
    """
    stages = stages_of(protocol)
    parsed = ParsedReply()
    wanted = set(numbers)
    if not text or not text.strip():
        parsed.add(Problem.EMPTY)
        parsed.add(Problem.MISSING, len(wanted))
        return parsed
    seen: dict[int, object] = {}
    conflicting: set[int] = set()
    last_end = 0
    outside = []
    for match in _MARKER_RE.finditer(text):
        outside.append(text[last_end:match.start()])
        last_end = match.end()
        number = int(match.group(1))
        if number not in wanted:
            parsed.add(Problem.UNKNOWN_INDEX)
            continue
        tag = _read_tag(stages, match.group(2), stage)
        if tag is None:
            parsed.add(Problem.UNKNOWN_TAG)
            conflicting.add(number)
            continue
        if isinstance(tag, (Stage1Reading, Stage2Reading)):
            if tag.missing_values:
                parsed.add(Problem.MISSING_VALUE, tag.missing_values)
            if tag.invalid_values:
                parsed.add(Problem.INVALID_VALUE, tag.invalid_values)
        if number in seen and seen[number] != tag:
            conflicting.add(number)
            parsed.add(Problem.DUPLICATE)
        seen[number] = tag
    tail = text[last_end:]
    if truncated or _OPEN_MARKER_TAIL_RE.search(tail.strip()):
        parsed.add(Problem.TRUNCATED)
    else:
        outside.append(tail)
    if any(chunk.strip() for chunk in outside):
        parsed.add(Problem.EXTRA_TEXT)
    for number in wanted:
        if number in seen and number not in conflicting:
            parsed.tags[number] = seen[number]
    missing = len([n for n in wanted if n not in seen and n not in conflicting])
    if missing:
        parsed.add(Problem.MISSING, missing)
    return parsed


def sample_label(stage1: Stage1Reading | None, stage2: Stage2Reading | str | None,
                 protocol: Protocol | None = None) -> tuple[str | None, bool | None, str]:
    """One sample's reading of one sentence: (label, hallucinated, family id).

    ``label`` is None when the sample did not get that far; ``hallucinated`` is None when the sample
    abstained (stages.Stages.sample_reading says when a sentence that entered stage 2 still counts).
    """
    reading = stages_of(protocol).sample_reading(stage1, stage2)
    return reading.label, reading.hallucinated, reading.family


def sample_values(stage1: Stage1Reading | None, stage2: Stage2Reading | None = None,
                  protocol: Protocol | None = None) -> dict:
    """The values a sample gave the non-choice steps it walked (step -> value), valid ones only: its stage-1
    reading's, and its stage-2 reading's when that reading counts for the sentence."""
    return stages_of(protocol).sample_values(stage1, stage2)


def tag_to_json(tag) -> str | None:
    if tag is None:
        return None
    return tag.text if isinstance(tag, (Stage1Reading, Stage2Reading)) else str(tag)


def tag_from_json(value: str | None, stage: int, protocol: Protocol | None = None):
    if value is None:
        return None
    return _read_tag(stages_of(protocol), value, stage)
