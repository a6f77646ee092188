"""The navigation's badges, every feature's, read once per request: for most people in one statement.

Every page shows them (templates/partials/nav_badges.html): the questions' and feedback's counts (qa) and the
open disputes (gold). Read as four ORM queries they cost the annotation screen a quarter of its CPU, nearly all
of it compiling the queries (bench/sync_ab.py, docs/benchmarks.md). For a user who is not a superuser they are
now one statement compiled once per process from the features' own querysets (``qa.selectors``,
``gold.selectors``; ``fastsql.compiled``), with the user's id bound at each request; a lead's extra badges
(open questions, qualification retries) are a second such statement (read as ORM queries they cost every
page of a lead about 9 ms: docs/benchmarks.md, "Old and new in the same hour again"); a superuser's (whose
querysets have another shape) are read as before. The result is kept on the request, so the two templates
that show badges share it.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model

from .fastsql.compiled import ComposedSelect, count_of, exists_of, first_of
from .gold.selectors import oldest_dispute_project, open_disputes_for
from .qa.selectors import (leads_anywhere, nav_counts, nav_counts_from, open_questions_for_lead, unacknowledged_feedback,
                           unread_answers, waiting_for_retry_slugs)

_ON_REQUEST = "_nav_badges"


@dataclass(frozen=True)
class NavBadges:
    qa: dict  # qa.selectors.nav_counts' keys
    disputes: tuple[int, str | None]  # (open disputes the user may decide, slug of the project of the oldest)


def _member_badges(user_id):
    # An unsaved user with the stand-in id: the features' querysets filter by it as by the signed-in user.
    user = get_user_model()(pk=user_id, is_superuser=False)
    disputes = open_disputes_for(user)
    return [exists_of(leads_anywhere(user)), count_of(unread_answers(user)), count_of(unacknowledged_feedback(user)),
            count_of(disputes), first_of(oldest_dispute_project(disputes))]


MEMBER_BADGES = ComposedSelect(_member_badges, "user_id")


def _lead_badges(user_id):
    user = get_user_model()(pk=user_id, is_superuser=False)
    waiting = waiting_for_retry_slugs(user)
    return [count_of(waiting), first_of(waiting), count_of(open_questions_for_lead(user))]


LEAD_BADGES = ComposedSelect(_lead_badges, "user_id")


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
    is_lead, unread, pending_feedback, dispute_count, oldest = MEMBER_BADGES.fetch_one(user_id=user.pk)
    lead_counts = LEAD_BADGES.fetch_one(user_id=user.pk) if is_lead else None
    return NavBadges(nav_counts_from(user, bool(is_lead), unread, pending_feedback, lead_counts),
                     (dispute_count, oldest if dispute_count else None))
