"""Set a project's protocol from a JSON document; refuse it with every problem, one per line.

    python manage.py protocol_set --project SLUG protocol.json [--label-mapping mapping.json]

A file named *.yaml or *.yml is read as YAML (the same document).

Exit 0 when the protocol is set (or already was); otherwise exit 1 with one ``path: message`` line per
problem on stderr and nothing saved. Once the project has annotations, ``--label-mapping`` gives, for each
label of the current version, the new label it carries over to (or null): docs/protocols.md.
"""

import json

import yaml
from django.core.management.base import BaseCommand, CommandError

from ...domain.protocol_document import ProtocolDocumentError
from ...models import Project
from ...projects.protocol_services import protocol_set
from ._importing import DATA_COMMAND_CHECKS


def read_json(path: str, what: str):
    """A JSON file, or YAML when the name ends in .yaml / .yml (the same document, written as YAML)."""
    as_yaml = path.lower().endswith((".yaml", ".yml"))
    try:
        with open(path, encoding="utf-8") as handle:
            return yaml.safe_load(handle) if as_yaml else json.load(handle)
    except OSError as error:
        raise CommandError(f"{path}: cannot read the {what}: {error.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise CommandError(f"{path}: the {what} is not {'YAML' if as_yaml else 'JSON'}: {error}") from None


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
        else:
            self.stdout.write(f"{project.slug}: protocol {version.document['id']} v{version.document['version']} "
                              f"set (project version {version.number})")
