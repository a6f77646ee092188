"""What the data commands share: the checks they run; for the three imports, project lookup, the run,
one summary line."""

from django.core.checks import Tags
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotator.corpus.imports.importers import ImportFormatError
from ...models import Project
from annotator.corpus.imports.services import import_run

# Checks a command that reads or writes data needs. The admin and URL checks import every admin
# module and the whole URL conf (0.35 s, as long as 80,000 sentences of an import); `manage.py check`
# and the server still run them.
DATA_COMMAND_CHECKS = [Tags.models, Tags.database]


class ImportCommand(BaseCommand):
    requires_system_checks = DATA_COMMAND_CHECKS
    kind = ""
    files_help = ""

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="Slug of the project to import into.")
        parser.add_argument(
            "--create", action="store_true",
            help="Create the project if no project has this slug (otherwise that is an error).",
        )
        parser.add_argument("--name", help="Name of a project made with --create (default: the slug).")
        self.add_file_arguments(parser)

    def add_file_arguments(self, parser):
        raise NotImplementedError

    def files(self, options) -> list[str]:
        raise NotImplementedError

    def handle(self, *args, **options):
        slug = options["project"]
        paths = self.files(options)
        for path in paths:
            try:
                open(path, "rb").close()
            except OSError as exc:
                raise CommandError(f"{path}: cannot read the file ({exc.strerror})") from None
        with transaction.atomic():
            project = Project.objects.filter(slug=slug).first()
            if project is None:
                if not options["create"]:
                    raise CommandError(f"no project with slug {slug!r}; create it in the admin or pass --create")
                project = Project.objects.create(slug=slug, name=options["name"] or slug)
            try:
                summary, _batch = import_run(project, self.kind, paths)
            except ImportFormatError as exc:
                raise CommandError(f"{exc} - nothing was imported") from None
        for problem in summary.inconsistencies:
            self.stdout.write(f"inconsistency: {problem}")
        self.stdout.write(f"{self.name_for_output()} into {project.slug}: {summary.line()}")

    def name_for_output(self):
        return self.__module__.rsplit(".", 1)[-1]
