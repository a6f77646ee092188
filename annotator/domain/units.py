"""A lead's corrections of a turn's segmentation: split a unit in two, merge a unit with the next one.

Pure: units come in as ``Unit`` values (index, start and end offsets into the assistant response, text) and the
new list of units goes out; the service (``annotator/corpus/units/services.py``) writes the difference. The
segmentation itself (NLTK Punkt) is ``segmentation.py``; this module only edits what it produced.

The rules:

- a split point is snapped to the nearest gap between words (a run of whitespace), so no word is cut in two,
  and both parts must keep some text ("…in 1984.| The red…" splits; a one-word unit does not); in Chinese
  and Japanese, written without spaces, every boundary next to one of their characters is a gap of no width
  ("故宫始建于明朝。|它是…" splits; ``languages.UNSPACED_RANGES``);
- a merge joins a unit with the next one: the merged unit runs from the first one's start to the second one's
  end, so the whitespace between them (and only whitespace) becomes part of it;
- the units stay numbered 0, 1, 2 … in order after either change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .languages import is_unspaced

_GAP = re.compile(r"\s+")


class SegmentationError(ValueError):
    """A split or merge that cannot be made; the message says why, for the lead."""


@dataclass(frozen=True, slots=True)
class Unit:
    """One unit of a turn: ``text == response[start:end]``."""

    index: int
    start: int
    end: int
    text: str

    def as_dict(self) -> dict:
        return {"index": self.index, "start": self.start, "end": self.end, "text": self.text}


def word_gaps(text: str) -> list[tuple[int, int]]:
    """The gaps between words of ``text`` where it can be split: (start, end) of each inner whitespace run, and
    (i, i) between two characters of which one is Chinese or Japanese (and neither is whitespace)."""
    gaps = [(m.start(), m.end()) for m in _GAP.finditer(text) if 0 < m.start() and m.end() < len(text)]
    if any(is_unspaced(character) for character in text):
        gaps += [(i, i) for i in range(1, len(text))
                 if not text[i - 1].isspace() and not text[i].isspace()
                 and (is_unspaced(text[i - 1]) or is_unspaced(text[i]))]
        gaps.sort()
    return gaps


def snap_to_gap(text: str, offset: int) -> tuple[int, int]:
    """The gap between words nearest to ``offset`` (a character offset into ``text``): (start, end) of it.

    The first part of a split ends at the gap's start, the second begins at its end. A tie goes to the earlier
    gap. Raises ``SegmentationError`` when the text has no gap between words.
    """
    if not isinstance(offset, int) or isinstance(offset, bool):
        raise SegmentationError("The split point must be a character offset.")
    if not 0 <= offset <= len(text):
        raise SegmentationError(f"The split point {offset} is outside the unit (0 to {len(text)} characters).")
    gaps = word_gaps(text)
    if not gaps:
        raise SegmentationError("This unit has no space between words to split at.")

    def distance(gap):
        start, end = gap
        return 0 if start <= offset <= end else min(abs(offset - start), abs(offset - end))

    return min(gaps, key=distance)


def _check(units: list[Unit], response: str) -> None:
    for position, unit in enumerate(units):
        if unit.index != position:
            raise SegmentationError(f"The units are not numbered in order (unit {unit.index + 1} at position {position + 1}).")
        if not 0 <= unit.start <= unit.end <= len(response) or response[unit.start:unit.end] != unit.text:
            raise SegmentationError(f"Unit {unit.index + 1}'s offsets do not match the response.")


def _renumbered(units: list[Unit]) -> list[Unit]:
    return [Unit(position, u.start, u.end, u.text) for position, u in enumerate(units)]


def split_unit(units: list[Unit], response: str, index: int, offset: int) -> list[Unit]:
    """The units after splitting unit ``index`` at ``offset`` (characters into its text, snapped to a gap)."""
    _check(units, response)
    if not 0 <= index < len(units):
        raise SegmentationError(f"There is no unit {index + 1} in this turn.")
    unit = units[index]
    gap_start, gap_end = snap_to_gap(unit.text, offset)
    first = Unit(index, unit.start, unit.start + gap_start, unit.text[:gap_start])
    second = Unit(index + 1, unit.start + gap_end, unit.end, unit.text[gap_end:])
    return _renumbered(units[:index] + [first, second] + units[index + 1:])


def merge_with_next(units: list[Unit], response: str, index: int) -> list[Unit]:
    """The units after merging unit ``index`` with unit ``index + 1``."""
    _check(units, response)
    if not 0 <= index < len(units):
        raise SegmentationError(f"There is no unit {index + 1} in this turn.")
    if index + 1 >= len(units):
        raise SegmentationError("The last unit has no next unit to merge with.")
    first, second = units[index], units[index + 1]
    between = response[first.end:second.start]
    if first.end > second.start or between.strip():
        raise SegmentationError(
            f"Units {index + 1} and {index + 2} are not next to each other in the response "
            "(text that belongs to no unit lies between them).")
    merged = Unit(index, first.start, second.end, response[first.start:second.end])
    return _renumbered(units[:index] + [merged] + units[index + 2:])


def changed_units(before: list[Unit], after: list[Unit]) -> tuple[list[Unit], list[Unit]]:
    """The units of ``before`` that are gone and the units of ``after`` that are new (by their offsets)."""
    old = {(u.start, u.end) for u in before}
    new = {(u.start, u.end) for u in after}
    return [u for u in before if (u.start, u.end) not in new], [u for u in after if (u.start, u.end) not in old]
