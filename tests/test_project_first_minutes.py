"""A new lead's first minutes (issue 41, item 8): the protocol and the language are chosen when the project is made,
the guide's "Choose the protocol" is done on a choice (not because CogniBench is the default), and after an import
"Review units" lists the units that look wrong, each linked to its turn's split tool."""

import json

import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile

from annotator import models
from annotator.domain.protocol.document import load_shipped
from annotator.domain.vocabulary import Role
from annotator.projects.protocol_services import protocol_set
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, UserFactory, member
from tests.test_project_console import allowed_to_create

pytestmark = pytest.mark.django_db


def create(client, **fields):
    client.force_login(allowed_to_create(UserFactory(username="lena")))
    data = {"name": "Pilot", "protocol_mode": "sequential", "overlap": 2, "protocol": "cognibench", **fields}
    return client.post("/projects/new/", data)


def step(client, project, key):
    page = client.get(f"/p/{project.slug}/").content.decode()
    start = page.index(f'id="step-{key}"')
    following = page.find('<li class="setup-step', start + 1)
    return page[start:following if following > 0 else page.index('<div class="actions">', start)]


def test_a_shipped_protocol_and_the_language_are_chosen_when_the_project_is_made(client):
    answer = create(client, protocol="face4rag", default_language="zh")
    assert answer.status_code == 302
    project = models.Project.objects.get(slug="pilot")
    assert project.default_language == "zh"
    assert project.protocol_version.number == 1
    assert project.protocol_version.document == load_shipped("face4rag").document
    assert "Done" in step(client, project, "protocol")


def test_a_protocol_file_is_read_as_the_protocol_page_reads_it(client):
    document = yaml.safe_dump(load_shipped("cognibench_clinical").document, allow_unicode=True)
    upload = SimpleUploadedFile("clinical.yaml", document.encode(), content_type="application/x-yaml")
    assert create(client, protocol="file", protocol_file=upload).status_code == 302
    assert models.Project.objects.get().protocol_version.document["name"] == load_shipped("cognibench_clinical").name


def test_a_refused_protocol_file_creates_no_project_and_names_the_problem(client):
    document = load_shipped("face4rag").document
    document["groups"]["hallucination"].append("made_up")
    upload = SimpleUploadedFile("bad.json", json.dumps(document).encode(), content_type="application/json")
    answer = create(client, protocol="file", protocol_file=upload)
    assert answer.status_code == 400
    assert "unknown label &#x27;made_up&#x27;" in answer.content.decode() or "unknown label 'made_up'" in answer.content.decode()
    assert not models.Project.objects.exists()
    assert create(client, protocol="file").status_code == 400  # a file chosen but none given
    assert create(client, default_language="klingon").status_code == 400
    assert not models.Project.objects.exists()


def test_the_protocol_step_is_done_on_a_choice_not_on_the_default(client):
    project = ProjectFactory()
    lead = member(project, Role.LEAD)
    client.force_login(lead)
    assert "To do" in step(client, project, "protocol") and "not chosen yet" in step(client, project, "protocol")
    # A script (or an import's header) setting the same document is no choice: nothing changes.
    assert protocol_set(project, load_shipped("cognibench").document, user=lead) is None
    assert "To do" in step(client, project, "protocol")
    # The lead keeps CogniBench on the Protocol page: that is a choice, and the project gets its first version.
    assert client.post(f"/p/{project.slug}/protocol/", {"source": "shipped", "shipped": "cognibench"}).status_code == 302
    assert project.__class__.objects.get(pk=project.pk).protocol_version.number == 1
    assert protocol_set(project, load_shipped("cognibench").document, user=lead, chosen=True) is None  # again: nothing
    assert "Done" in step(client, project, "protocol")


def test_review_units_lists_the_units_that_look_wrong_with_a_link_to_their_turn(client):
    project = ProjectFactory()
    lead = member(project, Role.LEAD)
    client.force_login(lead)
    assert "Import data first." in step(client, project, "units")
    clean = TurnFactory(dialogue=DialogueFactory(project=project), sentences=["The river is long.", "It is wide."])
    # It says what it checked, not more (issue 50, item 9): the segmenter that cut a unit finds one sentence in it.
    checked = step(client, project, "units")
    assert "Every unit reads as one sentence" not in checked
    assert ("No unit is over 600 characters, and the language&#x27;s segmenter (the one that cut the units) finds one "
            "sentence in each; a sentence end it misses is not found here") in checked
    assert "Done" in step(client, project, "units")
    chinese = DialogueFactory(project=project, language="zh")
    joined = TurnFactory(dialogue=chinese, sentences=["会议推迟了。明天再议。", "好的。"])
    long_one = TurnFactory(dialogue=DialogueFactory(project=project), sentences=["word " * 130 + "end"])
    listed = step(client, project, "units")
    assert "To do" in listed and "2 units may hold several sentences or be too long" in listed
    assert f'href="/p/{project.slug}/turns/{joined.pk}/#units"' in listed and "holds 2 sentences" in listed
    assert f'href="/p/{project.slug}/turns/{long_one.pk}/#units"' in listed and "653 characters long" in listed
    assert f"/turns/{clean.pk}/" not in listed


def test_annotators_see_no_guide(client):
    project = ProjectFactory()
    TurnFactory(dialogue=DialogueFactory(project=project), sentences=["会议推迟了。明天再议。"])
    client.force_login(member(project, Role.ANNOTATOR))
    assert 'id="step-units"' not in client.get(f"/p/{project.slug}/").content.decode()
