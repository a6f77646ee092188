"""A lone surrogate stored before such text was refused (issue 46, items 7 and 8): SQLite kept one inside a JSON
column, as its escape, and everything that read it back failed to write it as UTF-8. Simulated by writing the
value through the ORM (PostgreSQL's jsonb refuses it: these run on SQLite only).

Pages and API answers show U+FFFD in its place; an export never answers as if complete without its records: it
stops, naming the line, the turn and the field (the download ends with a line saying so and is cut off, the
background job fails with that reason, ``export_gold`` exits with it and writes nothing)."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotator.corpus.exports.services import export_job_create, export_job_execute
from annotator.domain.protocol.document import COGNIBENCH, PROTOCOLS_DIR
from annotator.domain.vocabulary import Role
from annotator.models import Adjudication, ExportJob, Project, ProtocolVersion, SentenceAnnotation
from annotator.projects.protocol_services import protocol_set
from tests.factories import member
from tests.factories_workspace import annotators, project_with_turns
from tests.test_step_kinds_pages import UNSUPPORTED, walk_and_submit

pytestmark = [pytest.mark.django_db]

BAD = "bad \ud800 text"


def where(turn) -> str:
    field = "sentences.0.annotations.1.path.justification"
    return f"line 2 of the export (dialogue {turn.dialogue.external_id!r}, turn 0: {field})"


@pytest.fixture(autouse=True)
def sqlite_only():
    if connection.vendor != "sqlite":
        pytest.skip("PostgreSQL's jsonb never held a lone surrogate")


@pytest.fixture
def disputed():
    """A HalluDetect turn in dispute, one side's stored justification holding a lone surrogate."""
    project, turns = project_with_turns(1)
    Project.objects.filter(pk=project.pk).update(overlap=2)
    project.refresh_from_db()
    protocol_set(project, json.loads((PROTOCOLS_DIR / "halludetect.json").read_text()))
    first, second = annotators(project, 2)
    walk_and_submit(project, first, [("supported", "yes")])
    stored = walk_and_submit(project, second, UNSUPPORTED)
    for annotation in SentenceAnnotation.objects.filter(assignment=stored):
        annotation.path = {**annotation.path, "justification": BAD}
        annotation.save()
    assert Adjudication.objects.exists()
    lead = member(project, Role.LEAD)
    return project, turns[0], stored, lead


def clients(user):
    page, api = Client(raise_request_exception=False), APIClient(raise_request_exception=False)
    page.force_login(user)
    api.force_authenticate(user)
    return page, api


def test_pages_and_api_answers_show_a_stored_lone_surrogate_as_the_replacement_character(disputed):
    project, turn, stored, lead = disputed
    page, api = clients(lead)
    screen = page.get(reverse("gold_turn", args=[project.slug, turn.pk]))
    assert screen.status_code == 200 and "bad \ufffd text" in screen.content.decode()
    for url in (f"/api/v1/projects/{project.slug}/assignments/{stored.pk}/",
                f"/api/v1/projects/{project.slug}/annotations/", f"/api/v1/projects/{project.slug}/adjudications/"):
        answer = api.get(url)
        assert answer.status_code == 200, url
        assert "bad \ufffd text" in answer.content.decode(), url
    assert SentenceAnnotation.objects.filter(assignment=stored)[0].path["justification"] == BAD  # shown, not changed


def streamed(response):
    """The chunks a download sent before it stopped, and why it stopped."""
    chunks, stopped = [], None
    try:
        for chunk in response.streaming_content:
            chunks.append(chunk)
    except ValueError as refused:  # the export's refusal (before it: the encoding error)
        stopped = refused
    return b"".join(chunks).decode(), stopped


def test_an_export_stops_naming_the_record_rather_than_answer_without_it(disputed, tmp_path):
    project, turn, _, lead = disputed
    page, api = clients(lead)
    for response in (page.get(reverse("project_export", args=[project.slug, "jsonl"])),
                     api.get(f"/api/v1/projects/{project.slug}/gold/export/?fmt=jsonl")):
        body, stopped = streamed(response)
        assert stopped is not None and str(stopped).startswith(where(turn))
        assert body.splitlines()[-1] == f"EXPORT FAILED: {stopped}"
        assert body.startswith('{"protocol":')  # the header, then the refusal: no turn line went out without it

    out = tmp_path / "gold.jsonl"
    with pytest.raises(CommandError, match=r"^line 2 of the export \(dialogue .*nothing was written"):
        call_command("export_gold", "--project", project.slug, "--out", str(out))
    assert not out.exists() and not list(tmp_path.iterdir())

    job = export_job_execute(export_job_create(project, "jsonl", lead).pk)
    assert job.status == ExportJob.Status.FAILED and job.error.startswith(where(turn))


def test_a_stored_protocol_document_with_a_lone_surrogate_takes_no_page_down_and_a_clean_one_replaces_it():
    project, _ = project_with_turns(1)
    lead = member(project, Role.LEAD)
    document = {**COGNIBENCH.document, "name": "Cogni\udc00Bench"}
    version = ProtocolVersion.objects.create(project=project, number=1, document=document, checksum="x" * 64)
    Project.objects.filter(pk=project.pk).update(protocol_version=version)
    page, api = clients(lead)
    for name in ("project_detail", "project_protocol", "reports"):
        answer = page.get(reverse(name, args=[project.slug]))
        assert answer.status_code == 200, name
        assert "Cogni\ufffdBench" in answer.content.decode(), name
    assert api.get(f"/api/v1/projects/{project.slug}/protocol/").json()["name"] == "Cogni\ufffdBench"
    export, stopped = streamed(page.get(reverse("project_export", args=[project.slug, "jsonl"])))
    assert stopped is None and json.loads(export.splitlines()[0])["protocol"]["name"] == "Cogni\ufffdBench"

    saved = api.put(f"/api/v1/projects/{project.slug}/protocol/", COGNIBENCH.document, format="json")
    assert saved.status_code == 200, saved.content
    protocol_page = page.get(reverse("project_protocol", args=[project.slug]))
    assert protocol_page.status_code == 200  # its history still lists the stored version, as U+FFFD
    assert api.get(f"/api/v1/projects/{project.slug}/protocol/").json() == COGNIBENCH.document
