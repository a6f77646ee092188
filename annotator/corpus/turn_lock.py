"""A turn locked with its dialogue and project: where deciding a turn's gold begins (sentence and triplet gold).

Every submission of real work decides its turn's gold once the turn is complete (``gold.derivation``,
``claims.services``); each first locks the turn, so two last submissions of one turn decide it one after the
other. The ORM built that query (three models' columns, two joins) anew on every submission: written once here
(fastsql/joined.py says why), the lock as before (FOR UPDATE on the joined rows; SQLite locks the whole file).
"""

from __future__ import annotations

from ..fastsql.joined import Join, JoinedSelect
from ..models import Dialogue, Project, Turn

_TURN_WITH_PROJECT = JoinedSelect(Turn, "t", joins=[Join(Dialogue, "d", ("t", "dialogue")),
                                                    Join(Project, "p", ("d", "project"))],
                                  extra_columns=[], where="t.id = %s", for_update=True)


def turn_locked_with_project(turn_id: int) -> Turn:
    """The turn, its dialogue and project loaded, locked until the transaction ends; ``Turn.DoesNotExist`` if gone."""
    found = _TURN_WITH_PROJECT.fetch_one([int(turn_id)])
    if found is None:
        raise Turn.DoesNotExist(f"Turn {turn_id} does not exist.")
    return found[0]
