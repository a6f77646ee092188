"""The order people count in: ``legal-1``, ``legal-2``, ``legal-10``, where a sort of strings gives ``legal-1``,
``legal-10``, ``legal-2``. The one sort key of every export that orders by a dialogue's or a record's id.

An id is cut into its runs of digits and the text between them; the runs compare as the integers they write
(``7`` before ``10``), the text as text, by code point. Two ids the integers cannot tell apart (``a7`` and
``a07``) are ordered by the plain string, so the order is total and the same on every database (a database's
own ``ORDER BY`` follows its collation: PostgreSQL's and SQLite's differ).
"""

from __future__ import annotations

import re

_DIGIT_RUNS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple:
    """The sort key of ``text``: ``sorted(ids, key=natural_key)`` counts the numbers in them as people do.

    The parts alternate, text first (``""`` when the id starts with a digit), so that a part is only ever compared
    with a part of its own type. An id holds at most a few hundred characters (200 for a dialogue's), far below
    the length at which Python refuses to read a run of digits as an integer.
    """
    parts = _DIGIT_RUNS.split(text)
    return tuple(int(part) if position % 2 else part for position, part in enumerate(parts)), text
