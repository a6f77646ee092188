"""Load the demo project written for this repository (fixtures/demo/): idempotent."""

import json

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from ...models import ImportBatch, Membership, Project
from annotator.corpus.imports.services import import_run

DEMO_DIR = settings.BASE_DIR / "fixtures" / "demo"


class Command(BaseCommand):
    help = "Create the demo project, its original dialogues and one user per role; prints the logins."

    def handle(self, *args, **options):
        spec = json.loads((DEMO_DIR / "project.json").read_text())
        User = get_user_model()
        with transaction.atomic():
            fields = spec["project"]
            project, created = Project.objects.get_or_create(
                slug=fields["slug"], defaults={k: v for k, v in fields.items() if k != "slug"}
            )
            for entry in spec["users"]:
                user, _ = User.objects.get_or_create(username=entry["username"])
                user.is_staff = entry["staff"]
                user.is_superuser = entry["superuser"]
                user.email = user.email or f"{entry['username']}@example.org"
                user.set_password(entry["password"])  # the demo always logs in with the printed password
                user.save()
                # No staff flag for the lead: a project role is a membership (leads import through the API or the project page).
                if entry["role"]:
                    Membership.objects.update_or_create(project=project, user=user, defaults={"role": entry["role"]})
            summary, _ = import_run(project, ImportBatch.Kind.JSONL, [DEMO_DIR / "dialogues.jsonl"])
        self.stdout.write(f"Demo project {project.slug!r} ({'created' if created else 'already there'}): {summary.line()}")
        self.stdout.write("Logins (username / password / role):")
        for entry in spec["users"]:
            role = entry["role"] or ("admin (staff, superuser)" if entry["superuser"] else "staff")
            self.stdout.write(f"  {entry['username']:<12} {entry['password']:<18} {role}")
