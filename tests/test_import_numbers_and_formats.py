"""The import form in a lead's own words (issue 50, item 4): the format a project's labels come in is the one offered
first, and an import is numbered within its project (#1 for the first), not by its site-wide id."""

import json

import pytest
from django.urls import reverse

from annotator.domain.protocol.document import PROTOCOLS_DIR
from annotator.domain.vocabulary import Role
from annotator.models import ImportBatch
from annotator.projects.protocol_services import protocol_set
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, member

pytestmark = pytest.mark.django_db


def test_a_project_on_another_protocol_is_offered_project_jsonl_first(client):
    project = ProjectFactory()
    protocol_set(project, json.loads((PROTOCOLS_DIR / "halludetect.json").read_text()))
    client.force_login(member(project, Role.LEAD))
    for url in (reverse("import_upload", args=[project.slug]), reverse("import_list", args=[project.slug]),
                reverse("project_detail", args=[project.slug])):
        page = client.get(url).content.decode()
        assert '<option value="jsonl" selected>Project JSONL</option>' in page, url
        assert "This project follows HalluDetect (legal answers)" in page, url
    cognibench = ProjectFactory()
    client.force_login(member(cognibench, Role.LEAD))
    page = client.get(reverse("import_upload", args=[cognibench.slug])).content.decode()
    assert '<option value="cognibench" selected>CogniBench</option>' in page and "This project follows" not in page


def test_imports_are_numbered_within_their_project(client):
    other = ProjectFactory()
    ImportBatch.objects.create(project=other, kind="jsonl", filename="elsewhere.jsonl", status="done")
    project = ProjectFactory()
    first = ImportBatch.objects.create(project=project, kind="jsonl", filename="first.jsonl", status="done")
    second = ImportBatch.objects.create(project=project, kind="jsonl", filename="second.jsonl", status="done")
    turn = TurnFactory(dialogue=DialogueFactory(project=project, batch=second))
    client.force_login(member(project, Role.LEAD))
    assert first.pk > 1  # the site-wide id the pages used to show
    status = client.get(reverse("import_status", args=[project.slug, first.pk])).content.decode()
    assert "<h1>Import #1: first.jsonl</h1>" in status
    listing = client.get(reverse("import_list", args=[project.slug])).content.decode()
    assert f'{reverse("import_status", args=[project.slug, second.pk])}">2</a>' in listing
    assert f'{reverse("import_status", args=[project.slug, first.pk])}">1</a>' in listing
    turns = client.get(reverse("turn_list", args=[project.slug])).content.decode()
    assert "<td>#2</td>" in turns and f'<option value="{second.pk}" >#2 second.jsonl' in turns
    assert "import #2 ·" in client.get(reverse("turn_detail", args=[project.slug, turn.pk])).content.decode()
