"""Who gets which turn: the assignment strategy as plain functions (doccano style).

The database code in ``annotator.work.assignment`` fetches candidate turns
and the annotator's holdings, and asks these functions what to do; nothing here
touches the database, so the rules are unit-tested on their own.

Rules:
- a turn is judged by ``overlap`` distinct annotators, never twice by the same
  person (a released slot still counts as "seen" for its former holder, so the
  person is not handed the same turn again);
- an annotator finishes what they hold before getting anything new: the
  oldest unfinished assignment comes back first;
- new work is the oldest turn (lowest id, i.e. imported first) that still has
  an open slot, so that turns complete, and reach gold, in import order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

UNFINISHED = ("assigned", "in_progress")


@dataclass(frozen=True)
class Candidate:
    """A turn that may have an open slot: its id and how many live slots it has."""

    turn_id: int
    slots_taken: int


@dataclass(frozen=True)
class Holding:
    """One of the annotator's assignments in the project."""

    assignment_id: int
    turn_id: int
    status: str
    assigned_at: datetime | None = None


def unfinished(holdings: Iterable[Holding]) -> Holding | None:
    """The annotator's oldest unfinished assignment, which they must finish first."""
    pending = [h for h in holdings if h.status in UNFINISHED]
    if not pending:
        return None
    return min(pending, key=lambda h: (h.assigned_at or datetime.min, h.assignment_id))


def has_open_slot(candidate: Candidate, overlap: int) -> bool:
    return candidate.slots_taken < overlap


def choose_turn(candidates: Sequence[Candidate], seen_turn_ids: Iterable[int], overlap: int) -> int | None:
    """The turn to hand out: the oldest candidate with an open slot the annotator never held."""
    seen = set(seen_turn_ids)
    for candidate in sorted(candidates, key=lambda c: c.turn_id):
        if candidate.turn_id in seen or not has_open_slot(candidate, overlap):
            continue
        return candidate.turn_id
    return None


def is_stale(status: str, last_activity: datetime | None, assigned_at: datetime, now: datetime, max_idle: timedelta) -> bool:
    """An unfinished assignment nobody has touched for ``max_idle``: a lead may release it."""
    if status not in UNFINISHED:
        return False
    return now - (last_activity or assigned_at) >= max_idle
