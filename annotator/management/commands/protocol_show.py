"""Print a project's protocol document as JSON (CogniBench's built-in one when the project never set one).

    python manage.py protocol_show --project SLUG > protocol.json

The output, given to ``protocol_set`` on a fresh project, is accepted unchanged. A step of another kind than
choice (multiple, scale, text) shows its ``"kind"``; ``--steps`` prints instead one line per step, in document
order, with its kind: ``severity: scale, 1 to 5 (1 cosmetic, 5 outcome-changing)``.
"""

import json

from django.core.management.base import BaseCommand, CommandError

from ...domain.protocol.kinds import summary
from ...models import Project
from ...projects.protocols import protocol_for
from ._importing import DATA_COMMAND_CHECKS


class Command(BaseCommand):
    help = "Print a project's protocol document as JSON."
    requires_system_checks = DATA_COMMAND_CHECKS

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="Slug of the project.")
        parser.add_argument("--steps", action="store_true", help="One line per step with its kind, not the JSON.")

    def handle(self, *args, **options):
        project = Project.objects.filter(slug=options["project"]).select_related("protocol_version").first()
        if project is None:
            raise CommandError(f"no project has the slug {options['project']!r}")
        protocol = protocol_for(project)
        if options["steps"]:
            for step in protocol.steps:
                self.stdout.write(summary(protocol.step(step)))
            return
        self.stdout.write(json.dumps(protocol.document, indent=2, ensure_ascii=False))
