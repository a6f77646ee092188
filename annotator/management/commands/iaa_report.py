"""Print a project's inter-annotator agreement: the numbers the reports page shows."""

import json

from django.core.management.base import BaseCommand, CommandError

from ...domain.agreement_kinds import SCALE_LEVELS
from ...models import ImportBatch, Project
from ...reports.agreement import project_agreement


def fmt(value, digits=3):
    return "—" if value is None else f"{value:.{digits}f}"


def pct(value):
    return "—" if value is None else f"{100 * value:.1f}%"


class Command(BaseCommand):
    help = "Krippendorff's alpha, percent agreement and Cohen's kappa of a project, per step, pair, annotator, batch and week."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="Project slug.")
        parser.add_argument("--batch", type=int, help="Only this import batch (id).")
        parser.add_argument("--json", action="store_true", help="Print JSON instead of tables.")
        parser.add_argument("--scale-level", choices=SCALE_LEVELS, default="ordinal",
                            help="Krippendorff's alpha of a scale step: ordinal (default) or interval.")

    def handle(self, *args, **options):
        try:
            project = Project.objects.get(slug=options["project"])
        except Project.DoesNotExist:
            raise CommandError(f"No project with slug {options['project']!r}.") from None
        batch = None
        if options["batch"] is not None:
            batch = ImportBatch.objects.filter(project=project, pk=options["batch"]).first()
            if batch is None:
                raise CommandError(f"Project {project.slug!r} has no import batch {options['batch']}.")
        report = project_agreement(project, batch, scale_level=options["scale_level"])
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        out = self.stdout.write
        out(f"Inter-annotator agreement: {project.name} ({project.slug})" + (f", batch {report['batch']}" if batch else ""))
        out("")
        out(f"{'Variable':<34} {'kind':<8} {'metric':<22} {'units':>8} {'alpha':>7} {'percent':>8} {'kappa':>7}  scope")
        for row in report["measures"]:
            left_out = (f"  ({row['left_out']} left out: a label given there is reached by several paths)"
                        if row.get("left_out") else "")
            # A text step is counted, not scored: its units are shown, its alpha is not a missing figure but none.
            alpha = "—" if row.get("kind") == "text" else fmt(row["alpha"])
            out(f"{row['title']:<34} {row.get('kind', 'choice'):<8} {row.get('metric', 'nominal α'):<22} "
                f"{row['units']:>8} {alpha:>7} {pct(row['percent']):>8} {fmt(row['kappa']):>7}  {row['scope']}{left_out}")
        out("")
        out("Annotator pairs")
        for row in report["pairs"]:
            out(f"  {' / '.join(row['annotators']):<40} {row['units']:>8} {pct(row['percent']):>8} {fmt(row['kappa']):>7}")
        out("")
        out("Annotators (agreement with co-annotators; accuracy against gold)")
        for row in report["annotators"]:
            out(f"  {row['annotator']:<30} {row['units']:>8} {pct(row['percent']):>8} {fmt(row['kappa']):>7} "
                f"gold {row['gold_units']:>7} accuracy {pct(row['accuracy'])}")
        out("")
        out("By import batch")
        for row in report["batches"]:
            out(f"  {row['batch']:<40} {row['units']:>8} {fmt(row['alpha']):>7} {pct(row['percent']):>8} {fmt(row['kappa']):>7}")
        out("")
        out("By week")
        for row in report["weekly"]:
            out(f"  {row['week']:<40} {row['units']:>8} {fmt(row['alpha']):>7} {pct(row['percent']):>8} {fmt(row['kappa']):>7}")
