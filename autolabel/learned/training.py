"""Training a project's learned judge: the row, the worker's run, the figures (the one write path of judges).

``judge_train_create`` records a judge (queued) for the project's current protocol version and sends
``autolabel.train_judge`` after commit: a model is never fitted inside a request. One training at a time per
project: the row's constraint (``one_judge_training_per_project``) refuses a second in the same statement, so
two requests at once make one judge and ``TrainingInProgress`` (a 409) for the other. A broker that refuses the
message fails the judge with the reason (``annotator.queue``) and the request answers 503.

The worker (or ``manage.py judge_train``, inline) calls ``judge_train_run``: it takes the judge up under a lease
(``annotator.leases``, as imports and exports are run), reads the gold, measures the judge by cross-validation
grouped by turn and, when asked, the learning curve (``validation``), fits it on all the gold, stores the model
(``store``) and the figures on the row, only while it still holds the judge. A worker killed mid-training stops
renewing its lease: a live worker's watchdog (``judges_orphaned``, in ``autolabel.tasks``) sends the judge again,
trained from the start, or fails it with the reason after ``JOB_MAX_ATTEMPTS`` workers stopped under it.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotator.leases import (LeaseLost, job_release, job_still_held, job_take_up, jobs_not_taken_up, jobs_orphaned,
                              lease_kept, lease_owner)
from annotator.models import GoldVersion
from annotator.projects.protocols import protocol_for
from annotator.queue import task_send_after_commit

from autolabel.learned import validation
from autolabel.learned.data import gold_set
from autolabel.learned.features import FEATURE_VERSION
from autolabel.learned.store import judge_model_save, judge_predictions_save
from autolabel.models import LearnedJudge

log = logging.getLogger(__name__)

# Fixed before any fold is drawn: the model's shape is chosen among ``validation.CANDIDATES`` by grouped
# cross-validation on the training turns alone (inside every fold of the judge's own cross-validation too, so its
# figures are those of the choosing, never of a choice made on the sentences they score).
DEFAULT_OPTIONS = {"strategy": validation.CHOOSE}
# What a lead may ask for instead (the page, the API, ``judge_train --shape``): the choosing (the default), or one
# shape fixed, e.g. the walk's steps for a small project whose inner figures cannot tell the shapes apart.
STRATEGY_NAMES = {"steps": "one classifier per step of the walk", "flat": "one classifier over the labels",
                  "verdict": "hallucinated or not, then the label within that side"}
SHAPES = {
    "choose": ("Choose on the gold (recommended)", DEFAULT_OPTIONS),
    "steps": (STRATEGY_NAMES["steps"].capitalize(), {"strategy": "steps", "regularization": 1.0}),
    "flat": (STRATEGY_NAMES["flat"].capitalize(), {"strategy": "flat", "regularization": 1.0}),
    "verdict": (STRATEGY_NAMES["verdict"].capitalize(), {"strategy": "verdict", "regularization": 1.0}),
}
MIN_TURNS = 2
# The key of a judge's ``options`` that asks for the learning curve (``train_figures``); never given to the model.
LEARNING_CURVE = "learning_curve"


GAVE_UP = ("The worker training this judge stopped {} times before it finished (killed, or out of memory?): "
           "no model was kept. The workers' logs say more; train it again to retry.")


class TrainingError(ValueError):
    """Gold that cannot train a judge; the message says why."""


class TrainingInProgress(TrainingError):
    """Another judge of the project is being trained (or queued); ``judge`` is that one."""

    def __init__(self, judge: LearnedJudge | None):
        self.judge = judge  # None: it finished between the refusal and the look-up
        super().__init__(f"learned judge {judge.pk} is already being trained" if judge else
                         "another learned judge of the project was being trained")


def judge_train_create(project, *, created_by=None, enqueue: bool = True, shape: str = "choose",
                       learning_curve: bool = False) -> LearnedJudge:
    """Record a judge to train on the project's gold in its current protocol, of ``shape`` (``SHAPES``), with its
    learning curve when ``learning_curve`` (``LEARNING_CURVE``); the worker trains it. ``TrainingInProgress``
    while another judge of the project is queued or training."""
    if shape not in SHAPES:
        raise TrainingError(f"the shape is one of {', '.join(SHAPES)}, not {shape!r}")
    options = {**SHAPES[shape][1], **({LEARNING_CURVE: True} if learning_curve else {})}
    try:
        with transaction.atomic():  # a savepoint: the refused insert leaves the caller's transaction usable
            judge = LearnedJudge.objects.create(project=project, protocol_version_id=project.protocol_version_id,
                                                options=options, created_by=created_by)
    except IntegrityError:  # one_judge_training_per_project: another request was first
        raise TrainingInProgress(judge_in_progress(project)) from None
    if enqueue:  # refused by the broker: the judge failed with the reason, BrokerUnavailable (503)
        task_send_after_commit("autolabel.train_judge", judge.pk, job=LearnedJudge.objects.filter(pk=judge.pk))
    return judge


def judge_in_progress(project) -> LearnedJudge | None:
    return LearnedJudge.objects.filter(project=project, status__in=LearnedJudge.IN_PROGRESS).first()


def train_figures(protocol, gold, options: dict, *, folds: int = validation.FOLDS,
                  splits: int = validation.SPLITS, learning_curve: bool = False) -> dict:
    """The cross-validated figures (over ``splits`` group splits) and, with ``learning_curve``, the learning curve
    of a judge built with ``options``, JSON-ready but ``out_of_fold`` (each split's predictions,
    ``validation.OutOfFold``). Without it ``learning_curve`` is empty: its points cost four more cross-validations
    of the first split (a model per fold and share, each choosing its shape by inner CV), 88 s of the 93-118 s on
    CogniBench's release."""
    shares = validation.CURVE_SHARES if learning_curve else ()
    return validation.cross_validate(protocol, gold.examples, gold.gold, gold.turns, gold.words, folds=folds,
                                     splits=splits, curve_shares=shares, **options)


def gave_up() -> str:
    return GAVE_UP.format(settings.JOB_MAX_ATTEMPTS)


def judge_train_run(judge_id: int, *, folds: int = validation.FOLDS, splits: int = validation.SPLITS,
                    owner: str | None = None) -> LearnedJudge | None:
    """Train a recorded judge to its end (worker or command); a failure is recorded on the row. The judge as it
    is when a live worker already holds it or it is finished (nothing is trained twice at once); None when gone."""
    owner = owner or lease_owner()
    if job_take_up(LearnedJudge, judge_id, owner, gave_up=gave_up()) is None:
        return LearnedJudge.objects.filter(pk=judge_id).first()
    LearnedJudge.objects.filter(pk=judge_id, lease_owner=owner).update(started_at=timezone.now())
    judge = LearnedJudge.objects.select_related("project").get(pk=judge_id)
    try:
        with lease_kept(judge, owner):
            _train(judge, folds, splits, owner)
    except LeaseLost as lost:  # presumed dead, replaced: the other worker's judge is the one kept
        log.warning("%s; this worker's model is dropped", lost)
        if judge.model_file:
            judge.model_file.delete(save=False)
    except TrainingError as refusal:
        _fail(judge, owner, str(refusal))
    except Exception as error:  # recorded for the lead to see, then re-raised for the worker's log
        _fail(judge, owner, f"{type(error).__name__}: {error}")
        raise
    judge.refresh_from_db()
    return judge


def judges_orphaned() -> list[int]:
    """Judges to send again (their ids): in training, whose worker died (released for another worker, or failed
    after ``JOB_MAX_ATTEMPTS``), or queued two lease periods after they were asked for with no worker taking them
    up (a message lost: the judge stayed "Queued" and blocked every later training)."""
    return (jobs_orphaned(LearnedJudge, gave_up=gave_up())
            + jobs_not_taken_up(LearnedJudge, queued=LearnedJudge.Status.QUEUED))


def _train(judge: LearnedJudge, folds: int, splits: int, owner: str) -> None:
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
    learning_curve = bool(options.pop(LEARNING_CURVE, False))
    started = time.monotonic()
    figures = train_figures(protocol, gold, options, folds=folds, splits=splits, learning_curve=learning_curve)
    if not learning_curve:  # absent, as on a judge trained before: the page says it was not computed
        figures.pop("learning_curve")
    predictions = figures.pop("out_of_fold")
    measured = time.monotonic() - started
    model = validation.fit_judge(protocol, gold.examples, gold.gold, gold.turns, gold.words, **options)
    figures["seconds"] = {"cross_validation": round(measured, 1), "fit": round(time.monotonic() - started - measured, 1)}
    if getattr(model, "chosen", None):  # what the choosing took on all the gold, and each candidate's figure
        figures["chosen"], figures["candidates"] = model.chosen, model.candidates
    figures["protocol"] = {"id": protocol.id, "version": protocol.version, "name": protocol.name}
    figures["feature_version"] = FEATURE_VERSION
    judge_model_save(judge, model)
    figures["out_of_fold_file"] = judge_predictions_save(
        judge, validation.out_of_fold_rows(protocol, predictions, gold.gold, gold.words, gold.places))
    with transaction.atomic():  # kept only by the worker that still holds the judge (another took it over: dropped)
        try:
            job_still_held(LearnedJudge, judge.pk, owner)
        except LeaseLost:
            judge.model_file.storage.delete(figures["out_of_fold_file"])
            raise
        LearnedJudge.objects.filter(pk=judge.pk).update(
            status=LearnedJudge.Status.DONE, finished_at=timezone.now(), error="", lease_owner="", lease_until=None,
            gold_version=gold_version, gold_sentences=len(gold), votes_job_id=gold.votes_job_id, figures=figures,
            model_file=judge.model_file.name, library_version=judge.library_version)


def _fail(judge: LearnedJudge, owner: str, error: str) -> None:
    job_release(LearnedJudge, judge.pk, owner, status=LearnedJudge.Status.FAILED, error=error[:5000],
                finished_at=timezone.now())


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
        # The exported out-of-fold predictions (``store.judge_predictions_open``): how many rows, of how many splits.
        "out_of_fold": ({"rows": (figures.get("cross_validated") or {}).get("sentences", 0) * _split_count(figures),
                         "splits": _split_count(figures)} if figures.get("out_of_fold_file") else None),
    }


def _split_count(figures: dict) -> int:
    return ((figures.get("cross_validated") or {}).get("splits") or {}).get("count", 1)
