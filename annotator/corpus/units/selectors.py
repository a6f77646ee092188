"""Reads about a turn's units: flags (an annotator's own, or all of them for a lead) and segmentation changes.

Blind like every other read: an annotator reads only their own flags (another annotator's note can give their
judgement away); a lead reads everyone's, except on the turns they hold an unsubmitted slot on.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import Count, Max, Q

from annotator.access import blind_turn_ids, neutral_turn_name
from annotator.domain.languages import text_language
from annotator.domain.segmentation import unit_review_reasons
from annotator.domain.units import Unit, changed_units
from annotator.models import SegmentationChange, Sentence, Turn, UnitFlag


def own_flags(user, turn) -> dict[int, dict]:
    """The user's flags on ``turn``, by unit id: the open one, else the latest closed one (with what the lead
    did about it). The annotation screen marks the open ones and shows the others' outcome in the dialog."""
    found: dict[int, dict] = {}
    # Oldest first, open last: each unit ends with its open flag or its latest closed one.
    flags = own_flag_rows(user, turn).order_by("id")
    for flag in sorted(flags, key=lambda f: f.status == UnitFlag.Status.OPEN):
        found[flag.sentence_id] = {"kind": flag.kind, "kind_display": flag.get_kind_display(), "note": flag.note,
                                   "status": flag.status, "status_display": flag.get_status_display(),
                                   "resolution": flag.resolution}
    return found


def own_flag_rows(user, turn):
    """The user's flags on ``turn``'s units, open and closed."""
    return UnitFlag.objects.filter(turn=turn, flagged_by=user, sentence__isnull=False)


def open_flags_by_unit(turn) -> dict[int, list[UnitFlag]]:
    """Every open flag of the turn, by unit id (a lead's turn page)."""
    flags: dict[int, list[UnitFlag]] = {}
    for flag in (UnitFlag.objects.filter(turn=turn, status=UnitFlag.Status.OPEN).select_related("flagged_by")
                 .order_by("sentence_index", "id")):
        flags.setdefault(flag.sentence_id, []).append(flag)
    return flags


def closed_flags(turn) -> list[UnitFlag]:
    """The turn's resolved and dismissed flags, newest first (the turn page's audit)."""
    return list(UnitFlag.objects.filter(turn=turn).exclude(status=UnitFlag.Status.OPEN)
                .select_related("flagged_by", "resolved_by").order_by("-resolved_at", "-id"))


def turns_with_open_flags(user, project):
    """The project's turns with open flags, most flags first, with ``open_flags``; none the lead is blind on."""
    return (Turn.objects.filter(dialogue__project=project, unit_flags__status=UnitFlag.Status.OPEN)
            .exclude(pk__in=blind_turn_ids(user, project))
            .annotate(open_flags=Count("unit_flags", filter=Q(unit_flags__status=UnitFlag.Status.OPEN)))
            .select_related("dialogue").order_by("-open_flags", "dialogue__external_id", "index"))


def open_flag_count(user, project) -> int:
    return (UnitFlag.objects.filter(turn__dialogue__project=project, status=UnitFlag.Status.OPEN)
            .exclude(turn_id__in=blind_turn_ids(user, project)).count())


def flags_for_reader(user, project, *, is_lead: bool):
    """The project's flags a reader may list (the API): a lead all of them (but another person's on a turn the
    lead is blind on), anyone else their own."""
    flags = UnitFlag.objects.filter(turn__dialogue__project=project)
    if is_lead:
        flags = flags.exclude(~Q(flagged_by=user), turn_id__in=blind_turn_ids(user, project))
    else:
        flags = flags.filter(flagged_by=user)
    return flags.select_related("flagged_by", "resolved_by").order_by("id")


def segmentation_changes(turn) -> list[SegmentationChange]:
    """The turn's splits and merges, newest first, each with ``gone`` and ``new``: the units it replaced and
    the units it made (the lists ``before`` and ``after`` hold every unit of the turn)."""
    changes = list(SegmentationChange.objects.filter(turn=turn).select_related("actor").order_by("-created_at", "-id"))
    for change in changes:
        before = [Unit(**unit) for unit in change.before]
        after = [Unit(**unit) for unit in change.after]
        change.gone, change.new = changed_units(before, after)
    return changes


# --- units worth a lead's look (the project guide's "Review units" step) ----------------------------------------

@dataclass(frozen=True)
class UnitToReview:
    turn_id: int
    turn_name: str
    index: int  # the unit's number in its turn, from 0
    text: str
    reasons: tuple[str, ...]


def units_to_review(project, *, limit: int = 20) -> tuple[list[UnitToReview], int]:
    """The project's units that look wrong (``segmentation.unit_review_reasons``: very long, or several sentence
    ends in one), the first ``limit`` in turn order, and how many there are in all.

    Reading every unit of a large project costs a second or more, so the answer is kept in the cache until the
    units change: the key holds their count, the highest unit id and the number of splits and merges."""
    shape = Sentence.objects.filter(turn__dialogue__project=project).aggregate(count=Count("id"), last=Max("id"))
    changes = SegmentationChange.objects.filter(turn__dialogue__project=project).count()
    key = f"units-to-review:{project.pk}:{shape['count']}:{shape['last']}:{changes}:{project.default_language}"
    found = cache.get(key)
    if found is None:
        found = []
        rows = (Sentence.objects.filter(turn__dialogue__project=project)
                .order_by("turn__dialogue_id", "turn__index", "index")
                .values_list("turn_id", "index", "text", "turn__dialogue__language"))
        for turn_id, index, text, language in rows.iterator(chunk_size=2000):
            reasons = unit_review_reasons(text, text_language(language, project.default_language) or "en")
            if reasons:
                # The neutral name: a lead holding a slot on the turn is blind to its record id (access.py).
                found.append(UnitToReview(turn_id, neutral_turn_name(turn_id), index, text, tuple(reasons)))
        cache.set(key, found, timeout=24 * 3600)
    return found[:limit], len(found)
