"""Recording a draw of turns for human checks of the pre-labeler, and what became of the turns drawn.

The pre-labeler chooses the turns (``autolabel.checks.drawing``: its candidates and their order, by the pure rules
of ``annotator.domain.draws``) and hands them here; the annotation core keeps the draw, so the gold the turns
receive can be traced to how they were chosen, and the queue (``annotator.work.assignment``) hands drawn
turns out first.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Count, Exists, OuterRef

from annotator.domain.draws import MAX_DRAW_SIZE, MAX_SEED
from annotator.domain.vocabulary import DrawStrategy
from annotator.models import Assignment, DrawnTurn, Project, Turn, TurnDraw

LIVE = (Assignment.Status.ASSIGNED, Assignment.Status.IN_PROGRESS, Assignment.Status.SUBMITTED)


class DrawError(Exception):
    """A draw the rules refuse; the message says why, for the lead."""


def conflicting_draws(project: Project, strategy: str, source_job_id: int | None):
    """The earlier draws of the same job whose turns a new draw of ``strategy`` may not take again.

    A draw by uncertainty skips every turn already drawn for the job (it is already with the annotators). A
    draw at random skips only the turns drawn at random before: were it to skip the turns an uncertainty draw
    took (the least certain ones), it would no longer be a random sample of the job's turns.
    """
    draws = TurnDraw.objects.filter(project=project, source_job_id=source_job_id)
    if strategy == DrawStrategy.RANDOM:
        draws = draws.filter(strategy=DrawStrategy.RANDOM)
    return draws


def turns_already_drawn(project: Project, strategy: str, source_job_id: int | None):
    """Ids of the turns a new draw of ``strategy`` for the job may not take (see ``conflicting_draws``)."""
    return DrawnTurn.objects.filter(draw__in=conflicting_draws(project, strategy, source_job_id)).values("turn_id")


def draw_check_parameters(strategy: str, size: int, seed: int | None) -> None:
    """DrawError unless the strategy is known, the size 1 to MAX_DRAW_SIZE and the seed (if any) in range."""
    if strategy not in DrawStrategy.values:
        raise DrawError(f"Unknown strategy {strategy!r}; one of {', '.join(DrawStrategy.values)}.")
    if type(size) is not int or not 1 <= size <= MAX_DRAW_SIZE:
        raise DrawError(f"Draw between 1 and {MAX_DRAW_SIZE} turns.")
    if seed is not None and (type(seed) is not int or not 0 <= seed <= MAX_SEED):
        raise DrawError(f"A seed is a whole number from 0 to {MAX_SEED}.")


def draw_record(project: Project, strategy: str, turn_ids_in_order: list[int], size: int, seed: int | None,
                source_job_id: int | None, actor, note: str = "") -> TurnDraw:
    """Record a draw: the first ``size`` of ``turn_ids_in_order`` (in that order), how they were drawn, by whom.

    Refuses turns of another project, qualification turns, and turns already drawn for the same job (a draw
    at random may take a turn an uncertainty draw took: see ``conflicting_draws``). One transaction: the
    draw is recorded whole or not at all.
    """
    draw_check_parameters(strategy, size, seed)
    if strategy == DrawStrategy.RANDOM and seed is None:
        raise DrawError("A draw at random records its seed.")
    turn_ids = list(dict.fromkeys(turn_ids_in_order))[:size]
    if not turn_ids:
        raise DrawError("There is no turn left to draw: every candidate turn of this job was drawn already.")
    with transaction.atomic():
        # One draw at a time per project: two leads drawing for the same job must not take the same turn twice.
        Project.objects.select_for_update().filter(pk=project.pk).values_list("pk").first()
        found = dict(Turn.objects.filter(pk__in=turn_ids).values_list("pk", "dialogue__project_id"))
        foreign = [turn_id for turn_id in turn_ids if found.get(turn_id) != project.pk]
        if foreign:
            raise DrawError(f"Turns {_listed(foreign)} are not turns of this project.")
        qualification = list(Turn.objects.filter(pk__in=turn_ids, is_qualification=True).values_list("pk", flat=True))
        if qualification:
            raise DrawError(f"Turns {_listed(qualification)} belong to the qualification set, which is never drawn.")
        again = list(turns_already_drawn(project, strategy, source_job_id).filter(turn_id__in=turn_ids)
                     .values_list("turn_id", flat=True).distinct())
        if again:
            raise DrawError(f"Turns {_listed(again)} were already drawn for this job; a turn is drawn once per job "
                            "(only a draw at random may take a turn an uncertainty draw took).")
        draw = TurnDraw.objects.create(project=project, strategy=strategy, source_job_id=source_job_id, size=size,
                                       seed=seed, note=note.strip(), created_by=actor)
        DrawnTurn.objects.bulk_create(
            DrawnTurn(draw=draw, turn_id=turn_id, position=position) for position, turn_id in enumerate(turn_ids)
        )
    return draw


def _listed(ids, shown=10) -> str:
    ids = sorted(set(ids))
    text = ", ".join(str(i) for i in ids[:shown])
    return text + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


# --- what became of the turns drawn ---------------------------------------------------------------

@dataclass
class DrawnTurnState:
    turn_id: int
    position: int
    sentences: int
    gold: int
    being_annotated: bool
    labels: dict = field(default_factory=dict)  # gold label -> sentences; empty where the reader is blind

    @property
    def has_all_gold(self) -> bool:
        return self.sentences > 0 and self.gold == self.sentences


@dataclass
class DrawProgress:
    draw: TurnDraw
    turns: list[DrawnTurnState]

    @property
    def drawn(self) -> int:
        return len(self.turns)

    @property
    def with_gold(self) -> int:
        return sum(1 for turn in self.turns if turn.has_all_gold)

    @property
    def with_any_gold(self) -> int:
        """Turns with gold on at least one sentence: the faithfulness report uses each one's gold sentences."""
        return sum(1 for turn in self.turns if turn.gold > 0)

    @property
    def being_annotated(self) -> int:
        return sum(1 for turn in self.turns if turn.being_annotated and not turn.has_all_gold)

    @property
    def waiting(self) -> int:
        return self.drawn - self.with_gold - self.being_annotated


def draws_progress(project: Project, *, source_job_id: int | None = None, blind_turn_ids=(), draw_ids=None) -> list[DrawProgress]:
    """The project's draws (of one job when ``source_job_id`` is given), newest first, each with its turns:
    drawn, being annotated (a live slot, gold not yet on every sentence), with gold on every sentence, and the
    gold labels the turns received (not on ``blind_turn_ids``, ids or a subquery: the reader holds an unsubmitted
    slot there)."""
    draws = TurnDraw.objects.filter(project=project).select_related("created_by")
    if source_job_id is not None:
        draws = draws.filter(source_job_id=source_job_id)
    if draw_ids is not None:
        draws = draws.filter(pk__in=draw_ids)
    draws = list(draws)
    rows = (
        DrawnTurn.objects.filter(draw__in=draws)
        .annotate(
            sentence_count=Count("turn__sentences", distinct=True),
            gold_count=Count("turn__sentences__gold", distinct=True),
            live=Exists(Assignment.objects.filter(turn_id=OuterRef("turn_id"), is_qualification=False, status__in=LIVE)),
        )
        .order_by("draw_id", "position")
        .values_list("draw_id", "turn_id", "position", "sentence_count", "gold_count", "live")
    )
    by_draw: dict[int, list[DrawnTurnState]] = {draw.pk: [] for draw in draws}
    for draw_id, turn_id, position, sentences, gold, live in rows:
        by_draw[draw_id].append(DrawnTurnState(turn_id, position, sentences, gold, live))
    states = [state for draw_states in by_draw.values() for state in draw_states]
    labels: dict[int, Counter] = {}
    for turn_id, label in (Turn.objects.filter(pk__in={s.turn_id for s in states}, sentences__gold__isnull=False)
                           .exclude(pk__in=blind_turn_ids).values_list("pk", "sentences__gold__label")):
        labels.setdefault(turn_id, Counter())[label] += 1
    for state in states:
        state.labels = dict(sorted(labels.get(state.turn_id, {}).items()))
    return [DrawProgress(draw, by_draw[draw.pk]) for draw in draws]


def draws_of_turns(turn_ids) -> dict[int, list[dict]]:
    """turn id -> the draws that took it, oldest first: ``{"id", "strategy", "job"}`` (for exports)."""
    out: dict[int, list[dict]] = {}
    for turn_id, draw_id, strategy, job_id in (
        DrawnTurn.objects.filter(turn_id__in=turn_ids).order_by("turn_id", "draw_id")
        .values_list("turn_id", "draw_id", "draw__strategy", "draw__source_job_id")
    ):
        out.setdefault(turn_id, []).append({"id": draw_id, "strategy": strategy, "job": job_id})
    return out
