"""A protocol split into the pre-labeler's two requests: what each asks, the replies it allows, how a reply
is walked back into a reading of the sentence.

Stage 1 asks the steps the document does not mark for a second request (``groups.stage_two_steps``),
walking from its start: a stage-1 reply is the answer values of the steps walked, in order, space separated,
and ends either on a label or on a step marked for stage 2 (the sentence then *enters* stage 2). Stage 2 asks
the marked steps, for the sentences whose stage-1 reading entered them, and its reply is the label id
reached. A document that marks no step (or marks its first step) is one stage: stage 1 walks the whole tree.

A step of another kind than choice (multiple, scale, text: issue 42) does not branch: the walk goes through it
to the step's own ``next`` or ``yields``, and a stage-1 reply adds its value in a tag of its own where the walk
passes it (kind_replies.py). Such a step is asked in the request whose walk reaches it: a stage-1 reply carries the values of the
steps before the second request, a stage-2 reply names its label and then, in the same tags, the values of the
non-choice steps on the way to that label after the sentence entered stage 2 (a severity scale after
"speculative or not", say; ``Stage2Reply``).

Pure, no database. ``stages_of(protocol)`` is computed once per distinct document.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from annotator.domain.protocol.cache import ProtocolCache
from annotator.domain.protocol.document import Protocol, default_protocol
from annotator.domain.protocol.groups import reading

from autolabel.labelling import kind_replies

STAGE_1 = 1
STAGE_2 = 2
_WORD_RE = re.compile(r"[a-z0-9_]+")


def reply_words(text: str) -> list[str]:
    """The words of a tag, lower-cased; punctuation between them (commas, arrows) is not a word."""
    return _WORD_RE.findall((text or "").lower())


@dataclass(frozen=True)
class Reply:
    """One reply stage 1 allows: the answer values in walk order, and where it ends."""

    words: tuple[str, ...]
    path: tuple[tuple[str, str | None], ...]  # (step, answer value) pairs walked; None for a non-choice step
    label: str | None  # the label it ends on, or None ...
    entry: str | None  # ... when it enters stage 2 at this step

    @property
    def text(self) -> str:
        return " ".join(self.words)

    @property
    def kind_steps(self) -> tuple[str, ...]:
        """The non-choice steps the reply walks through, in walk order: each adds its value to the tag."""
        return tuple(step for step, value in self.path if value is None)


@dataclass(frozen=True)
class Stage1Reading:
    """A sentence's stage-1 tag, walked: the label it ended on, or the stage-2 step it entered."""

    words: tuple[str, ...]
    label: str | None
    entry: str | None
    values: tuple[tuple[str, object], ...] = ()  # (non-choice step, its valid value), in walk order
    # The reply's values that were missing or not valid (counted as the reply's problems, not compared).
    missing_values: int = field(default=0, compare=False)
    invalid_values: int = field(default=0, compare=False)

    @property
    def text(self) -> str:
        """The tag as stored: the words, then each valid value in its own tag (read back the same)."""
        return " ".join([*self.words, *(kind_replies.render_value(step, value) for step, value in self.values)])

    def kind_values(self) -> dict:
        """step -> value, as a path stores it."""
        return {step: kind_replies.thawed(value) for step, value in self.values}


@dataclass(frozen=True)
class Stage2Reply:
    """One reply stage 2 allows: a label, and the non-choice steps walked on the way to it in stage 2 (each adds
    its value in a tag of its own after the label). A label several stage-2 walks reach asks the values of the
    non-choice steps of any of them, in document order."""

    label: str
    kind_steps: tuple[str, ...] = ()


@dataclass(frozen=True)
class Stage2Reading:
    """A sentence's stage-2 tag, read: the label it names and the valid values of its non-choice steps."""

    label: str
    values: tuple[tuple[str, object], ...] = ()
    missing_values: int = field(default=0, compare=False)
    invalid_values: int = field(default=0, compare=False)

    @property
    def text(self) -> str:
        return " ".join([self.label, *(kind_replies.render_value(step, value) for step, value in self.values)])

    def kind_values(self) -> dict:
        return {step: kind_replies.thawed(value) for step, value in self.values}


@dataclass(frozen=True)
class SampleReading:
    label: str | None  # None when the sample did not get as far as a label
    hallucinated: bool | None  # None: the sample abstains
    family: str  # the label's family id ("" when unknown or the label has none)


class Stages:
    """The pre-labeler's view of one protocol."""

    def __init__(self, protocol: Protocol):
        self.protocol = protocol
        marked = set(protocol.stage_two_steps)
        self.two_stage = bool(marked) and protocol.start not in marked
        self.stage_two_steps = tuple(s for s in protocol.stage_two_steps) if self.two_stage else ()
        self._marked = set(self.stage_two_steps)
        self.replies: tuple[Reply, ...] = tuple(self._walk(protocol.start, ()))
        self._by_words = {reply.words: reply for reply in self.replies}
        self.entries = tuple(dict.fromkeys(reply.entry for reply in self.replies if reply.entry))
        self._reachable = {entry: self._labels_from(entry) for entry in self.entries}
        labels = [label for label in protocol.labels if any(label in found for found in self._reachable.values())]
        self.stage_two_labels: tuple[str, ...] = tuple(labels)
        self.stage_one_labels = tuple(label for label in protocol.labels
                                      if any(reply.label == label for reply in self.replies))
        # The steps stage 2 asks: the marked steps and any step after them, in protocol order.
        asked = set()
        for entry in self.entries:
            asked |= self._steps_from(entry)
        self.stage_two_asked = tuple(step for step in protocol.steps if step in asked)
        self.stage_one_asked = tuple(dict.fromkeys(step for reply in self.replies for step, _ in reply.path))
        self.kind_steps = tuple(step for step in self.stage_one_asked
                                if protocol.step(step).kind != kind_replies.CHOICE)
        kind_steps_to: dict[str, set] = {}
        for entry in self.entries:
            for walked, label in self._paths_from(entry, ()):
                kind_steps_to.setdefault(label, set()).update(step for step, value in walked if value is None)
        self.stage_two_replies = tuple(
            Stage2Reply(label, tuple(step for step in protocol.steps if step in kind_steps_to.get(label, ())))
            for label in self.stage_two_labels)
        self._stage_two_reply = {reply.label: reply for reply in self.stage_two_replies}
        self.stage_two_kind_steps = tuple(step for step in self.stage_two_asked
                                          if protocol.step(step).kind != kind_replies.CHOICE)
        # Whether a sample's reading can carry values at all (a choice-only protocol's votes stay as they were).
        self.has_kind_steps = bool(self.kind_steps or self.stage_two_kind_steps)

    # -- building -----------------------------------------------------------------------------------------
    def _follows(self, step: str) -> list[tuple[str | None, str | None, str | None]]:
        """(answer value, next step, label) for each way on from ``step``: a choice step's answers, or the one
        way of a step of another kind (value None: the reply carries it in a tag of its own)."""
        described = self.protocol.step(step)
        if described.kind != kind_replies.CHOICE:
            return [(None, described.next, described.yields)]
        return [(answer.value, answer.next, answer.yields) for answer in described.answers]

    def _walk(self, step: str, path: tuple) -> list[Reply]:
        found = []
        for value, following, label in self._follows(step):
            walked = (*path, (step, value))
            words = tuple(value for _, value in walked if value is not None)
            if following is None:
                found.append(Reply(words, walked, label, None))
            elif following in self._marked:
                found.append(Reply(words, walked, None, following))
            else:
                found.extend(self._walk(following, walked))
        return found

    def _paths_from(self, step: str, walked: tuple) -> list[tuple[tuple, str]]:
        """Every walk from ``step`` to a label, through marked steps too: ((step, answer value), ...), label."""
        found = []
        for value, following, label in self._follows(step):
            here = (*walked, (step, value))
            if following is None:
                found.append((here, label))
            elif all(following != seen for seen, _ in here):
                found.extend(self._paths_from(following, here))
        return found

    def _labels_from(self, step: str, seen: frozenset = frozenset()) -> frozenset:
        labels = set()
        for _, following, label in self._follows(step):
            if following is None:
                labels.add(label)
            elif following not in seen:
                labels |= self._labels_from(following, seen | {step})
        return frozenset(labels)

    def _steps_from(self, step: str) -> set:
        steps = {step}
        for _, following, _ in self._follows(step):
            if following is not None and following not in steps:
                steps |= self._steps_from(following)
        return steps

    # -- reading replies ----------------------------------------------------------------------------------
    def stage1_reading(self, text: str) -> Stage1Reading | None:
        """Walk the tree with the tag's words; None for an unknown word, a wrong order or an incomplete walk.

        The values of the non-choice steps walked are read from their own tags (kind_replies.py): a missing or
        invalid one leaves the step without a value and is counted on the reading; a value for a step the walk
        does not pass is invalid too. The walk (and so the label) stands either way."""
        words, raw_values = kind_replies.split_tag(text or "")
        reply = self._by_words.get(tuple(reply_words(words)))
        if reply is None:
            return None
        values, missing, invalid = self._values(reply.kind_steps, raw_values)
        return Stage1Reading(reply.words, reply.label, reply.entry, values, missing_values=missing,
                             invalid_values=invalid)

    def stage2_reading(self, text: str) -> Stage2Reading | None:
        """The label a stage-2 tag names and the values of the non-choice steps on the way to it (read as a
        stage-1 tag's are); None when the tag names no label stage 2 can reach."""
        words, raw_values = kind_replies.split_tag(text or "")
        found = reply_words(words)
        if len(found) != 1 or found[0] not in self._stage_two_reply:
            return None
        values, missing, invalid = self._values(self._stage_two_reply[found[0]].kind_steps, raw_values)
        return Stage2Reading(found[0], values, missing_values=missing, invalid_values=invalid)

    def _values(self, walked: tuple[str, ...], raw_values: list[tuple[str, str]]) -> tuple[tuple, int, int]:
        """(valid values in walk order, how many walked steps have none, how many given were invalid): a value
        for a step not walked, a second value for one step, or one the step does not accept is invalid."""
        given: dict[str, str] = {}
        invalid = 0
        for step, raw in raw_values:
            if step not in walked or step in given:
                invalid += 1
            else:
                given[step] = raw
        values = []
        for step in walked:
            if step not in given:
                continue
            value = kind_replies.read_value(self.protocol.step(step), given[step])
            if value is None:
                invalid += 1
            else:
                values.append((step, kind_replies.frozen(value)))
        return tuple(values), sum(1 for step in walked if step not in given), invalid

    def reachable(self, entry: str) -> frozenset:
        return self._reachable.get(entry, frozenset())

    def reply_for(self, reading: Stage1Reading) -> Reply:
        return self._by_words[reading.words]

    def counted_stage2(self, stage1: Stage1Reading | None, stage2: Stage2Reading | str | None) -> str | None:
        """The stage-2 label that counts for the sentence (a reading's, or a label id as tests and old callers
        give it): only for a stage-1 reading that entered stage 2, and only a label reachable from that entry."""
        label = stage2.label if isinstance(stage2, Stage2Reading) else stage2
        if stage1 is None or stage1.label is not None or label is None:
            return None
        return label if label in self.reachable(stage1.entry) else None

    def sample_values(self, stage1: Stage1Reading | None, stage2: Stage2Reading | str | None) -> dict:
        """step -> value of the non-choice steps a sample answered: its stage-1 reading's, and its stage-2
        reading's when that reading counts (``counted_stage2``)."""
        values = stage1.kind_values() if stage1 is not None else {}
        if isinstance(stage2, Stage2Reading) and self.counted_stage2(stage1, stage2) is not None:
            values.update(stage2.kind_values())
        return values

    def sample_reading(self, stage1: Stage1Reading | None, stage2: Stage2Reading | str | None) -> SampleReading:
        """One sample's reading of one sentence.

        Stage 2 counts only for a sentence whose stage-1 reading entered it, and only with a label reachable
        from that entry. Without one, the sample still knows the sentence is (or is not) a hallucination, or
        its family, when every label reachable from the entry agrees; otherwise it abstains."""
        if stage1 is None:
            return SampleReading(None, None, "")
        if stage1.label is not None:
            return self._of_label(stage1.label)
        reachable = self.reachable(stage1.entry)
        counted = self.counted_stage2(stage1, stage2)
        if counted is not None:
            return self._of_label(counted)
        hallucinated = {label in self.protocol.hallucination_labels for label in reachable}
        families = {self._family(label) for label in reachable}
        return SampleReading(None, hallucinated.pop() if len(hallucinated) == 1 else None,
                             families.pop() if len(families) == 1 else "")

    def _of_label(self, label: str) -> SampleReading:
        return SampleReading(label, label in self.protocol.hallucination_labels, self._family(label))

    def _family(self, label: str) -> str:
        family = self.protocol.family_of(label)
        return family.id if family else ""

    # -- examples -----------------------------------------------------------------------------------------
    def stage1_reply_for_label(self, label: str) -> Reply | None:
        """The stage-1 reply of a label's path (the first path when several reach it); None for an unknown label."""
        if label in self.stage_two_labels and label not in self.stage_one_labels:
            entries = [reply for reply in self.replies if reply.entry and label in self.reachable(reply.entry)]
            return entries[0] if entries else None
        return next((reply for reply in self.replies if reply.label == label), None)

    def stage1_tag_for_label(self, label: str) -> str | None:
        """The stage-1 tag (its answer values) of a label's path; None for an unknown label."""
        found = self.stage1_reply_for_label(label)
        return found.text if found else None

    def tie_break_order(self) -> tuple[str, ...]:
        return tie_break_order(self.protocol)


def tie_break_order(protocol: Protocol) -> tuple[str, ...]:
    """The vote's order on equal counts, each part in document order: hallucinated labels first, so that a tie is
    resolved towards flagging for review; then the labels of some family; last those outside every family
    (CogniBench: irrelevant), so that a tie keeps a sentence in the figures rather than dropping it."""
    hallucinated = protocol.hallucination_labels
    counted = reading(protocol).family_labels
    return (tuple(label for label in protocol.labels if label in hallucinated)
            + tuple(label for label in protocol.labels if label not in hallucinated and label in counted)
            + tuple(label for label in protocol.labels if label not in hallucinated and label not in counted))


_CACHE: ProtocolCache[Stages] = ProtocolCache()


def stages_of(protocol: Protocol | None = None) -> Stages:
    """The stages of ``protocol`` (the built-in default when None), computed once per document."""
    protocol = protocol or default_protocol()
    return _CACHE.get_or_make(protocol.checksum, lambda: Stages(protocol))


def stage_two_numbers(stages: Stages, stage1_tags: Sequence[tuple[int, str]]) -> list[int]:
    """The sentence numbers whose stage-1 tag (number, tag text) entered stage 2."""
    numbers = set()
    for number, tag in stage1_tags:
        reading = stages.stage1_reading(tag) if tag else None
        if reading is not None and reading.entry is not None:
            numbers.add(int(number))
    return sorted(numbers)


def label_field_problems(protocol: Protocol, fields: dict[str, str]) -> dict[str, str]:
    """For each field (name -> label id) that holds no label of ``protocol``, why: {field: message}."""
    problems = {}
    for name, value in fields.items():
        if value not in protocol.labels:
            problems[name] = (f"{value!r} is not a label of the project's protocol {protocol.name!r} "
                              f"(its labels: {', '.join(protocol.labels)}).")
    return problems
