"""The navigation's badges, every feature's, read once per request: for most people in one statement.

Every page shows them (templates/partials/nav_badges.html): the questions' and feedback's counts (qa) and the
open disputes (gold). Read as four ORM queries they cost the annotation screen a quarter of its CPU, nearly all
of it compiling the queries (bench/sync_ab.py, docs/benchmarks.md). For a user who is not a superuser they are
now statements compiled once per process from the features' own querysets (``qa.selectors``,
``gold.selectors``; ``fastsql.compiled``), with the user's id bound at each request:
- everyone's counts, and whether the user leads or adjudicates anywhere, in one statement;
- a lead's extra badges (open questions, qualification retries) and open disputes in a second one (read as ORM
  queries they cost every page of a lead about 9 ms: docs/benchmarks.md, "Old and new in the same hour again");
- an adjudicator's open disputes in a second one of their own.
Counting the open disputes goes through every open dispute of the database (joined to its turn, dialogue and
project, then to the user's membership): 6.5 ms of PostgreSQL per page with 684 open disputes, and growing with them. Someone
who may decide none (most users: annotators) does not run it. A superuser's (whose querysets have another
shape) are read as before. The result is kept on the request, so the two templates that show badges share it.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model

from .fastsql.compiled import ComposedSelect, count_of, exists_of, first_of
from .gold.selectors import adjudicating_memberships, oldest_dispute_project, open_disputes_for
from .qa.selectors import (leads_anywhere, nav_counts, nav_counts_from, open_questions_for_lead, unacknowledged_feedback,
                           unread_answers, waiting_for_retry_slugs)

_ON_REQUEST = "_nav_badges"


@dataclass(frozen=True)
class NavBadges:
    qa: dict  # qa.selectors.nav_counts' keys
    disputes: tuple[int, str | None]  # (open disputes the user may decide, slug of the project of the oldest)


def _stand_in(user_id):
    # An unsaved user with the stand-in id: the features' querysets filter by it as by the signed-in user.
    return get_user_model()(pk=user_id, is_superuser=False)


def _member_badges(user_id):
    user = _stand_in(user_id)
    return [exists_of(leads_anywhere(user)), exists_of(adjudicating_memberships(user)), count_of(unread_answers(user)),
            count_of(unacknowledged_feedback(user))]


def _dispute_parts(user) -> list:
    disputes = open_disputes_for(user)
    return [count_of(disputes), first_of(oldest_dispute_project(disputes))]


def _lead_badges(user_id):
    user = _stand_in(user_id)
    waiting = waiting_for_retry_slugs(user)
    return [count_of(waiting), first_of(waiting), count_of(open_questions_for_lead(user)), *_dispute_parts(user)]


MEMBER_BADGES = ComposedSelect(_member_badges, "user_id")
LEAD_BADGES = ComposedSelect(_lead_badges, "user_id")  # a lead adjudicates: their disputes come with the rest
DISPUTE_BADGES = ComposedSelect(lambda user_id: _dispute_parts(_stand_in(user_id)), "user_id")


def nav_badges(request) -> NavBadges:
    """The badges of ``request.user`` (signed in), read at the first call of the request."""
    badges = getattr(request, _ON_REQUEST, None)
    if badges is None:
        badges = _read(request.user)
        setattr(request, _ON_REQUEST, badges)
    return badges


def _read(user) -> NavBadges:
    if user.is_superuser:
        disputes = open_disputes_for(user)
        count = disputes.count()
        return NavBadges(nav_counts(user), (count, oldest_dispute_project(disputes).first() if count else None))
    is_lead, adjudicates, unread, pending_feedback = MEMBER_BADGES.fetch_one(user_id=user.pk)
    lead_counts, (dispute_count, oldest) = None, (0, None)
    if is_lead:
        *lead_counts, dispute_count, oldest = LEAD_BADGES.fetch_one(user_id=user.pk)
    elif adjudicates:
        dispute_count, oldest = DISPUTE_BADGES.fetch_one(user_id=user.pk)
    return NavBadges(nav_counts_from(user, bool(is_lead), unread, pending_feedback, lead_counts),
                     (dispute_count, oldest if dispute_count else None))
