"""Train the project's learned judge on its gold, here and now (the page and the API leave it to a worker)."""

import json

from django.core.management.base import BaseCommand, CommandError

from annotator.models import Project
from autolabel.learned.training import SHAPES, TrainingInProgress, judge_report, judge_train_create, judge_train_run
from autolabel.learned.store import judge_predictions_open
from autolabel.learned.validation import FOLDS, SPLITS
from autolabel.models import LearnedJudge


class Command(BaseCommand):
    help = ("Train a classifier on the project's gold in its current protocol; print its figures, cross-validated "
            "grouped by turn, and its learning curve.")

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="The project's slug.")
        parser.add_argument("--folds", type=int, default=FOLDS, help=f"Cross-validation folds (default {FOLDS}).")
        parser.add_argument("--splits", type=int, default=SPLITS,
                            help=f"Group splits the headline figure is the mean and sd of (default {SPLITS}).")
        parser.add_argument("--learning-curve", action="store_true",
                            help="Also the learning curve (four more cross-validations: most of the time).")
        parser.add_argument("--json", action="store_true", help="Print the figures as JSON.")
        parser.add_argument("--oof", metavar="FILE",
                            help="Write the out-of-fold predictions there, one JSON line per sentence and split "
                                 "(docs/autolabel.md: recompute the figures from them).")
        parser.add_argument("--shape", choices=list(SHAPES), default="choose",
                            help="The model: chosen on the gold by grouped cross-validation (default), the walk's "
                                 "steps, one classifier over the labels, or hallucinated or not then the label "
                                 "within that side.")

    def handle(self, *args, **o):
        project = Project.objects.filter(slug=o["project"]).first()
        if project is None:
            raise CommandError(f"no project {o['project']!r}")
        if o["folds"] < 2:
            raise CommandError(f"--folds must be at least 2, not {o['folds']}")
        if o["splits"] < 1:
            raise CommandError(f"--splits must be at least 1, not {o['splits']}")
        try:
            judge = judge_train_create(project, enqueue=False, shape=o["shape"], learning_curve=o["learning_curve"])
        except TrainingInProgress as running:
            raise CommandError(f"{running}: wait for it to finish") from None
        judge = judge_train_run(judge.pk, folds=o["folds"], splits=o["splits"])
        if judge.status != LearnedJudge.Status.DONE:
            raise CommandError(f"learned judge {judge.pk} failed: {judge.error}")
        report = judge_report(judge)
        if o["oof"]:
            with judge_predictions_open(judge) as source, open(o["oof"], "wb") as target:
                target.write(source.read())
        if o["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        figures = report["cross_validated"]
        views = ", ".join(f"{view} {figure(f1)}" for view, f1 in figures["views"].items())
        self.stdout.write(f"Learned judge {judge.pk} on {project.slug}: {figures['sentences']} gold sentences in "
                          f"{figures['turns']} turns, {figures['folds']}-fold cross-validation grouped by turn")
        interval = (figures.get("intervals") or {}).get("macro_f1") or [None, None]
        splits = figures["splits"]
        self.stdout.write(f"macro F1 {figure(splits['mean'])} ± {figure(splits['sd'])} over {splits['count']} group "
                          f"splits; the first split {figure(figures['macro_f1'])} (95 % interval over the turns "
                          f"{figure(interval[0])}–{figure(interval[1])}; {views})")
        self.stdout.write("learning curve: " + ("; ".join(
            f"{point['sentences']} sentences: {figure(point['macro_f1'])}" for point in report["learning_curve"])
            or "not computed (--learning-curve)"))


def figure(value):
    return "n/a" if value is None else f"{value:.3f}"
