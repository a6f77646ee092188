"""Reading the marker format back: a prompt into its parts (the baseline judge does), a reply into
one tag per sentence, by index, and a sample's tags into its reading of a sentence.

Pure functions, no database. The format is described in prompting.py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from annotator.domain.vocabulary import HALLUCINATED_LABELS, Label

from autolabel.labelling.prompting import STAGE2_TAGS, STAGE_1, Kind, Verdict

_MARKER_RE = re.compile(r"<s(\d+)>(.*?)</s\1>", re.DOTALL)
_BLOCK_RE = {
    "reference": re.compile(r"<reference>\n?(.*?)\n?</reference>", re.DOTALL),
    "question": re.compile(r"<question>\n?(.*?)\n?</question>", re.DOTALL),
    "response": re.compile(r"<response>\n?(.*?)\n?</response>", re.DOTALL),
}
_STAGE_RE = re.compile(r'<format stage="(\d)">')


@dataclass
class ParsedPrompt:
    stage: int
    reference: str
    question: str
    sentences: list[tuple[int, str]]


def parse_prompt(text: str) -> ParsedPrompt:
    """Read a prompt made by build_messages back into its parts (used by the baseline judge)."""
    stage_match = _STAGE_RE.search(text)
    stage = int(stage_match.group(1)) if stage_match else STAGE_1
    blocks = {}
    for name, regex in _BLOCK_RE.items():
        found = regex.search(text)
        blocks[name] = found.group(1) if found else ""
    sentences = [(int(m.group(1)), m.group(2)) for m in _MARKER_RE.finditer(blocks["response"])]
    return ParsedPrompt(stage, blocks["reference"], blocks["question"], sentences)


class Problem(StrEnum):
    """What can be wrong with a reply; counted per job and shown on its page."""

    MISSING = "missing"  # a sentence has no marker in the reply
    UNKNOWN_TAG = "unknown_tag"  # a marker holds tags we do not know
    EXTRA_TEXT = "extra_text"  # text outside the markers
    UNKNOWN_INDEX = "unknown_index"  # a marker for a sentence that was not asked
    DUPLICATE = "duplicate"  # two different answers for one sentence
    TRUNCATED = "truncated"  # the reply was cut off (finish_reason=length or an open marker)
    EMPTY = "empty"  # no reply text at all


@dataclass
class Stage1Tag:
    verdict: Verdict
    kind: Kind | None  # None for irrelevant


@dataclass
class ParsedReply:
    tags: dict[int, object] = field(default_factory=dict)  # number -> Stage1Tag | Label
    problems: dict[str, int] = field(default_factory=dict)

    def add(self, problem: Problem, count: int = 1):
        self.problems[problem.value] = self.problems.get(problem.value, 0) + count


_WORD_RE = re.compile(r"[a-z]+")
_OPEN_MARKER_TAIL_RE = re.compile(r"<s\d*>?[^<]*$|<$|</s?\d*$")


def _stage1_tag(content: str) -> Stage1Tag | None:
    words = _WORD_RE.findall(content.lower())
    verdicts = {w for w in words if w in Verdict._value2member_map_}
    kinds = {w for w in words if w in Kind._value2member_map_}
    others = [w for w in words if w not in Verdict._value2member_map_ and w not in Kind._value2member_map_]
    if len(verdicts) != 1 or len(kinds) > 1 or others:
        return None
    verdict = Verdict(verdicts.pop())
    if verdict == Verdict.IRRELEVANT:
        return Stage1Tag(verdict, None)
    if not kinds:
        return None
    return Stage1Tag(verdict, Kind(kinds.pop()))


def _stage2_tag(content: str) -> Label | None:
    words = _WORD_RE.findall(content.lower())
    if len(words) != 1 or words[0] not in STAGE2_TAGS:
        return None
    return Label(words[0])


def parse_reply(text: str | None, stage: int, numbers: Sequence[int], truncated: bool = False) -> ParsedReply:
    """Read the tags of the sentences ``numbers`` from a reply, by index.

    Never raises: whatever is wrong is counted in ``problems`` and the sentences
    that could not be read are left out of ``tags`` (the sample abstains on them).
    """
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
        tag = _stage1_tag(match.group(2)) if stage == STAGE_1 else _stage2_tag(match.group(2))
        if tag is None:
            parsed.add(Problem.UNKNOWN_TAG)
            conflicting.add(number)
            continue
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


def sample_label(stage1: Stage1Tag | None, stage2: Label | None) -> tuple[str | None, bool | None, str | None]:
    """One sample's reading of one sentence: (label, hallucinated, kind).

    ``label`` is a Label value or None when the sample did not get that far;
    ``hallucinated`` is None when the sample abstained entirely.
    """
    if stage1 is None:
        return None, None, None
    if stage1.verdict == Verdict.IRRELEVANT:
        return Label.IRRELEVANT.value, False, None
    if stage1.kind == Kind.FACTUAL:
        label = Label.INVENTED if stage1.verdict == Verdict.HALLUCINATED else Label.FAITHFUL
        return label.value, label in HALLUCINATED_LABELS, Kind.FACTUAL.value
    # Cognitive: the sub-category comes from stage 2; without it, stage 1's verdict still counts.
    if stage2 is not None:
        return stage2.value, stage2 in HALLUCINATED_LABELS, Kind.COGNITIVE.value
    return None, stage1.verdict == Verdict.HALLUCINATED, Kind.COGNITIVE.value


def tag_to_json(tag) -> str | None:
    if tag is None:
        return None
    if isinstance(tag, Stage1Tag):
        return tag.verdict.value if tag.kind is None else f"{tag.verdict.value} {tag.kind.value}"
    return str(tag.value if isinstance(tag, Label) else tag)


def tag_from_json(value: str | None, stage: int):
    if value is None:
        return None
    return _stage1_tag(value) if stage == STAGE_1 else _stage2_tag(value)
