"""Each generator model's share of each family of the project's protocol (CogniBench: factual and cognitive
statements) and how often each is hallucinated (CogniBench Fig. 8), from a job's pre-labels corrected by gold
drawn at random (docs/autolabel.md)."""

import json

from django.core.management.base import BaseCommand, CommandError

from autolabel.faithfulness.report import faithfulness_report
from autolabel.models import AutoLabelJob


class Command(BaseCommand):
    help = ("Per generator model: hallucination rate, the share of each family of the protocol and its hallucination "
            "rate (CogniBench: cognitive share, factual and cognitive hallucination rates); the pre-labeler's "
            "estimate, the gold-only one and the prediction-powered one, with 95 % intervals.")

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="The project's slug.")
        parser.add_argument("--job", type=int, required=True, help="The auto-label job's id.")
        parser.add_argument("--json", action="store_true", help="Print the documented JSON (docs/autolabel.md).")

    def handle(self, *args, **options):
        job = AutoLabelJob.objects.filter(pk=options["job"], project__slug=options["project"]).first()
        if job is None:
            raise CommandError(f"no auto-label job {options['job']} in project {options['project']!r}")
        report, calibration = faithfulness_report(job)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        self.stdout.write(f"Job {job.pk} ({job.model}): {report['overall']['sentences']} sentences.")
        self.stdout.write(calibration.statement)
        self.stdout.write(f"{'model':<20} {'measure':<30} {'auto':>7} {'gold only':>22} {'corrected':>22}")
        for name, group in [("(all)", report["overall"])] + [(g["generator_model"] or "(unnamed)", g) for g in report["models"]]:
            for measure in (m["id"] for m in report["measures"]):
                figures = group[measure]
                self.stdout.write(
                    f"{name[:20]:<20} {measure:<30} {_fmt(figures['auto']):>7} "
                    f"{_with_interval(figures['gold_only'], figures['gold_only_ci95']):>22} "
                    f"{_with_interval(figures['corrected'], figures['corrected_ci95']):>22}"
                )


def _fmt(value):
    return "-" if value is None else f"{value:.3f}"


def _with_interval(value, interval):
    if value is None:
        return "-"
    if interval is None:  # fewer than two drawn turns with a non-zero denominator (estimators.has_interval)
        return f"{value:.3f} [too few drawn turns]"
    return f"{value:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"
