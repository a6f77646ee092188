"""Score an auto-label job against gold: word-weighted P/R/F1 per threshold, cognitive accuracy."""

import json

from django.core.management.base import BaseCommand, CommandError

from autolabel.models import AutoLabelJob
from autolabel.selectors import job_evaluation


class Command(BaseCommand):
    help = "Evaluate a job's predictions against gold (sentence level, weighted by words, as in CogniBench)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--job", type=int, required=True)
        parser.add_argument("--json", action="store_true", help="Print the report as JSON.")

    def handle(self, *args, **o):
        job = AutoLabelJob.objects.filter(pk=o["job"], project__slug=o["project"]).select_related("prompt_version").first()
        if job is None:
            raise CommandError(f"no job {o['job']} in project {o['project']!r}")
        report = job_evaluation(job)
        if o["json"]:
            self.stdout.write(json.dumps(report, indent=2, sort_keys=True))
            return
        self.stdout.write(f"Job {job.pk} ({job.model}, prompt v{job.prompt_version.version}, {job.samples} samples): "
                          f"{report['sentences']} sentences with gold, {report['words']} words")
        self.stdout.write(f"{'threshold':>9}  {'view':<10} {'precision':>9} {'recall':>7} {'F1':>7}")
        for threshold, views in report["thresholds"].items():
            for view, scores in views.items():
                cells = [_fmt(scores[k]) for k in ("precision", "recall", "f1")]
                self.stdout.write(f"{threshold:>9}  {view:<10} {cells[0]:>9} {cells[1]:>7} {cells[2]:>7}")
        cognitive = report["cognitive"]
        self.stdout.write(f"Cognitive 4-way accuracy at threshold {job.threshold}: {_fmt(cognitive['accuracy'])} "
                          f"({cognitive['correct']}/{cognitive['total']})")
        self.stdout.write("gold \\ predicted: " + " | ".join(cognitive["columns"]))
        for gold in cognitive["rows"]:
            self.stdout.write(f"{gold:<12} " + " ".join(f"{cognitive['matrix'][gold][c]:>5}" for c in cognitive["columns"]))


def _fmt(value):
    return "-" if value is None else f"{value:.3f}"
