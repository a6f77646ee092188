"""A lone surrogate (``\\ud800``, JSON's escape of half a pair) is not text: no database or UTF-8 file holds it
(issue 46, items 7 and 8).

A text step's answer holding one was stored on SQLite (the page's save, the API's ``answer/``) and then took
down every page, list and export that read it back; on PostgreSQL the save was a 500. A protocol document
holding one was a 500 that kept the version. Each is now refused with a 400 naming where it is, as a NUL is
(tests/test_nul_everywhere.py walks every route with both). Run on PostgreSQL too:
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/annotator_surr .venv/bin/python -m pytest tests/test_surrogates.py
"""

import copy
import json
import uuid

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotator.domain.protocol.document import COGNIBENCH, load_shipped
from annotator.domain.vocabulary import Role
from annotator.models import AnnotationEvent, Project, ProtocolVersion, SentenceAnnotation
from annotator.projects.protocol_services import protocol_set
from tests.factories import ProjectFactory, TurnFactory, member
from tests.factories_workspace import halludetect_slot

pytestmark = pytest.mark.django_db

LONE = "half a pair \ud83d here"  # json.dumps writes it as the escape "\ud83d", as a browser's JSON.stringify does
WALK = [("supported", "no"), ("error_types", ["wrong_citation"]), ("severity", 4)]


def sync(client, assignment, justification):
    steps = [*WALK, ("justification", justification)]
    change = {"request_id": str(uuid.uuid4()), "sentence": assignment.turn.sentences.order_by("index")[0].pk,
              "path": None,
              "steps": [{"action": "answer", "step": s, "value": v, "at": 1_700_000_000_000} for s, v in steps]}
    body = json.dumps({"version": assignment.version, "changes": [change]})
    assert "\\ud83d" in body
    return client.post(reverse("annotate_sync", args=[assignment.pk]), body, content_type="application/json")


def test_the_pages_save_refuses_a_lone_surrogate_in_a_text_answer_naming_it(client):
    assignment = halludetect_slot(client)
    refused = sync(client, assignment, LONE)
    assert refused.status_code == 400, refused.content
    assert refused.json()["error"].startswith("change 1: steps 4: value: The text contains a lone surrogate")
    assert not SentenceAnnotation.objects.exists() and not AnnotationEvent.objects.filter(action="answer").exists()
    # A pair is text: the same walk with a whole emoji is saved as typed.
    saved = sync(client, assignment, "an emoji \U0001f600 here")
    assert saved.status_code == 200, saved.content
    assert SentenceAnnotation.objects.get().path["justification"] == "an emoji \U0001f600 here"


def test_the_api_answer_refuses_a_lone_surrogate_in_a_text_answer_naming_the_field():
    halludetect = load_shipped("halludetect")
    project = ProjectFactory(slug="surrogate-api")
    TurnFactory(dialogue__project=project)
    protocol_set(project, halludetect.document)
    annotator = APIClient()
    annotator.force_authenticate(member(project, Role.ANNOTATOR, username="surrogate-annotator"))
    assignment = annotator.post(reverse("api:assignment-next", kwargs={"slug": project.slug})).json()
    sentence = assignment["turn_detail"]["sentences"][0]["id"]
    answer_url = reverse("api:assignment-answer", kwargs={"slug": project.slug, "pk": assignment["id"]})
    for step, value in WALK:
        body = json.dumps({"sentence": sentence, "step": step, "answer": value})
        assert annotator.post(answer_url, body, content_type="application/json").status_code == 200
    body = json.dumps({"sentence": sentence, "step": "justification", "answer": LONE})
    refused = annotator.post(answer_url, body, content_type="application/json")
    assert refused.status_code == 400, refused.content
    assert list(refused.json()["errors"]) == ["answer"]
    assert "lone surrogate" in refused.json()["errors"]["answer"][0]
    assert "justification" not in SentenceAnnotation.objects.get().path


def with_lone_question():
    document = copy.deepcopy(COGNIBENCH.document)
    document["steps"][0]["question"] = "Is the sentence \udc00 relevant?"
    return document, "/steps/0/question"


def with_lone_key():
    document = copy.deepcopy(COGNIBENCH.document)
    document["steps"][1]["extra\ud800"] = "x"
    return document, "/steps/1"


@pytest.mark.parametrize("make", [with_lone_question, with_lone_key])
def test_a_protocol_document_with_a_lone_surrogate_is_refused_naming_its_pointer_and_nothing_is_kept(make):
    document, where = make()
    project = ProjectFactory()
    lead_user = member(project, Role.LEAD)
    api = APIClient()
    api.force_authenticate(lead_user)
    answer = api.put(f"/api/v1/projects/{project.slug}/protocol/", json.dumps(document),
                     content_type="application/json")
    assert answer.status_code == 400, answer.content
    errors = answer.json()["errors"]
    assert list(errors) == [where] and "lone surrogate" in errors[where][0]
    page = Client()
    page.force_login(lead_user)
    text = json.dumps(document)  # the escape in the JSON text: what an upload or the editor sends
    refused = page.post(reverse("project_protocol", args=[project.slug]), {"source": "edited", "document": text})
    assert refused.status_code == 400
    assert f"<code>{where}</code>" in refused.content.decode() and "lone surrogate" in refused.content.decode()
    assert Project.objects.get(pk=project.pk).protocol_version_id is None and not ProtocolVersion.objects.exists()
    assert page.get(reverse("project_protocol", args=[project.slug])).status_code == 200


def test_a_label_mapping_with_a_lone_surrogate_is_refused_naming_its_pointer():
    project = ProjectFactory()
    api = APIClient()
    api.force_authenticate(member(project, Role.LEAD))
    body = json.dumps({"document": COGNIBENCH.document, "label_mapping": {"faithful": "\udfff"}})
    answer = api.put(f"/api/v1/projects/{project.slug}/protocol/", body, content_type="application/json")
    assert answer.status_code == 400, answer.content
    assert list(answer.json()["errors"]) == ["/label_mapping/faithful"]


def test_a_jsonl_import_names_the_field_and_the_pointer_of_a_lone_surrogate(tmp_path):
    """orjson refused the line as "not valid JSON: no low surrogate in string" naming no field."""
    from django.core.management import call_command
    from django.core.management.base import CommandError

    from annotator.models import Dialogue

    project = ProjectFactory(slug="surrogate-import")
    turn = {"dialogue": {"id": "d1", "topic": "rivers"}, "turn": {"index": 0, "response": "It flows. It is wide."}}
    header = {"protocol": {**COGNIBENCH.document, "name": "Cogni\ud800Bench"}}
    bad_turn = {**turn, "dialogue": {"id": "d2", "topic": "half \udfff a pair"}}
    for lines, expected in (([turn, bad_turn], "lines.jsonl: record line 2: field 'dialogue.topic': contains a lone"),
                            ([header, turn], "lines.jsonl: record line 1: field 'protocol': the protocol document "
                                             "does not hold: /name: contains a lone surrogate")):
        path = tmp_path / "lines.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        with pytest.raises(CommandError) as refused:
            call_command("import_jsonl", "--project", project.slug, str(path), stdout=open("/dev/null", "w"))
        assert expected in str(refused.value), str(refused.value)
    assert not Dialogue.objects.filter(project=project).exists()
