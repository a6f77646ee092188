"""Print a project's protocol document as JSON (CogniBench's built-in one when the project never set one).

    python manage.py protocol_show --project SLUG > protocol.json

The output, given to ``protocol_set`` on a fresh project, is accepted unchanged.
"""

import json

from django.core.management.base import BaseCommand, CommandError

from ...models import Project
from ...projects.protocols import protocol_for
from ._importing import DATA_COMMAND_CHECKS


class Command(BaseCommand):
    help = "Print a project's protocol document as JSON."
    requires_system_checks = DATA_COMMAND_CHECKS

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="Slug of the project.")

    def handle(self, *args, **options):
        project = Project.objects.filter(slug=options["project"]).select_related("protocol_version").first()
        if project is None:
            raise CommandError(f"no project has the slug {options['project']!r}")
        self.stdout.write(json.dumps(protocol_for(project).document, indent=2, ensure_ascii=False))
