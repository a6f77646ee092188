"""Uploading an import in the admin: stored, run by a real Celery worker, progress then summary or error."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotator import models
from tests.conftest import SHARED_DATA, wait_until
from tests.factories import ProjectFactory, UserFactory

CB = SHARED_DATA / "cognibench-sample"
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker]


@pytest.fixture
def worker(start_celery_worker, private_files):
    start_celery_worker(extra_env={"MEDIA_ROOT": str(private_files)})


def upload(client, project, kind, *files):
    data = {"project": project.pk, "kind": kind, "upload": files[0]}
    if len(files) > 1:
        data["second_upload"] = files[1]
    response = client.post(reverse("admin:annotator_importbatch_add"), data)
    assert response.status_code == 302, response.content.decode()[-3000:]
    batch_id = int(re.search(r"/(\d+)/change/", response["Location"]).group(1))
    return response, models.ImportBatch.objects.get(pk=batch_id)


def test_admin_upload_runs_as_a_job_and_shows_the_summary(client, worker):
    project = ProjectFactory(slug="cb")
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    form = client.get(reverse("admin:annotator_importbatch_add") + f"?project={project.pk}").content.decode()
    assert 'name="upload"' in form and 'name="second_upload"' in form
    response, batch = upload(
        client, project, "cognibench",
        SimpleUploadedFile("dialogues.json", (CB / "dialogues.json").read_bytes()),
        SimpleUploadedFile("labels.json", (CB / "labels.json").read_bytes()),
    )
    assert batch.filename == "dialogues.json, labels.json" and batch.created_by is not None
    change = client.get(response["Location"]).content.decode()
    status_url = reverse("import_status", args=["cb", batch.pk])
    assert status_url in change and "htmx.min.js" in change
    wait_until(lambda: models.ImportBatch.objects.get(pk=batch.pk).status in ("done", "failed"), message="import job")
    batch.refresh_from_db()
    assert batch.status == "done", batch.error
    assert batch.summary["turns"] == 50 and batch.summary["labels"] == 253
    assert models.Dialogue.objects.filter(project=project, batch=batch).count() == 48
    page = client.get(status_url, HTTP_HX_REQUEST="true").content.decode()
    assert "48 dialogues, 50 turns, 431 sentences, 253 labels" in page and "hx-trigger" not in page
    assert 'aria-valuenow="100"' in page


def test_a_malformed_upload_fails_with_the_error_and_imports_nothing(client, worker):
    project = ProjectFactory(slug="cb")
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    _, batch = upload(client, project, "jsonl",
                      SimpleUploadedFile("broken.jsonl", b'{"dialogue": {"id": "a"}, "turn": {"index": 0}}\n'))
    wait_until(lambda: models.ImportBatch.objects.get(pk=batch.pk).status in ("done", "failed"), message="import job")
    batch.refresh_from_db()
    assert batch.status == "failed"
    assert batch.error == "broken.jsonl: record line 1: field 'turn.response': is missing"
    assert models.Turn.objects.filter(dialogue__project=project).count() == 0
    page = client.get(reverse("import_status", args=["cb", batch.pk])).content.decode()
    assert "field &#x27;turn.response&#x27;: is missing" in page and "Nothing was imported" in page


def test_a_lead_who_is_not_staff_imports_from_the_project_page(client, worker):
    """The page's form starts the same job as the admin; the status page polls, then shows the summary."""
    from annotator.domain.vocabulary import Role
    from tests.factories import member

    project = ProjectFactory(slug="cb")
    client.force_login(member(project, Role.LEAD))
    response = client.post(reverse("import_upload", args=["cb"]), {
        "kind": "cognibench",
        "upload": SimpleUploadedFile("dialogues.json", (CB / "dialogues.json").read_bytes()),
        "second_upload": SimpleUploadedFile("labels.json", (CB / "labels.json").read_bytes()),
    })
    batch = models.ImportBatch.objects.get(project=project)
    assert response.status_code == 302 and response["Location"] == reverse("import_status", args=["cb", batch.pk])
    wait_until(lambda: models.ImportBatch.objects.get(pk=batch.pk).status in ("done", "failed"), message="import job")
    page = client.get(response["Location"], HTTP_HX_REQUEST="true").content.decode()
    assert "48 dialogues, 50 turns, 431 sentences, 253 labels" in page and "hx-trigger" not in page


def test_second_file_only_for_cognibench(client, private_files):
    project = ProjectFactory(slug="x")
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    response = client.post(reverse("admin:annotator_importbatch_add"), {
        "project": project.pk, "kind": "jsonl", "upload": SimpleUploadedFile("a.jsonl", b"\n"),
        "second_upload": SimpleUploadedFile("b.json", b"{}"),
    })
    assert response.status_code == 200
    assert "Only a CogniBench import takes a second file" in response.content.decode()
    assert models.ImportBatch.objects.count() == 0


def test_background_export_job_with_progress_and_download(client, worker):
    from annotator.domain.vocabulary import Role
    from tests.factories import member

    project = ProjectFactory(slug="ex")
    from django.core.management import call_command

    call_command("import_cognibench", "--project", "ex", str(CB / "dialogues.json"), str(CB / "labels.json"))
    lead = member(project, Role.LEAD)
    client.force_login(lead)
    response = client.post(reverse("export_job_start", args=["ex", "cognibench"]))
    assert response.status_code == 302
    job = models.ExportJob.objects.get()
    assert response["Location"] == reverse("export_job_status", args=["ex", job.pk])
    wait_until(lambda: models.ExportJob.objects.get(pk=job.pk).status in ("done", "failed"), message="export job")
    job.refresh_from_db()
    assert job.status == "done" and job.progress == job.total == 50
    page = client.get(response["Location"], HTTP_HX_REQUEST="true").content.decode()
    assert "Download CogniBench labels.json" in page and "hx-trigger" not in page
    download = client.get(reverse("export_job_download", args=["ex", job.pk]))
    assert download["Content-Disposition"] == 'attachment; filename="ex-labels.json"'
    import json

    labels = json.loads(b"".join(download.streaming_content))
    assert len(labels) == 30
    client.force_login(member(project, Role.ANNOTATOR))
    assert client.get(reverse("export_job_download", args=["ex", job.pk])).status_code == 404
    assert client.post(reverse("export_job_start", args=["ex", "jsonl"])).status_code == 404


def test_a_staff_lead_can_open_the_upload_form_and_the_project_actions(client):
    """A lead who is also staff, with the admin permissions for imports, uploads in the admin; the demo's lead
    is not staff (a project role needs no staff flag) and the admin sends them to its login."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission
    from django.core.management import call_command

    from annotator.domain.vocabulary import Role
    from tests.factories import member

    call_command("load_demo", stdout=open("/dev/null", "w"))
    staff_lead = member(models.Project.objects.get(slug="demo"), Role.LEAD, username="staff-lead", is_staff=True)
    staff_lead.user_permissions.add(*Permission.objects.filter(
        codename__in=["add_importbatch", "view_importbatch", "view_project", "change_project"]))
    client.force_login(staff_lead)
    assert client.get(reverse("admin:annotator_importbatch_add")).status_code == 200
    changelist = client.get(reverse("admin:annotator_project_changelist")).content.decode()
    assert "Export gold JSONL" in changelist
    for username in ("lead", "annotator1"):
        client.force_login(get_user_model().objects.get(username=username))
        assert client.get(reverse("admin:annotator_importbatch_add")).status_code == 302  # not staff: to the login
