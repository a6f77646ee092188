"""Drawing a finished job's turns for human checks: which turns may be drawn, their vote margins, the draw.

The order (a seeded random sample, or smallest vote margin first) is the pure rule of
``annotator.domain.draws``; the draw is recorded by the annotation core (``annotator.corpus.draws.services``), which
hands drawn turns to annotators first. Called by the checks page, the API and ``manage.py draw_turns``.
"""

from __future__ import annotations

from annotator.corpus.draws.services import DrawError, draw_check_parameters, draw_record, turns_already_drawn
from annotator.domain import draws as rules
from annotator.domain.vocabulary import DrawStrategy
from annotator.models import TurnDraw

from autolabel.models import AutoLabelJob, Prediction

NOT_FINISHED = "Only a finished job's turns can be drawn: this job is {status}."


def candidate_turn_ids(job: AutoLabelJob, strategy: str) -> list[int]:
    """The job's turns with predictions, outside the qualification set, that a draw of ``strategy`` may
    still take (``annotator.corpus.draws.services.conflicting_draws`` says which earlier draws rule a turn out)."""
    return list(
        Prediction.objects.filter(job=job, sentence__turn__is_qualification=False)
        .exclude(sentence__turn_id__in=turns_already_drawn(job.project, strategy, job.pk))
        .values_list("sentence__turn_id", flat=True).distinct().order_by("sentence__turn_id")
    )


def turn_margins(job: AutoLabelJob, turn_ids) -> dict:
    """turn id -> the smallest vote margin of its predicted sentences (``rules.turn_margin``)."""
    votes: dict[int, list] = {turn_id: [] for turn_id in turn_ids}
    rows = (Prediction.objects.filter(job=job, sentence__turn_id__in=list(votes))
            .values_list("sentence__turn_id", "label_votes").iterator(chunk_size=2000))
    for turn_id, label_votes in rows:
        votes[turn_id].append(label_votes or {})
    return {turn_id: rules.turn_margin(sentence_votes, job.samples) for turn_id, sentence_votes in votes.items()}


def draw_for_job(job: AutoLabelJob, *, strategy: str, size: int, seed: int | None = None, actor=None,
                 note: str = "") -> TurnDraw:
    """Draw ``size`` of the job's turns for human annotation and record the draw (DrawError when refused).

    At random, a seed left empty is drawn here and recorded with the draw, so every random draw can be
    reproduced; by uncertainty, the seed plays no part and is not recorded.
    """
    draw_check_parameters(strategy, size, seed)
    if not job.is_finished:
        raise DrawError(NOT_FINISHED.format(status=job.get_status_display().lower()))
    candidates = candidate_turn_ids(job, strategy)
    if not candidates and not Prediction.objects.filter(job=job).exists():
        raise DrawError("This job predicted no turn: there is nothing of it to check.")
    if strategy == DrawStrategy.RANDOM:
        seed = rules.new_seed() if seed is None else seed
        ordered = rules.random_order(candidates, size, seed)
    else:
        seed = None
        ordered = rules.uncertainty_order(turn_margins(job, candidates), size)
    return draw_record(job.project, strategy, ordered, size, seed, job.pk, actor, note)
