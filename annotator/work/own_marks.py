"""Whether the annotator left questions or unit flags on a turn: one statement before the screen reads them.

The annotation screen shows the annotator's questions on the turn (qa) and their unit flags (corpus.units).
Most turns have neither, yet the two ORM queries that read them (a question's thread, its first message, its
project's membership) were compiled on every render (bench/sync_ab.py, docs/benchmarks.md). One statement
compiled once per process (fastsql.compiled, from the same querysets) says whether there is anything to read;
only then are they read. A superuser's querysets have another shape: they are read as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model

from ..corpus.units.selectors import own_flag_rows
from ..fastsql.compiled import ComposedSelect, exists_of
from ..models import Turn
from ..qa.selectors import questions_of

_ON_REQUEST = "_own_marks"


@dataclass(frozen=True)
class OwnMarks:
    questions: bool
    flags: bool


def _compose(user_id, turn_id):
    user, turn = get_user_model()(pk=user_id, is_superuser=False), Turn(pk=turn_id)
    return [exists_of(questions_of(user, turn=turn)), exists_of(own_flag_rows(user, turn))]


OWN_MARKS = ComposedSelect(_compose, "user_id", "turn_id")


def own_marks(request, turn) -> OwnMarks:
    """Whether ``request.user`` has questions, flags on ``turn`` (read once per request and turn)."""
    user = request.user
    if user.is_superuser:
        return OwnMarks(questions=True, flags=True)
    marks = getattr(request, _ON_REQUEST, {})
    if turn.pk not in marks:
        questions, flags = OWN_MARKS.fetch_one(user_id=user.pk, turn_id=turn.pk)
        marks[turn.pk] = OwnMarks(bool(questions), bool(flags))
        setattr(request, _ON_REQUEST, marks)
    return marks[turn.pk]
