"""Evidence spans (PROBE): character-level overlap between two annotators' evidence.

Pure functions over ``(start, end)`` character offsets into one reference text;
nothing here touches the database. Two annotators' evidence for the same
sentence is compared as the *sets of reference characters* each selected, so
overlapping or adjacent spans of one annotator count once and the measure does
not depend on how a selection was cut into spans.

- ``jaccard``: |A ∩ B| / |A ∪ B| (1 when both chose exactly the same characters).
- ``f1``: the Dice coefficient 2|A ∩ B| / (|A| + |B|), which is the F1 of B
  against A taken as the truth (and symmetric), SQuAD-style but over characters.

Both are undefined (None) when neither annotator gave any evidence: "no
evidence" against "no evidence" is not agreement about where the evidence is.
When only one of them gave evidence, both measures are 0.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

Span = tuple[int, int]


def normalise(spans: Iterable[Span]) -> list[Span]:
    """Sorted, merged half-open spans; empty or reversed spans are dropped."""
    cleaned = sorted((int(s), int(e)) for s, e in spans if int(e) > int(s))
    merged: list[list[int]] = []
    for start, end in cleaned:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def covered(spans: Iterable[Span]) -> int:
    """How many characters the spans cover (overlaps counted once)."""
    return sum(e - s for s, e in normalise(spans))


def intersection(first: Iterable[Span], second: Iterable[Span]) -> int:
    """How many characters both sets of spans cover: a linear merge of the two sorted lists."""
    a, b = normalise(first), normalise(second)
    i = j = total = 0
    while i < len(a) and j < len(b):
        start = max(a[i][0], b[j][0])
        end = min(a[i][1], b[j][1])
        if end > start:
            total += end - start
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


@dataclass(frozen=True)
class Overlap:
    first: int  # characters selected by the first annotator
    second: int  # by the second
    both: int  # by both

    @property
    def union(self) -> int:
        return self.first + self.second - self.both

    @property
    def jaccard(self) -> float | None:
        return self.both / self.union if self.union else None

    @property
    def f1(self) -> float | None:
        total = self.first + self.second
        return 2 * self.both / total if total else None

    @property
    def precision(self) -> float | None:
        """Share of the second annotator's characters the first also chose."""
        return self.both / self.second if self.second else None

    @property
    def recall(self) -> float | None:
        """Share of the first annotator's characters the second also chose."""
        return self.both / self.first if self.first else None


def overlap(first: Iterable[Span], second: Iterable[Span]) -> Overlap:
    first, second = normalise(first), normalise(second)
    return Overlap(covered(first), covered(second), intersection(first, second))


@dataclass(frozen=True)
class OverlapSummary:
    """Evidence agreement over many (sentence, annotator pair) units."""

    units: int  # pairs where at least one annotator gave evidence
    both_gave: int  # pairs where both did
    mean_jaccard: float | None  # mean over ``units`` (a one-sided pair counts 0)
    mean_f1: float | None
    pooled_jaccard: float | None  # over all characters of all units (long spans weigh more)
    pooled_f1: float | None


def summarise(pairs: Iterable[tuple[Iterable[Span], Iterable[Span]]]) -> OverlapSummary:
    """Mean and pooled character overlap of many pairs of evidence sets."""
    jaccards, f1s = [], []
    both_gave = first_total = second_total = both_total = 0
    for first, second in pairs:
        result = overlap(first, second)
        if result.jaccard is None:
            continue
        jaccards.append(result.jaccard)
        f1s.append(result.f1)
        both_gave += bool(result.first and result.second)
        first_total += result.first
        second_total += result.second
        both_total += result.both
    pooled = Overlap(first_total, second_total, both_total)
    return OverlapSummary(
        units=len(jaccards),
        both_gave=both_gave,
        mean_jaccard=sum(jaccards) / len(jaccards) if jaccards else None,
        mean_f1=sum(f1s) / len(f1s) if f1s else None,
        pooled_jaccard=pooled.jaccard,
        pooled_f1=pooled.f1,
    )


# --------------------------------------------------------------------------- offsets in a browser

# A browser counts a text in UTF-16 code units and reads CR LF as one line break; evidence offsets are
# Python string offsets (code points) into Dialogue.reference. A character beyond the basic plane
# (CJK extensions B-H, emoji) is one character here and two in the page.
_BROWSER_SPECIAL = re.compile("\r\n|[\U00010000-\U0010FFFF]")


def to_browser_offset(reference: str, offset: int) -> int:
    """The offset in the page's text of the reference's character ``offset``."""
    if reference.isascii() and "\r" not in reference:
        return offset
    shift = 0
    for match in _BROWSER_SPECIAL.finditer(reference, 0, offset):
        shift += -1 if match.group() == "\r\n" else 1
    return offset + shift


def from_browser_offset(reference: str, offset: int) -> int:
    """The reference's character at the page's ``offset`` (the inverse of ``to_browser_offset``)."""
    if reference.isascii() and "\r" not in reference:
        return offset
    seen = position = 0
    for match in _BROWSER_SPECIAL.finditer(reference):
        plain = match.start() - position  # characters before the match, one unit each
        if seen + plain >= offset:
            break
        seen += plain
        width = 1 if match.group() == "\r\n" else 2
        if seen + width > offset:  # inside a surrogate pair or between CR and LF: the character's start
            return match.start()
        seen += width
        position = match.end()
    return position + (offset - seen)  # past the end stays past it: evidence_bounds refuses it
