"""A broker that cannot take a job's message: 503 with the reason, and the job recorded as failed (not "pending").

Every route that starts a job is tried — the project page's import upload, the admin's "add import batch", the
API's upload, the export page, the auto-label job page and its API route — against a real broker that refuses:
on the filesystem broker (``make run``, the SQLite test run) its message folder is a file, as an unwritable or
missing ``var/broker/`` would be; on Redis (CI) the broker URL points at a port where nothing listens.
Before the fix each answered 500 (the test client re-raised the broker's ``OSError``) and left the job "pending"
with a page saying it would start once a worker runs.
"""

import json
import socket
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotator.domain.vocabulary import Role
from annotator.models import ExportJob, ImportBatch
from autolabel.models import AutoLabelJob, LLMProfile
from tests.factories import ProjectFactory, UserFactory, member
from tests.factories_api import token_client
from tests.factories_autolabel import plain_turns

pytestmark = pytest.mark.django_db(transaction=True)

RECORD = {"dialogue": {"id": "a", "reference": "Paris is the capital of France."},
          "turn": {"index": 0, "response": "Paris is in France."}}
SAID = "cannot take the job right now, so it was not started"


def jsonl_upload(name="in.jsonl"):
    return SimpleUploadedFile(name, (json.dumps(RECORD) + "\n").encode(), content_type="application/x-ndjson")


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def broker_refuses(private_files, monkeypatch):
    """The broker of this test process cannot take a message until the test ends."""
    from config.celery import app

    if app.conf.broker_url.startswith("filesystem://"):
        folder = Path(app.conf.broker_transport_options["data_folder_out"])
        aside = folder.with_name(folder.name + ".aside")
        folder.rename(aside)
        folder.write_text("a file where the broker's folder should be\n")
        try:
            yield
        finally:
            folder.unlink()
            aside.rename(folder)
        return
    # Redis (or RabbitMQ) down: messages are written where nothing listens (Celery reads this variable before its
    # configuration); the app's connection pools are made anew for it, and again for the real broker after.
    monkeypatch.setenv("CELERY_BROKER_WRITE_URL", f"redis://127.0.0.1:{closed_port()}/0")
    app._pool, app.amqp._producer_pool = None, None
    yield
    monkeypatch.delenv("CELERY_BROKER_WRITE_URL")
    app._pool, app.amqp._producer_pool = None, None


def assert_refused_and_failed(response, job):
    assert response.status_code == 503, response.content[:500]
    assert SAID in response.content.decode()
    job.refresh_from_db()
    assert job.status == "failed" and SAID in job.error and job.finished_at is not None


def test_the_project_page_upload_answers_503_and_the_batch_says_why_it_failed(client, broker_refuses):
    project = ProjectFactory(slug="imp")
    client.force_login(member(project, Role.LEAD))
    response = client.post(reverse("import_upload", args=[project.slug]), {"kind": "jsonl", "upload": jsonl_upload()})
    batch = ImportBatch.objects.get(project=project)
    assert_refused_and_failed(response, batch)
    assert "The job could not be queued" in response.content.decode()
    # Its page says it failed and why, not that it waits for a worker.
    page = client.get(reverse("import_status", args=[project.slug, batch.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert SAID in page and "Failed" in page
    assert "Waiting for a worker" not in page and "hx-trigger" not in page  # nothing to wait for


def test_the_admin_add_import_batch_answers_503(client, broker_refuses):
    project = ProjectFactory(slug="imp")
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    response = client.post(reverse("admin:annotator_importbatch_add"),
                           {"project": project.pk, "kind": "jsonl", "upload": jsonl_upload()})
    assert_refused_and_failed(response, ImportBatch.objects.get(project=project))
    # The admin had said "Import #n … is queued" before the commit: not on the next page.
    assert "is queued" not in client.get(reverse("admin:annotator_importbatch_changelist")).content.decode()


def test_the_api_upload_answers_503_in_the_api_error_shape(broker_refuses):
    project = ProjectFactory(slug="imp")
    client = token_client(member(project, Role.LEAD))
    response = client.post(reverse("api:import-list", kwargs={"slug": project.slug}),
                           {"kind": "jsonl", "upload": jsonl_upload()}, format="multipart")
    assert_refused_and_failed(response, ImportBatch.objects.get(project=project))
    body = response.json()
    assert body["status"] == 503 and body["code"] == "broker_unavailable" and SAID in body["detail"]


def test_a_background_export_answers_503(client, broker_refuses):
    project = ProjectFactory(slug="ex")
    client.force_login(member(project, Role.LEAD))
    response = client.post(reverse("export_job_start", args=[project.slug, "jsonl"]))
    job = ExportJob.objects.get(project=project)
    assert_refused_and_failed(response, job)
    page = client.get(reverse("export_job_status", args=[project.slug, job.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert SAID in page and "Waiting for a worker" not in page and "hx-trigger" not in page


def test_an_auto_label_job_start_answers_503_on_the_page_and_the_api(client, broker_refuses):
    profile = LLMProfile.objects.create(name="nowhere", base_url="http://127.0.0.1:9/v1", default_model="m")
    project = ProjectFactory()
    plain_turns(project, 2)
    lead = member(project, Role.LEAD)
    client.force_login(lead)
    response = client.post(reverse("autolabel:job_list", args=[project.slug]),
                           {"profile": profile.pk, "samples": 5, "threshold": 3, "use_n": "on"})
    assert_refused_and_failed(response, AutoLabelJob.objects.get())

    response = token_client(lead).post(f"/api/v1/projects/{project.slug}/autolabel-jobs/",
                                       {"profile": "nowhere", "samples": 5, "threshold": 3}, format="json")
    assert_refused_and_failed(response, AutoLabelJob.objects.latest("pk"))
    assert response.json()["code"] == "broker_unavailable"
    assert not AutoLabelJob.objects.exclude(status="failed").exists()


def test_a_learned_judges_training_answers_503_and_the_next_training_is_not_blocked(client, broker_refuses):
    """Issue 46, item 12: the judge stayed "Queued" for good, and every later training was refused as "already
    being trained". Now it fails with the reason, and the next request is tried (refused by the broker again,
    not told that one trains)."""
    from autolabel.models import LearnedJudge
    from tests.factories_learned import trainable_project

    project = trainable_project(turns=2)
    lead = member(project, Role.LEAD)
    client.force_login(lead)
    response = client.post(reverse("autolabel:learned_judge_train", args=[project.slug]))
    assert_refused_and_failed(response, LearnedJudge.objects.get(project=project))
    page = client.get(reverse("autolabel:learned_judge", args=[project.slug])).content.decode()
    assert SAID in page and "every 2s" not in page

    response = token_client(lead).post(f"/api/v1/projects/{project.slug}/learned-judge/train/")
    assert_refused_and_failed(response, LearnedJudge.objects.filter(project=project).latest("pk"))
    assert response.json()["code"] == "broker_unavailable"
    assert LearnedJudge.objects.filter(project=project, status="failed").count() == 2
