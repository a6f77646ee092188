"""A NUL character (\\u0000) anywhere in a protocol document (a string or a key) is refused with a 400 naming its
path, on every route that sets a protocol: the API's PUT, the lead's protocol page (and its preview) and the
``protocol_set`` command. PostgreSQL's jsonb cannot hold a NUL: the document used to be stored on SQLite and to
fail with a 500 (DataError) on PostgreSQL, a project with nothing labelled taking any document."""

import copy
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotator.domain.protocol.document import COGNIBENCH
from annotator.domain.vocabulary import Role
from annotator.models import Project, ProtocolVersion

from .factories import ProjectFactory, member

pytestmark = pytest.mark.django_db


def with_nul_question():
    document = copy.deepcopy(COGNIBENCH.document)
    document["steps"][0]["question"] = "Is the sentence\x00 relevant?"
    return document, "/steps/0/question"


def with_nul_key():
    document = copy.deepcopy(COGNIBENCH.document)
    document["steps"][1]["extra\x00"] = "x"
    return document, "/steps/1"


def with_nul_label_name():
    document = copy.deepcopy(COGNIBENCH.document)
    document["labels"][2]["name"] = "Inv\x00ented"
    return document, "/labels/2/name"


DOCUMENTS = [with_nul_question, with_nul_key, with_nul_label_name]


def nothing_saved(project):
    assert Project.objects.get(pk=project.pk).protocol_version_id is None
    assert not ProtocolVersion.objects.exists()


@pytest.mark.parametrize("make", DOCUMENTS)
def test_the_api_put_refuses_a_nul_with_a_400_naming_its_path(make):
    document, where = make()
    project = ProjectFactory()
    client = APIClient()
    client.force_authenticate(member(project, Role.LEAD))
    answer = client.put(f"/api/v1/projects/{project.slug}/protocol/", document, format="json")
    assert answer.status_code == 400, answer.content
    body = answer.json()
    assert list(body["errors"]) == [where] and "NUL" in body["errors"][where][0]
    nothing_saved(project)


@pytest.mark.parametrize("make", DOCUMENTS)
def test_the_protocol_page_and_its_preview_refuse_a_nul_naming_its_path(make):
    document, where = make()
    project = ProjectFactory()
    client = Client()
    client.force_login(member(project, Role.LEAD))
    text = json.dumps(document)  # "\u0000" in the JSON text: what a lead's upload or editor sends
    answer = client.post(reverse("project_protocol", args=[project.slug]), {"source": "edited", "document": text})
    assert answer.status_code == 400
    html = answer.content.decode()
    assert f"<code>{where}</code>" in html and "NUL character" in html
    preview = client.post(reverse("project_protocol_preview", args=[project.slug]), {"source": "edited", "document": text})
    assert f"<code>{where}</code>" in preview.content.decode()
    nothing_saved(project)


@pytest.mark.parametrize("make", DOCUMENTS)
def test_protocol_set_refuses_a_nul_naming_its_path(make, tmp_path, capsys):
    document, where = make()
    project = ProjectFactory()
    path = tmp_path / "protocol.json"
    path.write_text(json.dumps(document))
    with pytest.raises(CommandError):
        call_command("protocol_set", "--project", project.slug, str(path))
    assert capsys.readouterr().err.startswith(f"{where}: ")
    nothing_saved(project)
