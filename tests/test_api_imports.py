"""Import over the API with a real Celery worker: a job with a status, and the command line's error message."""

import json

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotator.models import ImportBatch, Turn
from annotator.domain.vocabulary import Role
from tests.conftest import wait_until
from tests.factories import ProjectFactory, member

GOOD = [
    {"dialogue": {"id": "a", "reference": "Paris is the capital of France."},
     "turn": {"index": 0, "response": "Paris is in France. It is lovely."}},
]
BAD = GOOD + [
    {"dialogue": {"id": "b"}, "turn": {"index": 0, "response": "Hi."},
     "sentences": [{"index": 0, "start": 0, "end": 3, "text": "Hi.", "gold": {"label": "bogus"}}]},
]


def jsonl(records, name):
    return SimpleUploadedFile(name, ("\n".join(json.dumps(r) for r in records) + "\n").encode(),
                              content_type="application/x-ndjson")


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_upload_runs_as_a_job_and_fails_with_the_command_line_message(start_celery_worker, private_files):
    cache.clear()
    project = ProjectFactory(slug="imp")
    lead = member(project, Role.LEAD)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=lead).key}")
    start_celery_worker(concurrency=1, extra_env={"MEDIA_ROOT": str(private_files)})
    endpoint = reverse("api:import-list", kwargs={"slug": project.slug})

    bad = client.post(endpoint, {"kind": "jsonl", "upload": jsonl(BAD, "in.jsonl")}, format="multipart")
    assert bad.status_code == 202 and bad.json()["status"] == "pending"
    status_url = reverse("api:import-detail", kwargs={"slug": project.slug, "pk": bad.json()["id"]})
    failed = wait_until(lambda: (r := client.get(status_url).json())["status"] == "failed" and r,
                        message="the bad import to fail")
    # The same words as `manage.py import_jsonl` (tests/test_import_commands.py).
    assert "in.jsonl: record line 2: field 'sentences[0].gold': unknown label 'bogus'" in failed["error"]
    assert Turn.objects.filter(dialogue__project=project).count() == 0

    good = client.post(endpoint, {"kind": "jsonl", "upload": jsonl(GOOD, "good.jsonl")}, format="multipart")
    status_url = reverse("api:import-detail", kwargs={"slug": project.slug, "pk": good.json()["id"]})
    done = wait_until(lambda: (r := client.get(status_url).json())["status"] == "done" and r,
                      message="the good import to finish")
    assert done["summary"]["turns"] == 1 and done["live_progress"]["percent"] == 100
    assert Turn.objects.filter(dialogue__project=project).count() == 1
    assert ImportBatch.objects.filter(project=project).count() == 2


@pytest.mark.django_db
def test_a_second_file_is_for_cognibench_only():
    cache.clear()
    project = ProjectFactory(slug="imp2")
    client = APIClient()
    client.force_authenticate(member(project, Role.LEAD))
    response = client.post(reverse("api:import-list", kwargs={"slug": project.slug}),
                           {"kind": "jsonl", "upload": jsonl(GOOD, "a.jsonl"),
                            "second_upload": jsonl(GOOD, "b.jsonl")}, format="multipart")
    assert response.status_code == 400
    assert response.json()["errors"] == {"second_upload": ["Only a CogniBench import takes a second file (labels.json)."]}
    assert not ImportBatch.objects.exists()
