import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotator.corpus.exports.exporters import ExportUnencodable, FORMATS, encoded_pieces, export_pieces, format_refusal
from ...models import Project

from ._importing import DATA_COMMAND_CHECKS


class Command(BaseCommand):
    requires_system_checks = DATA_COMMAND_CHECKS
    help = (
        "Export a project's gold: --format jsonl (one turn per line, docs/jsonl-format.md), --format cognibench "
        "(a labels.json in the public CogniBench structure) or --format csv (one row per sentence, for a "
        "spreadsheet). Streams: memory does not grow with the project."
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
        if refusal := format_refusal(project_obj, format):
            raise CommandError(f"--format {format}: {refusal}")
        written = {"turns": 0}
        try:
            pieces = export_pieces(project_obj, format, min_severity=options.get("min_severity"),
                                   progress=lambda done: written.update(turns=done))
        except ValueError as exc:
            raise CommandError(f"--min-severity: {exc}") from None
        pieces = encoded_pieces(pieces)  # a stored value that is not UTF-8 stops the export, naming its line
        if out == "-":
            stream = getattr(sys.stdout, "buffer", None)  # bytes as they are (a StringIO in place of it: text)
            try:
                for piece in pieces:
                    if stream is not None:
                        stream.write(piece)
                    else:
                        sys.stdout.write(piece.decode("utf-8"))
            except ExportUnencodable as refused:
                raise CommandError(str(refused)) from None
            return
        path = Path(out)
        temporary = path.with_name(path.name + ".part")
        try:
            with open(temporary, "wb") as handle:
                for piece in pieces:
                    handle.write(piece)
        except OSError as exc:
            temporary.unlink(missing_ok=True)
            raise CommandError(f"{out}: cannot write ({exc.strerror})") from None
        except ExportUnencodable as refused:
            temporary.unlink(missing_ok=True)
            raise CommandError(f"{refused}; nothing was written to {out}") from None
        temporary.replace(path)  # a reader never sees half an export
        # The turns the export read (its progress), never its lines: a JSONL's protocol header is none (issue 39).
        what = {"jsonl": f"{written['turns']} turns", "csv": f"the {written['turns']} turns' sentences"}.get(
            format, "labels.json")
        self.stdout.write(f"export_gold: wrote {what} of {project_obj.slug} to {path}")
