"""Handing out turns to annotators, race-free; releasing and reassigning slots.

The rules (which turn, in which order) are in the pure module
``annotator.domain.assignment``; this module does the database work around them:

- PostgreSQL: candidate turns are locked with ``SELECT … FOR UPDATE SKIP
  LOCKED``, so two annotators asking at the same moment lock different turns
  instead of waiting for (or double-booking) the same slot; the annotator's own
  user row is locked first, so two tabs of one person do not claim two turns.
- SQLite: transactions start with ``BEGIN IMMEDIATE`` (see settings), which
  serialises writers, so the same reading-then-writing code is race-free there.
- Whatever happens, the unique constraint (turn, annotator) refuses a second
  slot for the same person; the claim is retried on IntegrityError.

``Turn.slots_taken`` counts the live slots of a turn so that the next free turn
is found without counting assignments per turn; it is re-checked against the
real rows of the chosen turn before a slot is given, so it can never over-book.

Turns drawn for human checks of the pre-labeler (``corpus.draws``) come first, in
draw order (oldest draw first, then each draw's order); the rest follow in id
order, read through the partial index ``turn_open_slots`` as before. A drawn turn
under single review (``Project.drawn_turn_review``) takes one annotator only.
"""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Exists, F, OuterRef, Q
from django.utils import timezone

from ..domain import assignment as strategy
from ..access import may_annotate
from ..domain.vocabulary import DrawnTurnReview
from ..models import AnnotationEvent, Assignment, Dialogue, DrawnTurn, Project, Turn
from ..fastsql.compiled import CompiledQuery, ComposedSelect, count_of
from ..fastsql.joined import JoinedSelect
from ..fastsql.statements import row_insert, row_update
from ..qa.qualification import qualification_gate

CLAIM_ATTEMPTS = 5
LIVE = (Assignment.Status.ASSIGNED, Assignment.Status.IN_PROGRESS, Assignment.Status.SUBMITTED)


class AssignmentError(Exception):
    """A lead action on assignments that cannot be done; the message says why."""


class SlotsRefused(PermissionDenied):
    """The user's role does not take annotation slots in this project (403; the message says why)."""


SLOTS_REFUSED_MESSAGE = (
    "In this project only annotators take annotation slots; a lead can let adjudicators (and leads) take them "
    "too with the project setting \"adjudicators may annotate\"."
)


def assignment_current(project: Project, user) -> Assignment | None:
    """The user's oldest unfinished work assignment in the project, if any."""
    found = _CURRENT.fetch_one([project.pk, user.pk, *strategy.UNFINISHED])
    return None if found is None else found[0]


# Start runs these on every turn: statements written or compiled once per process (fastsql; docs/benchmarks.md).
_CURRENT = JoinedSelect(Assignment, "a", [], [], where=(
    "a.project_id = %s AND a.annotator_id = %s AND NOT a.is_qualification AND a.status IN ("
    + ", ".join(["%s"] * len(strategy.UNFINISHED)) + ") ORDER BY a.assigned_at, a.id LIMIT 1"))
_USER_LOCK = CompiledQuery(
    lambda user_id: get_user_model().objects.select_for_update().filter(pk=user_id).values_list("pk")[:1], "user_id")
_LIVE_SLOTS = ComposedSelect(lambda turn_id: [count_of(
    Assignment.objects.filter(turn_id=turn_id, is_qualification=False, status__in=LIVE))], "turn_id")


def drawn_turn_overlap(project: Project) -> int:
    """How many annotators a drawn turn takes: one under single review, else the project's overlap."""
    return 1 if project.drawn_turn_review == DrawnTurnReview.SINGLE else project.overlap


def drawn_candidate_turns(project: Project, user):
    """Drawn work turns that may have an open slot and the user never held, in draw order.

    Draws are a few hundred turns at most, so this join is small; a turn in two draws comes twice, which the
    caller's ``[:1]`` makes harmless.
    """
    return (
        Turn.objects.filter(draws__draw__project_id=project.pk, is_qualification=False,
                            slots_taken__lt=drawn_turn_overlap(project))
        .exclude(pk__in=Assignment.objects.filter(annotator=user, project=project).values("turn_id"))
        .order_by("draws__draw_id", "draws__position")
    )


def candidate_turns(project: Project, user):
    """Work turns of the project that may have an open slot and the user never held, oldest first.

    A separate function so that gates (e.g. qualification) can narrow the pool. Under single review a
    drawn turn is never a candidate here: its one slot is handed out by ``drawn_candidate_turns``, and
    ``slots_taken < overlap`` alone would give it a second annotator.
    """
    # The project as EXISTS on the turn's dialogue, not a join: joined, SQLite first built a Bloom filter of all
    # the project's dialogues (1.2 ms of every Start on 24,000 turns) before taking the first open turn of the
    # partial index ``turn_open_slots``; PostgreSQL's plan is the same either way (docs/benchmarks.md, issue 49).
    turns = (
        Turn.objects.filter(Exists(Dialogue.objects.filter(pk=OuterRef("dialogue_id"), project_id=project.pk)),
                            is_qualification=False, slots_taken__lt=project.overlap)
        .exclude(pk__in=Assignment.objects.filter(annotator=user, project=project).values("turn_id"))
    )
    if project.drawn_turn_review == DrawnTurnReview.SINGLE:
        turns = turns.exclude(Exists(DrawnTurn.objects.filter(turn_id=OuterRef("pk"))))
    return turns.order_by("id")


def candidate_pools(project: Project, user):
    """Where the next turn is looked for, in order, each with the overlap its turns take."""
    return list(zip([drawn_candidate_turns(project, user), candidate_turns(project, user)], pool_overlaps(project)))


def pool_overlaps(project: Project) -> list[int]:
    """The overlap of each of ``candidate_pools``' pools, in order."""
    return [drawn_turn_overlap(project), project.overlap]


def assignment_next(project: Project, user) -> Assignment | None:
    """The assignment the user should work on now: their unfinished one, else a newly claimed slot.

    Returns None when the project has no open slot left for this user.
    Annotators take slots; adjudicators and leads only where the project allows it
    (``SlotsRefused`` otherwise, though an unfinished slot they already hold is still theirs).
    An annotator who has not passed the project's qualification set gets its
    turns first, and no real work until they pass (None while a failed attempt
    waits for a lead to allow a retry).
    """
    blocked, qualification_assignment = qualification_gate(project, user)
    if blocked:
        return qualification_assignment
    # The unfinished assignment, if any, is looked up by _claim under the user's lock (not here as well:
    # "next item" is asked once per turn, and one query less matters there).
    for _ in range(CLAIM_ATTEMPTS):
        try:
            return _claim(project, user)
        except IntegrityError:
            # Another request of the same user claimed concurrently (or the
            # counter was stale); whatever it created is found on the next pass.
            continue
    return assignment_current(project, user)


def _claim(project: Project, user) -> Assignment | None:
    with transaction.atomic():
        if connection.features.has_select_for_update:
            # Serialise the claims of one person (two tabs asking at once).
            _USER_LOCK.fetch_all(user_id=user.pk)
        current = assignment_current(project, user)
        if current is not None:
            return current
        if not may_annotate(user, project):
            raise SlotsRefused(SLOTS_REFUSED_MESSAGE)
        while True:
            rows, overlap = _first_free_turn(project, user)
            if not rows:
                return None
            candidates = [strategy.Candidate(turn_id, taken) for turn_id, taken in rows]
            turn_id = strategy.choose_turn(candidates, (), overlap)
            if turn_id is None:
                return None
            # The counter is a cache: check it against the rows of this turn.
            (live,) = _LIVE_SLOTS.fetch_one(turn_id=turn_id)
            if live != dict(rows)[turn_id]:
                row_update(Turn, {"slots_taken": live}, {"pk": turn_id})
                continue
            row_update(Turn, {}, {"pk": turn_id}, increment=("slots_taken",))
            assignment = Assignment(project=project, turn_id=turn_id, annotator=user)
            row_insert(assignment, _ASSIGNMENT_FIELDS)
            row_insert(AnnotationEvent(assignment=assignment, actor=user, action="assign",
                                       new={"annotator": user.get_username()}), _EVENT_FIELDS)
            return assignment


# Every field of a new row, as ``create()`` writes them (defaults and automatic dates included).
_ASSIGNMENT_FIELDS = tuple(f.name for f in Assignment._meta.concrete_fields if not f.primary_key)
_EVENT_FIELDS = tuple(f.name for f in AnnotationEvent._meta.concrete_fields if not f.primary_key)
# How a pool's free turn is read: locked passing over locked turns, locked waiting for them, not locked (SQLite).
_SKIP_LOCKED, _WAIT, _UNLOCKED = "skip locked", "wait", "unlocked"
_POOL_STATEMENTS = {}


def _pool_statement(position: int, review: str, locking: str) -> CompiledQuery:
    """The ``position``-th of ``candidate_pools``' querysets (for a project with this ``drawn_turn_review``),
    locked as ``locking`` says, as a statement compiled once: ``[(id, slots_taken)]`` of its first turn."""
    key = (position, review, locking)
    if key not in _POOL_STATEMENTS:
        def compose(project_id, user_id, overlap):
            # Stand-ins of the project and the user: the pool's querysets filter by their ids and the overlap.
            project = Project(pk=project_id, overlap=overlap, drawn_turn_review=review)
            queryset, _ = candidate_pools(project, get_user_model()(pk=user_id))[position]
            if locking == _SKIP_LOCKED:
                queryset = queryset.select_for_update(skip_locked=True, of=("self",))
            elif locking == _WAIT:
                queryset = queryset.select_for_update(of=("self",))
            return queryset.values_list("id", "slots_taken")[:1]

        # Not prepared: a generic plan of ``slots_taken < $n`` cannot use the partial index ``turn_open_slots``
        # (``slots_taken < 2``) and would read every full turn before the first open one; with the values
        # written in, PostgreSQL plans it with the index as before.
        _POOL_STATEMENTS[key] = CompiledQuery(compose, "project_id", "user_id", "overlap", prepare=False)
    return _POOL_STATEMENTS[key]


def _first_free_turn(project: Project, user):
    """The first turn of the first of ``candidate_pools`` that has one, locked, and that pool's overlap:
    ``([(id, slots_taken)], overlap)``, or ``([], None)``."""
    if connection.features.has_select_for_update_skip_locked:
        # Lock one free turn, passing over turns other claims have locked right now (drawn turns first); if every
        # candidate is locked by a claim in flight (or there is none), wait for them and look again, rather than
        # telling the annotator there is no work.
        attempts = (_SKIP_LOCKED, _WAIT)
    else:
        attempts = (_UNLOCKED,)
    for locking in attempts:
        for position, overlap in enumerate(pool_overlaps(project)):
            rows = _pool_statement(position, project.drawn_turn_review, locking).fetch_all(
                project_id=project.pk, user_id=user.pk, overlap=project.overlap)
            if rows:
                return rows, overlap
    return [], None


def assignment_release(assignment: Assignment, *, actor, reason: str = "") -> Assignment:
    """Take an unfinished slot back from its holder; the turn's slot opens for someone else.

    The released assignment and its answers are kept (audit), but no longer
    count as a slot and can no longer be edited.
    """
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().get(pk=assignment.pk)
        if locked.status not in strategy.UNFINISHED:
            raise AssignmentError(f"Only unfinished assignments can be released; this one is {locked.get_status_display().lower()}.")
        old_status = locked.status
        locked.status = Assignment.Status.RELEASED
        locked.version = F("version") + 1
        locked.save(update_fields=["status", "version"])
        locked.refresh_from_db(fields=["version"])
        if not locked.is_qualification:
            Turn.objects.filter(pk=locked.turn_id, slots_taken__gt=0).update(slots_taken=F("slots_taken") - 1)
        AnnotationEvent.objects.create(
            assignment=locked, actor=actor, action="release",
            old={"status": old_status}, new={"status": locked.status, "reason": reason},
        )
    return locked


def assignment_reassign(assignment: Assignment, to_user, *, actor) -> Assignment:
    """Release an unfinished slot and give the same turn to ``to_user`` (who starts blind, from scratch)."""
    if to_user.pk == assignment.annotator_id:
        raise AssignmentError("That annotator already holds this assignment.")
    with transaction.atomic():
        if Assignment.objects.filter(turn_id=assignment.turn_id, annotator=to_user).exists():
            raise AssignmentError(f"{to_user.get_username()} already has (or had) a slot on this turn; a turn is never given twice to the same person.")
        released = assignment_release(assignment, actor=actor, reason=f"reassigned to {to_user.get_username()}")
        Turn.objects.filter(pk=released.turn_id).update(slots_taken=F("slots_taken") + 1)
        new = Assignment.objects.create(
            project_id=released.project_id, turn_id=released.turn_id, annotator=to_user,
            is_qualification=released.is_qualification,
        )
        AnnotationEvent.objects.create(
            assignment=new, actor=actor, action="assign",
            new={"annotator": to_user.get_username(), "reassigned_from": released.pk},
        )
    return new


def assignment_release_stale(project: Project, *, actor, max_idle: timedelta) -> int:
    """Release every unfinished work assignment idle for at least ``max_idle``; returns how many."""
    now = timezone.now()
    stale = [
        a for a in Assignment.objects.filter(project=project, status__in=strategy.UNFINISHED, is_qualification=False)
        if strategy.is_stale(a.status, a.last_activity_at, a.assigned_at, now, max_idle)
    ]
    for assignment in stale:
        assignment_release(assignment, actor=actor, reason=f"idle for {max_idle}")
    return len(stale)


def turn_slots_recount(project: Project) -> int:
    """Recompute ``Turn.slots_taken`` for a project from its assignments (after bulk loads or repairs)."""
    turns = Turn.objects.filter(dialogue__project=project).annotate(
        live=Count("assignments", filter=Q(assignments__is_qualification=False, assignments__status__in=LIVE))
    )
    changed = [t for t in turns.only("id", "slots_taken") if t.slots_taken != t.live]
    for turn in changed:
        turn.slots_taken = turn.live
    Turn.objects.bulk_update(changed, ["slots_taken"], batch_size=1000)
    return len(changed)
