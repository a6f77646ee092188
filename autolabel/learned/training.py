"""Training a project's learned judge: the row, the worker's run, the figures (the one write path of judges).

``judge_train_create`` records a judge (queued) for the project's current protocol version and sends
``autolabel.train_judge`` after commit: a model is never fitted inside a request. The worker (or
``manage.py judge_train``, inline) calls ``judge_train_run``: it reads the gold, measures the judge by
cross-validation grouped by turn and the learning curve (``validation``), fits it on all the gold, stores the
model (``store``) and the figures on the row.
"""

from __future__ import annotations

import logging
import time

from django.db import transaction
from django.utils import timezone

from annotator.models import GoldVersion
from annotator.projects.protocols import protocol_for
from annotator.queue import task_send

from autolabel.learned import validation
from autolabel.learned.data import gold_set
from autolabel.learned.features import FEATURE_VERSION
from autolabel.learned.store import judge_model_save
from autolabel.models import LearnedJudge

log = logging.getLogger(__name__)

# Fixed before any fold is drawn: the model's shape is chosen among ``validation.CANDIDATES`` by grouped
# cross-validation on the training turns alone (inside every fold of the judge's own cross-validation too, so its
# figures are those of the choosing, never of a choice made on the sentences they score).
DEFAULT_OPTIONS = {"strategy": validation.CHOOSE}
# What a lead may ask for instead (the page, the API, ``judge_train --shape``): the choosing (the default), or one
# shape fixed, e.g. the walk's steps for a small project whose inner figures cannot tell the shapes apart.
STRATEGY_NAMES = {"steps": "one classifier per step of the walk", "flat": "one classifier over the labels"}
SHAPES = {
    "choose": ("Choose on the gold (recommended)", DEFAULT_OPTIONS),
    "steps": (STRATEGY_NAMES["steps"].capitalize(), {"strategy": "steps", "regularization": 1.0}),
    "flat": (STRATEGY_NAMES["flat"].capitalize(), {"strategy": "flat", "regularization": 1.0}),
}
MIN_TURNS = 2


class TrainingError(ValueError):
    """Gold that cannot train a judge; the message says why."""


def judge_train_create(project, *, created_by=None, enqueue: bool = True, shape: str = "choose") -> LearnedJudge:
    """Record a judge to train on the project's gold in its current protocol, of ``shape`` (``SHAPES``); the
    worker trains it."""
    if shape not in SHAPES:
        raise TrainingError(f"the shape is one of {', '.join(SHAPES)}, not {shape!r}")
    judge = LearnedJudge.objects.create(project=project, protocol_version_id=project.protocol_version_id,
                                        options=dict(SHAPES[shape][1]), created_by=created_by)
    if enqueue:
        transaction.on_commit(lambda: task_send("autolabel.train_judge", judge.pk))
    return judge


def judge_in_progress(project) -> LearnedJudge | None:
    return LearnedJudge.objects.filter(project=project, status__in=[LearnedJudge.Status.QUEUED,
                                                                     LearnedJudge.Status.RUNNING]).first()


def train_figures(protocol, gold, options: dict, *, folds: int = validation.FOLDS) -> dict:
    """The cross-validated figures and the learning curve of a judge built with ``options``, JSON-ready."""
    return validation.cross_validate(protocol, gold.examples, gold.gold, gold.turns, gold.words, folds=folds,
                                     **options)


def judge_train_run(judge_id: int, *, folds: int = validation.FOLDS) -> LearnedJudge:
    """Train a recorded judge to its end (worker or command); a failure is recorded on the row."""
    with transaction.atomic():
        judge = LearnedJudge.objects.select_for_update().select_related("project").get(pk=judge_id)
        if judge.is_finished:
            return judge
        judge.status, judge.started_at = LearnedJudge.Status.RUNNING, timezone.now()
        judge.save(update_fields=["status", "started_at"])
    try:
        _train(judge, folds)
    except TrainingError as refusal:
        _fail(judge, str(refusal))
    except Exception as error:  # recorded for the lead to see, then re-raised for the worker's log
        _fail(judge, f"{type(error).__name__}: {error}")
        raise
    return judge


def _train(judge: LearnedJudge, folds: int) -> None:
    project = judge.project
    if project.protocol_version_id != judge.protocol_version_id:
        raise TrainingError("the project moved to another protocol version after this judge was asked for")
    protocol = protocol_for(project)
    gold_version = GoldVersion.objects.filter(project=project).values_list("version", flat=True).first() or 0
    gold = gold_set(project)
    if len(set(gold.turns)) < MIN_TURNS:
        raise TrainingError(f"the project has gold in {len(set(gold.turns))} turn(s) of its current protocol: "
                            f"a judge needs gold in at least {MIN_TURNS} (cross-validation holds whole turns out)")
    options = {**DEFAULT_OPTIONS, **(judge.options or {})}
    started = time.monotonic()
    figures = train_figures(protocol, gold, options, folds=folds)
    measured = time.monotonic() - started
    model = validation.fit_judge(protocol, gold.examples, gold.gold, gold.turns, gold.words, **options)
    figures["seconds"] = {"cross_validation": round(measured, 1), "fit": round(time.monotonic() - started - measured, 1)}
    if getattr(model, "chosen", None):  # what the choosing took on all the gold, and each candidate's figure
        figures["chosen"], figures["candidates"] = model.chosen, model.candidates
    figures["protocol"] = {"id": protocol.id, "version": protocol.version, "name": protocol.name}
    figures["feature_version"] = FEATURE_VERSION
    judge_model_save(judge, model)
    judge.status, judge.finished_at, judge.error = LearnedJudge.Status.DONE, timezone.now(), ""
    judge.gold_version, judge.gold_sentences, judge.votes_job_id = gold_version, len(gold), gold.votes_job_id
    judge.figures = figures
    judge.save()


def _fail(judge: LearnedJudge, error: str) -> None:
    LearnedJudge.objects.filter(pk=judge.pk).update(status=LearnedJudge.Status.FAILED, error=error[:5000],
                                                    finished_at=timezone.now())
    judge.refresh_from_db()


def judge_report(judge: LearnedJudge) -> dict:
    """What the command's ``--json``, the API and the page read of a judge."""
    figures = judge.figures or {}
    return {
        "id": judge.pk, "status": judge.status, "error": judge.error,
        "protocol_version": judge.protocol_version.number if judge.protocol_version_id else None,
        "gold_version": judge.gold_version, "gold_sentences": judge.gold_sentences, "votes_job": judge.votes_job_id,
        "options": judge.options, "chosen": figures.get("chosen"), "candidates": figures.get("candidates", []),
        "cross_validated": figures.get("cross_validated"), "learning_curve": figures.get("learning_curve", []),
        "seconds": figures.get("seconds"),
    }
