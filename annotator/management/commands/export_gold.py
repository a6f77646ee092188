import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotator.exporters import FORMATS
from annotator.models import Project

from ._importing import DATA_COMMAND_CHECKS


class Command(BaseCommand):
    requires_system_checks = DATA_COMMAND_CHECKS
    help = (
        "Export a project's gold: --format jsonl (one turn per line, docs/jsonl-format.md) or --format cognibench "
        "(a labels.json in the public CogniBench structure). Streams: memory does not grow with the project."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="Slug of the project.")
        parser.add_argument("--format", choices=sorted(FORMATS), default="jsonl")
        parser.add_argument("--out", required=True, help="Output file ('-' for standard output).")
        parser.add_argument(
            "--min-severity", default=None,
            help="JSONL only: mark each hallucinated sentence's gold 'severe' when rated at least this (1-5, or "
                 "'project' for the project's severity threshold), HalluDetect's filter.",
        )

    def handle(self, *args, project, format, out, **options):
        project_obj = Project.objects.filter(slug=project).first()
        if project_obj is None:
            raise CommandError(f"no project with slug {project!r}")
        min_severity = options.get("min_severity")
        if min_severity is not None:
            if format != "jsonl":
                raise CommandError("--min-severity applies to the jsonl format")
            if min_severity == "project":
                min_severity = project_obj.severity_threshold
            elif not str(min_severity).isdigit() or not 1 <= int(min_severity) <= 5:
                raise CommandError(f"--min-severity must be 1 to 5 or 'project', not {min_severity!r}")
            pieces = FORMATS[format](project_obj, min_severity=int(min_severity))
        else:
            pieces = FORMATS[format](project_obj)
        turns = 0
        if out == "-":
            for piece in pieces:
                sys.stdout.write(piece)
            return
        path = Path(out)
        temporary = path.with_name(path.name + ".part")
        try:
            with open(temporary, "w", encoding="utf-8", newline="\n") as handle:
                for piece in pieces:
                    handle.write(piece)
                    turns += format == "jsonl"
        except OSError as exc:
            temporary.unlink(missing_ok=True)
            raise CommandError(f"{out}: cannot write ({exc.strerror})") from None
        temporary.replace(path)  # a reader never sees half an export
        what = f"{turns} turns" if format == "jsonl" else "labels.json"
        self.stdout.write(f"export_gold: wrote {what} of {project_obj.slug} to {path}")
