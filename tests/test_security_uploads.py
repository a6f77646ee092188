"""Uploads: only what an import reads is accepted (every route), and a stored file reaches only the project's leads,
as an attachment. Leads import from the project page without being staff.
"""

import json
from html import unescape
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from annotator.models import ImportBatch, Turn
from annotator.corpus.imports.services import import_batch_execute, import_batch_start
from annotator.domain.vocabulary import Role
from tests.conftest import SHARED_DATA
from tests.factories import ProjectFactory, UserFactory, member

pytestmark = pytest.mark.django_db

CB = SHARED_DATA / "cognibench-sample"
GOOD_JSONL = (json.dumps({"dialogue": {"id": "a", "reference": "Paris is in France."},
                          "turn": {"index": 0, "response": "Paris is in France. It is lovely."}}) + "\n").encode()
HTML = b"<!doctype html><html><body><script>alert(document.cookie)</script></body></html>"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>'


def stored_files(root):
    return sorted(p.name for p in root.rglob("*") if p.is_file())


def page_upload(client, project, kind, upload, second=None):
    data = {"kind": kind, "upload": upload}
    if second is not None:
        data["second_upload"] = second
    return client.post(reverse("import_upload", args=[project.slug]), data)


def api_upload(project, user, kind, upload, second=None):
    client = APIClient()
    client.force_authenticate(user)
    data = {"kind": kind, "upload": upload}
    if second is not None:
        data["second_upload"] = second
    return client.post(reverse("api:import-list", kwargs={"slug": project.slug}), data, format="multipart")


def admin_upload(client, project, kind, upload):
    return client.post(reverse("admin:annotator_importbatch_add"), {"project": project.pk, "kind": kind, "upload": upload})


# (kind, file name, content, the message's words)
REFUSED = [
    ("jsonl", "page.html", HTML, "page.html: the format chosen reads JSON Lines, one object per line (the project's .jsonl format), in a .jsonl file. Only .jsonl files are accepted."),
    ("cognibench", "dialogues.json", HTML, "dialogues.json does not start as a JSON list of records (CogniBench dialogues.json) does (with '['); it starts with '<'."),
    ("refchecker", "answers.json", SVG, "answers.json does not start as a JSON list of records (RefChecker *_answers.json) does"),
    ("cognibench", "image.svg", SVG, "Only .json files are accepted"),
    ("jsonl", "in.jsonl", b"\xff\xd8\xff\xe0 JFIF binary", "in.jsonl is not UTF-8 text"),
    ("jsonl", "in.jsonl", b"  \n", "in.jsonl is empty."),
    # A file of the other extension is told the format that reads it (issue 50, item 4).
    ("jsonl", "in.json", GOOD_JSONL, "For a .json file choose the format CogniBench"),
    ("cognibench", "in.jsonl", GOOD_JSONL, 'For a .jsonl file choose the format Project JSONL ("jsonl").'),
]


@pytest.mark.parametrize("kind, name, content, expected", REFUSED)
def test_the_project_page_refuses_what_no_import_reads_and_stores_nothing(client, private_files, kind, name, content, expected):
    project = ProjectFactory(slug="up")
    client.force_login(member(project, Role.LEAD))
    response = page_upload(client, project, kind, SimpleUploadedFile(name, content, content_type="text/html"))
    assert response.status_code == 400
    assert expected in unescape(response.content.decode())
    assert not ImportBatch.objects.exists() and stored_files(private_files) == []


@pytest.mark.parametrize("kind, name, content, expected", REFUSED)
def test_the_api_refuses_what_no_import_reads(private_files, kind, name, content, expected):
    project = ProjectFactory(slug="up")
    response = api_upload(project, member(project, Role.LEAD), kind, SimpleUploadedFile(name, content))
    assert response.status_code == 400
    assert expected in response.json()["errors"]["upload"][0]
    assert not ImportBatch.objects.exists() and stored_files(private_files) == []


@pytest.mark.parametrize("kind, name, content, expected", REFUSED[:3])
def test_the_admin_refuses_what_no_import_reads(client, private_files, kind, name, content, expected):
    project = ProjectFactory(slug="up")
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    response = admin_upload(client, project, kind, SimpleUploadedFile(name, content))
    assert response.status_code == 200  # the form again, with the error
    assert expected in unescape(response.content.decode())
    assert not ImportBatch.objects.exists() and stored_files(private_files) == []


def test_a_labels_file_must_be_a_json_object(client, private_files):
    project = ProjectFactory(slug="up")
    client.force_login(member(project, Role.LEAD))
    response = page_upload(client, project, "cognibench", SimpleUploadedFile("dialogues.json", b"[]"),
                           SimpleUploadedFile("labels.json", b"[1, 2]"))
    assert response.status_code == 400
    assert "labels.json does not start as a JSON object of labels by record id" in response.content.decode()
    assert not ImportBatch.objects.exists()


def test_the_size_cap_names_the_limit_on_every_route(client, settings, private_files):
    settings.IMPORT_MAX_UPLOAD_BYTES = 1000
    project = ProjectFactory(slug="up")
    lead = member(project, Role.LEAD)
    big = GOOD_JSONL * 20  # 2.7 KB
    expected = f"big.jsonl is 0.0 MB; an import file may be at most 0.001 MB (IMPORT_MAX_UPLOAD_BYTES)."
    client.force_login(lead)
    response = page_upload(client, project, "jsonl", SimpleUploadedFile("big.jsonl", big))
    assert response.status_code == 400 and expected in response.content.decode()
    assert api_upload(project, lead, "jsonl", SimpleUploadedFile("big.jsonl", big)).json()["errors"]["upload"] == [expected]
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    assert expected in admin_upload(client, project, "jsonl", SimpleUploadedFile("big.jsonl", big)).content.decode()
    assert not ImportBatch.objects.exists() and stored_files(private_files) == []


def test_a_lead_imports_from_the_project_page_without_being_staff(client, private_files, django_capture_on_commit_callbacks):
    project = ProjectFactory(slug="up")
    lead = member(project, Role.LEAD)
    assert not lead.is_staff
    client.force_login(lead)
    page = client.get(reverse("project_detail", args=["up"])).content.decode()
    assert f'action="{reverse("import_upload", args=["up"])}"' in page and 'enctype="multipart/form-data"' in page
    assert 'name="upload"' in page and 'name="second_upload"' in page and 'name="kind"' in page

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = page_upload(client, project, "cognibench",
                               SimpleUploadedFile("dialogues.json", (CB / "dialogues.json").read_bytes()),
                               SimpleUploadedFile("labels.json", (CB / "labels.json").read_bytes()))
    batch = ImportBatch.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("import_status", args=["up", batch.pk])
    assert len(callbacks) == 1  # the job is queued after commit
    assert (batch.filename, batch.status, batch.created_by) == ("dialogues.json, labels.json", "pending", lead)
    status = client.get(response["Location"]).content.decode()
    assert "Waiting for a worker" in status and "hx-trigger" in status

    import_batch_execute(batch.pk)  # what the worker runs
    status = client.get(response["Location"], HTTP_HX_REQUEST="true").content.decode()
    assert "48 dialogues, 50 turns, 431 sentences, 253 labels" in status and "hx-trigger" not in status
    assert Turn.objects.filter(dialogue__project=project).count() == 50


def test_a_failed_page_import_shows_its_error(client, private_files):
    project = ProjectFactory(slug="up")
    client.force_login(member(project, Role.LEAD))
    response = page_upload(client, project, "jsonl", SimpleUploadedFile("bad.jsonl", b'{"dialogue": {"id": "a"}, "turn": {"index": 0}}\n'))
    batch = import_batch_execute(ImportBatch.objects.get().pk)
    assert batch.status == "failed"
    page = client.get(response["Location"]).content.decode()
    assert "bad.jsonl: record line 1: field &#x27;turn.response&#x27;: is missing" in page and "Nothing was imported" in page


def test_only_leads_see_and_use_the_upload_form(client, private_files):
    project = ProjectFactory(slug="up")
    for role in (Role.ANNOTATOR, Role.ADJUDICATOR):
        client.force_login(member(project, role))
        assert 'name="upload"' not in client.get(reverse("project_detail", args=["up"])).content.decode()
        assert client.get(reverse("import_upload", args=["up"])).status_code == 404
        assert page_upload(client, project, "jsonl", SimpleUploadedFile("a.jsonl", GOOD_JSONL)).status_code == 404
    other_lead = member(ProjectFactory(slug="other"), Role.LEAD)
    client.force_login(other_lead)
    assert page_upload(client, project, "jsonl", SimpleUploadedFile("a.jsonl", GOOD_JSONL)).status_code == 404
    assert not ImportBatch.objects.exists() and stored_files(private_files) == []


def uploaded_batch(project):
    return import_batch_start(project, "cognibench", SimpleUploadedFile("dialogues.json", b'[{"x": "<script>"}]'),
                              SimpleUploadedFile("labels.json", b"{}"), actor=member(project, Role.LEAD))


def test_the_uploaded_files_download_as_attachments_to_the_projects_leads_only(client, private_files):
    project = ProjectFactory(slug="up")
    batch = uploaded_batch(project)
    url = reverse("import_file_download", args=["up", batch.pk, 1])
    client.force_login(member(project, Role.LEAD))
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="dialogues.json"'
    assert response["X-Content-Type-Options"] == "nosniff" and response["Cache-Control"] == "no-store"
    assert response["Content-Type"] == "application/octet-stream"
    assert b"".join(response.streaming_content) == b'[{"x": "<script>"}]'
    second = client.get(reverse("import_file_download", args=["up", batch.pk, 2]))
    assert second["Content-Disposition"] == 'attachment; filename="labels.json"'
    assert client.get(reverse("import_file_download", args=["up", batch.pk, 3])).status_code == 404

    listing = client.get(reverse("import_list", args=["up"])).content.decode()
    assert f'href="{url}" download>dialogues.json</a>' in listing
    for user in (member(project, Role.ANNOTATOR), member(project, Role.ADJUDICATOR),
                 member(ProjectFactory(slug="other"), Role.LEAD)):
        client.force_login(user)
        assert client.get(url).status_code == 404
    client.logout()
    assert client.get(url).status_code in (302, 404)
    assert client.get(reverse("import_file_download", args=["other", batch.pk, 1])).status_code in (302, 404)


def test_the_admin_shows_an_imports_files_by_name_with_the_role_checked_link(client, private_files):
    project = ProjectFactory(slug="up")
    batch = uploaded_batch(project)
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    response = client.get(reverse("admin:annotator_importbatch_change", args=[batch.pk]))
    assert response.status_code == 200
    page = response.content.decode()
    download = reverse("import_file_download", args=["up", batch.pk, 1])
    assert f'href="{download}" download>dialogues.json</a>' in page
    stored = ImportBatch.objects.get(pk=batch.pk).upload.name
    assert stored.split("/")[-1] not in page  # the unguessable stored name is never shown
    assert client.get(reverse("admin:annotator_importbatch_changelist")).status_code == 200


def test_a_batch_that_cannot_be_saved_leaves_no_file_behind(private_files, monkeypatch):
    project = ProjectFactory(slug="up")
    lead = member(project, Role.LEAD)

    def broken_enqueue(batch):
        raise RuntimeError("broker down")

    monkeypatch.setattr("annotator.corpus.imports.services.import_batch_enqueue", broken_enqueue)
    with pytest.raises(RuntimeError):
        import_batch_start(project, "jsonl", SimpleUploadedFile("a.jsonl", GOOD_JSONL), actor=lead)
    assert not ImportBatch.objects.exists() and stored_files(private_files) == []


def test_the_upload_stored_name_is_unguessable_and_not_in_errors(private_files):
    project = ProjectFactory(slug="up")
    batch = import_batch_start(project, "jsonl", SimpleUploadedFile("in.jsonl", b'{"dialogue": {"id": "a"}}\n'),
                               actor=member(project, Role.LEAD))
    assert re.fullmatch(r"imports/[A-Za-z0-9_-]{24}-in\.jsonl", batch.upload.name)
    batch = import_batch_execute(batch.pk)
    assert batch.error == "in.jsonl: record line 1: field 'turn': is missing"


def test_the_admin_page_of_an_export_links_to_its_download_instead_of_failing(client, private_files):
    """The export's FileField display called the private storage's url(), which raises: the page answered 500."""
    from django.core.files.base import ContentFile

    from annotator.models import ExportJob

    project = ProjectFactory(slug="up")
    job = ExportJob.objects.create(project=project, format="jsonl", status=ExportJob.Status.DONE)
    job.file.save("gold.jsonl", ContentFile(b"{}\n"))
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    response = client.get(reverse("admin:annotator_exportjob_change", args=[job.pk]))
    assert response.status_code == 200
    assert f'href="{reverse("export_job_download", args=["up", job.pk])}" download>Download</a>' in response.content.decode()


def test_a_lead_holding_an_unsubmitted_slot_cannot_download_an_upload(client, private_files):
    """An uploaded labels.json is a source's gold: refused, like an export, to a lead blind on a turn."""
    from annotator.models import Assignment
    from tests.factories import AssignmentFactory, DialogueFactory, TurnFactory

    project = ProjectFactory(slug="up")
    batch = uploaded_batch(project)
    lead = member(project, Role.LEAD)
    AssignmentFactory(turn=TurnFactory(dialogue=DialogueFactory(project=project)), annotator=lead,
                      status=Assignment.Status.IN_PROGRESS)
    client.force_login(lead)
    for number in (1, 2):
        response = client.get(reverse("import_file_download", args=["up", batch.pk, number]))
        assert response.status_code == 302 and not getattr(response, "streaming", False)
