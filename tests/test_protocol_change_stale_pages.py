"""A protocol change reaches the pages opened before it (issue 38, item 3).

With nothing labelled yet, a lead swapped two answers' labels; a tab opened before sent its walk to "faithful" and
was answered 200 with the label "invented": the walk was read under the new document. Every route that changes a
protocol (the protocol page, the API, ``protocol_set``, a JSONL file's header) now moves the version of the slots
that follow the project's protocol, so such a tab is answered 409 and reloads onto the new document, as after a
split or merge (tests/test_annotation_outbox_browser.py shows it in Chromium); an import that changed the protocol
says so in its summary. The adjudication and amend forms send the checksum of the protocol they walked: a stale
one is a 409 that reloads the page with the reason.
"""

import copy
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotator.domain.protocol.document import COGNIBENCH, load_protocol
from annotator.domain.vocabulary import Role
from annotator.models import Adjudication, Assignment, ImportBatch, Project, SentenceAnnotation
from annotator.projects.protocol_services import protocol_set
from annotator.projects.protocols import protocol_for
from annotator.views.common import PROTOCOL_CHANGED
from tests.factories import member
from tests.factories_workspace import HX, annotators, answer_label, claimed, project_with_turns
from tests.malformed_world import make_world

pytestmark = pytest.mark.django_db

FAITHFUL_WALK = [("relevance", "relevant"), ("kind", "factual"), ("faithfulness", "faithful")]


def swapped_document():
    """CogniBench with the labels of the faithfulness step's two answers swapped (what the lead did)."""
    document = copy.deepcopy(COGNIBENCH.document)
    step = next(step for step in document["steps"] if step["id"] == "faithfulness")
    first, second = step["answers"]
    first["yields"], second["yields"] = second["yields"], first["yields"]
    return document


SWAPPED = load_protocol(swapped_document())


def by_page(project, lead, tmp_path):
    client = Client()
    client.force_login(lead)
    answer = client.post(reverse("project_protocol", args=[project.slug]),
                         {"source": "edited", "document": json.dumps(SWAPPED.document)})
    assert answer.status_code == 302


def by_api(project, lead, tmp_path):
    client = APIClient()
    client.force_authenticate(lead)
    assert client.put(f"/api/v1/projects/{project.slug}/protocol/", SWAPPED.document, format="json").status_code == 200


def by_command(project, lead, tmp_path):
    path = tmp_path / "swapped.json"
    path.write_text(json.dumps(SWAPPED.document))
    call_command("protocol_set", "--project", project.slug, str(path), stdout=StringIO())


def jsonl_with_header(tmp_path):
    """A file exported under the swapped protocol: its header, and one turn without labels."""
    response = "The plant opened in 2019."
    turn = {"dialogue": {"id": "d-header", "reference": "The plant opened in 2019."},
            "turn": {"index": 0, "response": response},
            "sentences": [{"index": 0, "start": 0, "end": len(response), "text": response}]}
    path = tmp_path / "swapped.jsonl"
    path.write_text(json.dumps({"protocol": SWAPPED.document}) + "\n" + json.dumps(turn) + "\n")
    return path


def by_jsonl_header(project, lead, tmp_path):
    call_command("import_jsonl", "--project", project.slug, str(jsonl_with_header(tmp_path)), stdout=StringIO())


ROUTES = [by_page, by_api, by_command, by_jsonl_header]


def sync(client, assignment, version, request_id="walk-0001"):
    change = {"request_id": request_id, "sentence": assignment.turn.sentences.order_by("index").first().pk,
              "path": dict(FAITHFUL_WALK),
              "steps": [{"action": "answer", "step": s, "value": v, "at": 1_700_000_000_000} for s, v in FAITHFUL_WALK]}
    return client.post(reverse("annotate_sync", args=[assignment.pk]), json.dumps({"version": version, "changes": [change]}),
                       content_type="application/json")


@pytest.mark.parametrize("change", ROUTES, ids=lambda route: route.__name__)
def test_a_page_opened_before_a_protocol_change_is_refused_and_its_reload_walks_the_new_document(change, tmp_path):
    project, _ = project_with_turns(1)
    user, = annotators(project, 1)
    lead = member(project, Role.LEAD)
    assignment = claimed(project, user)
    client = Client()
    client.force_login(user)
    opened = assignment.version  # what the page opened before the change carries

    change(project, lead, tmp_path)
    assert protocol_for(Project.objects.get(pk=project.pk)) == SWAPPED

    refused = sync(client, assignment, opened)
    assert refused.status_code == 409, refused.content
    assert "protocol" in refused.json()["error"]
    assert not SentenceAnnotation.objects.exclude(label="").exists()  # no label the annotator did not choose

    # The reloaded page walks the new document, with the slot's new version: the same keys now read as it says.
    page = client.get(reverse("annotate", args=[assignment.pk])).content.decode()
    version = Assignment.objects.get(pk=assignment.pk).version
    assert version != opened and f'"version": {version}' in page
    saved = sync(client, assignment, version, request_id="walk-0002")
    assert saved.status_code == 200 and saved.json()["saved"][0]["label"] == "invented"


def test_once_something_is_labelled_open_pages_keep_the_version_they_walk():
    """A change with a label mapping leaves every slot on the version it was opened with: its pages are not stale."""
    project, _ = project_with_turns(2)
    first, second = annotators(project, 2)
    labelled = claimed(project, first)
    answer_label(labelled, labelled.turn.sentences.order_by("index").first(), "faithful", first)
    assignment = claimed(project, second)
    opened = Assignment.objects.get(pk=assignment.pk).version
    protocol_set(project, SWAPPED.document, label_mapping={label: label for label in COGNIBENCH.labels})
    client = Client()
    client.force_login(second)
    saved = sync(client, Assignment.objects.select_related("project", "turn").get(pk=assignment.pk), opened)
    assert saved.status_code == 200 and saved.json()["saved"][0]["label"] == "faithful"


def test_an_import_that_changes_the_protocol_says_so_in_its_summary(tmp_path):
    project, _ = project_with_turns(1)
    out = StringIO()
    call_command("import_jsonl", "--project", project.slug, str(jsonl_with_header(tmp_path)), stdout=out)
    assert "protocol changed" in out.getvalue() and "project version 1" in out.getvalue()
    summary = ImportBatch.objects.get(project=project).summary
    assert "CogniBench v1" in summary["protocol_changed"] and summary["line"].startswith("protocol changed")
    # The same file again changes nothing: nothing said about the protocol.
    again = StringIO()
    call_command("import_jsonl", "--project", project.slug, str(jsonl_with_header(tmp_path)), stdout=again)
    assert "protocol changed" not in again.getvalue()


def lead_changes_the_protocol_with_a_mapping(w):
    protocol_set(w.project, SWAPPED.document, user=w.lead, label_mapping={label: label for label in COGNIBENCH.labels})


def test_an_adjudication_page_opened_before_a_protocol_change_is_refused_and_reloads_with_the_reason():
    w = make_world()
    lead_changes_the_protocol_with_a_mapping(w)
    client = Client()
    client.force_login(w.adjudicator)
    answer = client.post(reverse("gold_resolve", args=[w.project.slug, w.adjudication.pk]),
                         {"decision": "protocol", "path": json.dumps(dict(FAITHFUL_WALK)), "reason": "read it",
                          "walked_protocol": COGNIBENCH.checksum}, **HX)
    assert answer.status_code == 409 and answer["HX-Refresh"] == "true"
    assert Adjudication.objects.get(pk=w.adjudication.pk).status == Adjudication.Status.OPEN
    reloaded = client.get(reverse("gold_turn", args=[w.project.slug, w.adjudication.turn_id])).content.decode()
    assert "changed the project&#x27;s protocol after this page was opened" in reloaded
    assert SWAPPED.checksum in reloaded  # the reloaded page walks, and sends, the current protocol


def test_an_amend_form_opened_before_a_protocol_change_is_refused_and_reloads_with_the_reason():
    w = make_world()
    Assignment.objects.filter(pk=w.assignment.pk).update(status=Assignment.Status.SUBMITTED)
    lead_changes_the_protocol_with_a_mapping(w)
    client = Client()
    client.force_login(w.annotator)
    answer = client.post(reverse("qa:feedback_amend", args=[w.feedback.pk]),
                         {"label": "faithful", "request_id": "amend-stale", "walked_protocol": COGNIBENCH.checksum}, **HX)
    assert answer.status_code == 409 and answer["HX-Refresh"] == "true"
    assert SentenceAnnotation.objects.get(pk=w.annotation.pk).label == "invented"
    inbox = client.get(reverse("qa:feedback_inbox")).content.decode()
    assert PROTOCOL_CHANGED.split(",")[0] in inbox.replace("&#x27;", "'")
    assert SWAPPED.checksum in inbox
