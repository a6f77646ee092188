"""Set a project's protocol from a JSON document; refuse it with every problem, one per line.

    python manage.py protocol_set --project SLUG protocol.json [--label-mapping mapping.json]

A file named *.yaml or *.yml is read as YAML (the same document).

Exit 0 when the protocol is set (or already was), printing then each step and its kind (choice, multiple,
scale, text); otherwise exit 1 with one ``path: message`` line per
problem on stderr and nothing saved. Once the project has annotations, ``--label-mapping`` gives, for each
label of the current version, the new label it carries over to (or null): docs/protocols.md.
"""

from django.core.management.base import BaseCommand, CommandError

from ...domain.protocol.document import ProtocolDocumentError
from ...domain.protocol.kinds import summary
from ...models import Project
from ...projects.protocol_reading import ProtocolTextError, format_of, protocol_limits, read_protocol_text
from ...projects.protocol_services import protocol_set
from ...projects.protocols import protocol_of_version
from ._importing import DATA_COMMAND_CHECKS


def read_json(path: str, what: str):
    """A JSON file, or YAML when the name ends in .yaml / .yml (the same document, written as YAML), read
    within the protocol limits (PROTOCOL_MAX_CHARS, PROTOCOL_MAX_DEPTH; no YAML aliases)."""
    max_chars = protocol_limits()[0]
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read(max_chars + 1)  # one past the limit is enough to refuse it, unread
    except OSError as error:
        raise CommandError(f"{path}: cannot read the {what}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise CommandError(f"{path}: the {what} is not UTF-8 text: {error.reason} at byte {error.start}") from None
    if len(text) > max_chars:
        raise CommandError(f"{path}: the {what} is longer than {max_chars:,} characters; at most {max_chars:,} are "
                           "accepted (PROTOCOL_MAX_CHARS)", returncode=1)
    try:
        return read_protocol_text(text, format_of(path))
    except ProtocolTextError as refused:
        raise CommandError(f"{path}: the {what} {refused.reason}", returncode=1) from None


class Command(BaseCommand):
    help = "Set a project's protocol from a JSON document (refused with every problem, one per line)."
    requires_system_checks = DATA_COMMAND_CHECKS

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="Slug of the project.")
        parser.add_argument("file", help="The protocol document (JSON; YAML when named *.yaml or *.yml).")
        parser.add_argument("--label-mapping", help="JSON object {old label: new label or null}, needed once the "
                                                    "project has annotations.")

    def handle(self, *args, **options):
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"no project has the slug {options['project']!r}")
        document = read_json(options["file"], "protocol document")
        mapping = read_json(options["label_mapping"], "label mapping") if options["label_mapping"] else None
        try:
            version = protocol_set(project, document, label_mapping=mapping)
        except ProtocolDocumentError as refused:
            for where, message in refused.problems:
                self.stderr.write(f"{where}: {message}")
            raise CommandError(f"{options['file']}: refused, {len(refused.problems)} problem(s); nothing was saved",
                               returncode=1) from None
        if version is None:
            self.stdout.write(f"{project.slug}: the protocol is unchanged")
            return
        self.stdout.write(f"{project.slug}: protocol {version.document['id']} v{version.document['version']} "
                          f"set (project version {version.number})")
        protocol = protocol_of_version(version)
        for step in protocol.steps:
            self.stdout.write(f"  {summary(protocol.step(step))}")
