"""Imports and exports hold a lease: a worker killed mid-import leaves its batch to a live worker, or failed.

A real Celery worker is killed (SIGKILL) in the middle of an upload's import. Before the lease the batch stayed
"Running n %" for good, with a worker running beside it. Now, with the lease shortened through the environment,
the batch's page says its worker stopped, a live worker's watchdog takes it up again and imports it once, from
the start (the dead worker's transaction left nothing behind), or, once JOB_MAX_ATTEMPTS workers stopped under
it, marks it failed with the reason.
"""

import os
import signal
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from annotator.corpus.exports.services import export_job_execute, export_jobs_orphaned
from annotator.corpus.imports.services import import_batch_execute, import_progress_key
from annotator.domain.vocabulary import Role
from annotator.leases import job_take_up
from annotator.models import ExportJob, ImportBatch, Turn
from bench.synthetic import write_jsonl
from tests.conftest import wait_until
from tests.factories import ProjectFactory, member

TURNS = 4000
SHORT_LEASE = {"JOB_LEASE_SECONDS": "2"}


def batch_of(project):
    return ImportBatch.objects.filter(project=project).first()


def status_partial(client, project, batch):
    return client.get(reverse("import_status", args=[project.slug, batch.pk]), HTTP_HX_REQUEST="true").content.decode()


@pytest.fixture
def killed_mid_import(start_celery_worker, private_files, client, tmp_path):
    """An upload from the project page whose worker is killed once it has read 1,000 of its 4,000 turns."""
    project = ProjectFactory(slug="big")
    client.force_login(member(project, Role.LEAD))
    data = write_jsonl(tmp_path / "big.jsonl", turns=TURNS, sentences_per_turn=5, reference_words=60, labelled=False)
    env = {"MEDIA_ROOT": str(private_files), **SHORT_LEASE}
    first = start_celery_worker(concurrency=1, extra_env=env)
    response = client.post(reverse("import_upload", args=[project.slug]),
                           {"kind": "jsonl", "upload": SimpleUploadedFile("big.jsonl", data.read_bytes())})
    assert response.status_code == 302
    batch = batch_of(project)
    wait_until(lambda: (cache.get(import_progress_key(batch)) or (0, 0))[0] >= 1000, timeout=120,
               interval=0.05, message="the import to be under way")
    os.kill(first.pid, signal.SIGKILL)
    first.wait(10)
    batch.refresh_from_db()
    assert batch.status == "running" and batch.attempts == 1
    assert Turn.objects.filter(dialogue__project=project).count() == 0  # nothing half-imported
    # With no worker alive, once its lease lapsed the page says that its worker stopped instead of "Running n %".
    wait_until(lambda: "worker running it stopped" in status_partial(client, project, batch), timeout=30,
               message="the page to say the worker stopped")
    return project, batch, env


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_import_leaves_the_batch_to_a_live_worker(killed_mid_import, start_celery_worker, client):
    project, batch, env = killed_mid_import
    start_celery_worker(concurrency=1, extra_env=env)
    wait_until(lambda: batch_of(project).status in ("done", "failed"), timeout=120,
               message="a live worker to take the batch up and finish it")
    batch.refresh_from_db()
    assert batch.status == "done", batch.error
    assert batch.attempts == 2 and batch.lease_owner == ""
    assert batch.summary["turns"] == TURNS and batch.summary["duplicates"] == 0
    assert Turn.objects.filter(dialogue__project=project).count() == TURNS
    page = status_partial(client, project, batch)
    assert f"{TURNS} turns" in page and "hx-trigger" not in page


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_batch_whose_workers_keep_dying_is_failed_with_the_reason(killed_mid_import, start_celery_worker, client):
    project, batch, env = killed_mid_import
    start_celery_worker(concurrency=1, extra_env={**env, "JOB_MAX_ATTEMPTS": "1"})
    wait_until(lambda: batch_of(project).status == "failed", timeout=60, message="the batch to be failed")
    batch.refresh_from_db()
    assert "stopped 1 times before it finished" in batch.error and "nothing was imported" in batch.error
    assert Turn.objects.filter(dialogue__project=project).count() == 0
    page = status_partial(client, project, batch)
    assert "stopped 1 times before it finished" in page and "hx-trigger" not in page


@pytest.mark.django_db(transaction=True)
def test_two_workers_never_run_one_job_and_a_lapsed_export_is_taken_up_again(private_files):
    project = ProjectFactory(slug="ex")
    # Made as export_job_create makes it, without its message: no worker of a later test may receive it.
    job = ExportJob.objects.create(project=project, format="jsonl", created_by=member(project, Role.LEAD))
    assert job_take_up(ExportJob, job.pk, "worker-a", gave_up="") is not None
    assert job_take_up(ExportJob, job.pk, "worker-b", gave_up="") is None  # worker-a's lease is alive
    assert export_job_execute(job.pk, owner="worker-b") is None
    assert export_jobs_orphaned() == []  # not lapsed: nothing to send again

    # worker-a dies: its lease is not renewed and lapses.
    cache.clear()
    ExportJob.objects.filter(pk=job.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert export_jobs_orphaned() == [job.pk]
    assert export_jobs_orphaned() == []  # sent once, not by every watchdog
    job = export_job_execute(job.pk, owner="worker-b")
    assert job.status == "done" and job.attempts == 2 and job.lease_owner == "" and job.file
    # The message sent again arrives once more: the job is finished, nothing runs twice.
    assert export_job_execute(job.pk, owner="worker-c") is None


@pytest.mark.django_db(transaction=True)
def test_a_batch_held_by_a_live_worker_is_not_run_by_another(private_files):
    project = ProjectFactory(slug="imp")
    # Stored as import_batch_start stores an upload, without its message (no worker of a later test may get it).
    batch = ImportBatch(project=project, kind="jsonl", filename="a.jsonl", created_by=member(project, Role.LEAD))
    batch.upload = SimpleUploadedFile("a.jsonl", b'{"dialogue": {"id": "a"}, "turn": {"index": 0, "response": "Hi there."}}\n')
    batch.save()
    assert job_take_up(ImportBatch, batch.pk, "worker-a", gave_up="") is not None
    assert import_batch_execute(batch.pk, owner="worker-b") is None
    assert Turn.objects.filter(dialogue__project=project).count() == 0
    assert import_batch_execute(batch.pk, owner="worker-a").status == "done"
    assert Turn.objects.filter(dialogue__project=project).count() == 1
