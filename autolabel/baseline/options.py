"""What the baseline judge reads of a prompt's protocol: the replies it may give and what each one means.

The judge knows no protocol. It reads the ``<format>`` block's allowed replies (``reply → where it ends``:
a label, marked when it is a hallucination, or the second request) and the ``<protocol>`` block's wording
(each step's answers and definition, each label's name and definition), and describes every allowed reply
by plain features its lexical rules can use:

- ``hallucinated``: True / False where the reply ends on a label (or goes on to labels that all agree),
  None where the second request decides;
- ``goes_on``: the reply is asked again in a second request;
- ``empty``: the reply's wording speaks of sentences with nothing to check (greetings, filler, courtesy);
- ``reasoning``: how much its wording speaks of inference, reasoning, opinion or advice;
- ``lean``: whether its wording speaks of contradicting the reference (positive) or of adding what the
  reference does not contain (negative), for the tie-break by the evidence;
- ``stems``: the content words of its wording.

``reachable_labels`` walks a stage-2 protocol block from the step(s) a sentence comes in at: the labels its
path can still end on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from autolabel.labelling.kind_replies import split_tag
from autolabel.labelling.prompting import HALLUCINATION_MARK, SECOND_REQUEST

# Word stems (first 6 letters) of the wording that describes sentences with nothing to check ...
EMPTY_CUES = frozenset("greeti filler courte nothin pleasa thanks unrela offtop".split())
# ... and of the wording that describes inference, reasoning and judgement.
REASONING_CUES = frozenset(
    "infere infer reason logica logic opinio conclu judgem evalua explan interp advice argume predic compar".split())

# ... and of the wording that tells a contradiction of the reference from an addition to it.
CONFLICT_CUES = frozenset("contra confli differ opposi mismat disagr misrep inconsi".split())
ADDITION_CUES = frozenset("basele unsupp invent fabric absent adds extrin unveri".split())

_STEP_RE = re.compile(r"^step ([a-z0-9_]+): (.*)$")
_ANSWER_RE = re.compile(r"^  answer ([a-z0-9_]+) \((.*)\): (.*)$")
_LABEL_RE = re.compile(r"^label ([a-z0-9_]+): (.*)$")
_NEXT_RE = re.compile(r"^go on to step ([a-z0-9_]+)$")
_ENDS_RE = re.compile(r"^ends on label ([a-z0-9_]+)$")
# A non-choice step's one way on (prompting._kind_lines), kept as the answer "" so the walks below follow it.
_THEN_RE = re.compile(r"^  then: (.*)$")


@dataclass(frozen=True)
class Option:
    reply: str
    hallucinated: bool | None
    goes_on: bool
    empty: int  # emptiness cues found in its wording
    reasoning: int
    stems: frozenset
    lean: int = 0  # contradiction cues minus addition cues


@dataclass
class _Step:
    definition: str = ""
    answers: dict = None  # value -> (wording, what follows)


def _read_protocol(text: str) -> tuple[str, dict[str, _Step], dict[str, str]]:
    """(first step, steps, label id -> label line) from the protocol block."""
    steps: dict[str, _Step] = {}
    labels: dict[str, str] = {}
    first, current = "", None
    for line in text.splitlines():
        if found := _STEP_RE.match(line):
            current = steps.setdefault(found.group(1), _Step(answers={}))
            first = first or found.group(1)
        elif (found := _THEN_RE.match(line)) and current is not None:
            current.answers[""] = ("", found.group(1))
        elif (found := _ANSWER_RE.match(line)) and current is not None:
            current.answers[found.group(1)] = (found.group(2), found.group(3))
        elif (found := _LABEL_RE.match(line)):
            labels[found.group(1)] = found.group(2)
            current = None
        elif current is not None and line.startswith("  "):
            current.definition += " " + line.strip()
    return first, steps, labels


def _segment(definition: str, wording: str, others: list[str]) -> str:
    """The part of a step's definition about one answer ("Cognitive: it goes beyond ..."), or ""."""
    found = re.search(rf"\b{re.escape(wording)}\b", definition, re.IGNORECASE)
    if not found:
        return ""
    end = len(definition)
    for other in others:
        later = re.compile(rf"\b{re.escape(other)}\b", re.IGNORECASE).search(definition, found.end())
        if later:
            end = min(end, later.start())
    return definition[found.start():end]


def _wording_of_reply(words: list[str], first: str, steps: dict[str, _Step]) -> list[str]:
    """The wording of each answer of a stage-1 reply, walked from the first step, with its part of the
    step's definition."""
    texts, step = [], first
    for word in words:
        described = steps.get(step)
        while described is not None and word not in described.answers and "" in described.answers:
            # A non-choice step (its value is in a tag of its own, not a word): on to where it leads.
            found = _NEXT_RE.match(described.answers[""][1])
            step = found.group(1) if found else ""
            described = steps.get(step)
        if described is None or word not in described.answers:
            break
        wording, follows = described.answers[word]
        others = [w for value, (w, _) in described.answers.items() if value != word]
        texts.extend([wording, _segment(described.definition, wording, others)])
        found = _NEXT_RE.match(follows)
        step = found.group(1) if found else ""
    return texts


def _end(end: str) -> tuple[str | None, bool | None, bool]:
    """(label, hallucinated, goes on) of an allowed reply's end text."""
    if end.startswith(SECOND_REQUEST):
        hallucinated = True if "all of its labels" in end else (None if "some of its labels" in end else False)
        return None, hallucinated, True
    return end.split(" ", 1)[0], HALLUCINATION_MARK in end, False


def read_options(allowed: list[tuple[str, str]], protocol_text: str, stage_one: bool, stems_of) -> list[Option]:
    """The allowed replies as options; ``stems_of(text)`` gives a text's content-word stems."""
    first, steps, labels = _read_protocol(protocol_text)
    options = []
    for reply, end in allowed:
        label, hallucinated, goes_on = _end(end)
        texts = _wording_of_reply(split_tag(reply)[0].split(), first, steps) if stage_one else []
        if label is not None:
            texts.append(labels.get(label, label))
        stems = stems_of(" ".join(texts))
        options.append(Option(
            reply=reply, hallucinated=hallucinated, goes_on=goes_on,
            empty=sum(1 for stem in stems if stem in EMPTY_CUES),
            reasoning=sum(1 for stem in stems if stem in REASONING_CUES),
            stems=frozenset(stems),
            lean=sum(1 for stem in stems if stem in CONFLICT_CUES) - sum(1 for stem in stems if stem in ADDITION_CUES),
        ))
    return options


def reachable_labels(protocol_text: str, entries: list[str]) -> set[str]:
    """The labels a walk of the protocol block's steps can end on from any of ``entries``; empty when none of
    them is a step of the block (the prompt did not say where the sentence comes in)."""
    _, steps, _ = _read_protocol(protocol_text)
    found, seen, todo = set(), set(), [entry for entry in entries if entry in steps]
    while todo:
        step = todo.pop()
        if step in seen:
            continue
        seen.add(step)
        for _, follows in steps[step].answers.values():
            if ends := _ENDS_RE.match(follows):
                found.add(ends.group(1))
            elif (goes := _NEXT_RE.match(follows)) and goes.group(1) in steps:
                todo.append(goes.group(1))
    return found
