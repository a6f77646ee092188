"""The learned judge's training is leased as imports and exports are, and one trains at a time (issue 46, item 12).

Before: simultaneous ``train`` requests made two or three judges despite "409 while one trains" (a read, then an
insert); a worker killed mid-training left the judge "Training" for good, and that blocked every later training.
Now the guard is the row's constraint (one judge queued or training per project), and a real Celery worker
killed mid-training leaves its judge to a live worker's watchdog, which trains it again from the start or, once
JOB_MAX_ATTEMPTS workers stopped under it, fails it with the reason; a later training is possible after each.
"""

import os
import signal
import threading
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotator.domain.vocabulary import Role
from annotator.leases import job_take_up
from autolabel.learned.training import gave_up, judge_train_create, judge_train_run, judges_orphaned
from autolabel.models import LearnedJudge
from tests.conftest import wait_until
from tests.factories import member
from tests.factories_api import token_client
from tests.factories_learned import trainable_project

SHORT_LEASE = {"JOB_LEASE_SECONDS": "2"}


def train_url(project):
    return f"/api/v1/projects/{project.slug}/learned-judge/train/"


def status_partial(client, project):
    return client.get(reverse("autolabel:learned_judge", args=[project.slug]), {"partial": "status"},
                      HTTP_HX_REQUEST="true").content.decode()


@pytest.mark.django_db(transaction=True)
def test_simultaneous_train_requests_make_one_judge_and_the_other_is_told_it_is_being_trained(private_files):
    """Two requests, each on its own connection, interleaved as they met: the second reads "no judge in
    training", then the first records its judge and commits, then the second records its own. Before, both
    answered 202 and the project had two judges in training."""
    project = trainable_project(turns=2)
    lead = member(project, Role.LEAD)
    first, second = token_client(lead), token_client(lead)
    answers = {}

    def first_request():
        try:
            answers["first"] = first.post(train_url(project))
        finally:
            connection.close()  # its thread's own connection

    def first_request_meanwhile(execute, sql, params, many, context):
        # Before the second's write: its INSERT, or the BEGIN of the transaction it writes in (on SQLite a
        # BEGIN IMMEDIATE takes the database's write lock, which the first request would wait for).
        writes = sql.startswith("BEGIN") or sql.startswith('INSERT INTO "autolabel_learnedjudge"')
        if writes and "first" not in answers:
            thread = threading.Thread(target=first_request)  # runs whole, between the second's read and write
            thread.start()
            thread.join()
        return execute(sql, params, many, context)

    with connection.execute_wrapper(first_request_meanwhile):
        answers["second"] = second.post(train_url(project))
    assert answers["first"].status_code == 202
    judge = LearnedJudge.objects.get(project=project)  # exactly one
    assert answers["first"].json()["id"] == judge.pk
    assert answers["second"].status_code == 409
    assert answers["second"].json()["detail"] == f"learned judge {judge.pk} is already being trained"
    # The page's button says so too, and makes none.
    browser = Client()
    browser.force_login(lead)
    followed = browser.post(reverse("autolabel:learned_judge_train", args=[project.slug]), follow=True)
    assert f"Learned judge {judge.pk} is already being trained." in followed.content.decode()
    assert LearnedJudge.objects.filter(project=project).count() == 1
    # Trained: the next training is accepted.
    assert judge_train_run(judge.pk, folds=2).status == "done"
    assert first.post(train_url(project)).status_code == 202
    assert LearnedJudge.objects.filter(project=project).count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_judge_held_by_a_live_worker_is_not_trained_by_another_and_a_lapsed_one_is_taken_up_again(private_files):
    project = trainable_project(turns=2)
    judge = judge_train_create(project, enqueue=False)
    assert job_take_up(LearnedJudge, judge.pk, "worker-a", gave_up=gave_up()) is not None
    held = judge_train_run(judge.pk, folds=2, owner="worker-b")
    assert held.status == "running" and held.lease_owner == "worker-a" and not held.model_file
    assert judges_orphaned() == []  # worker-a's lease is alive

    # worker-a dies: its lease is not renewed and lapses.
    cache.clear()
    LearnedJudge.objects.filter(pk=judge.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert judges_orphaned() == [judge.pk]
    assert judges_orphaned() == []  # sent once, not by every watchdog
    done = judge_train_run(judge.pk, folds=2, owner="worker-b")
    assert done.status == "done" and done.attempts == 2 and done.lease_owner == "" and done.model_file
    assert judge_train_run(judge.pk, folds=2, owner="worker-c").status == "done"  # the message again: nothing runs


@pytest.mark.django_db(transaction=True)
def test_a_judge_whose_message_no_worker_took_is_sent_again_instead_of_blocking_training(private_files, settings):
    """Its message lost (a broker's restart, a worker killed between receiving it and taking the judge up): before,
    the judge stayed "Queued" and every later training was refused as "already being trained"."""
    settings.JOB_LEASE_SECONDS = 2
    project = trainable_project(turns=2)
    judge = judge_train_create(project, enqueue=False)  # queued, its message gone
    assert judges_orphaned() == []  # just asked for: its message may be on its way
    LearnedJudge.objects.filter(pk=judge.pk).update(created_at=timezone.now() - timedelta(seconds=5))
    assert judges_orphaned() == [judge.pk]
    assert judges_orphaned() == []  # sent once, not by every watchdog
    assert judge_train_run(judge.pk, folds=2).status == "done"  # what the message sent again does
    assert judge_train_create(project, enqueue=False).status == "queued"  # and the next training is possible


@pytest.fixture
def killed_mid_training(start_celery_worker, private_files, client):
    """A judge asked for on the page, whose worker is killed once it is training."""
    project = trainable_project(turns=8)
    lead = member(project, Role.LEAD)
    client.force_login(lead)
    env = {"MEDIA_ROOT": str(private_files), **SHORT_LEASE}
    first = start_celery_worker(concurrency=1, extra_env=env)
    assert client.post(reverse("autolabel:learned_judge_train", args=[project.slug])).status_code == 302
    judge = LearnedJudge.objects.get(project=project)
    wait_until(lambda: LearnedJudge.objects.get(pk=judge.pk).status == "running", timeout=60, interval=0.05,
               message="the worker to start training")
    os.kill(first.pid, signal.SIGKILL)
    first.wait(10)
    judge.refresh_from_db()
    assert judge.status == "running" and judge.attempts == 1 and not judge.model_file
    # With no worker alive, once its lease lapsed the page says that its worker stopped instead of "Training".
    wait_until(lambda: "worker running it stopped" in status_partial(client, project), timeout=30,
               message="the page to say the worker stopped")
    return project, judge, env


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_training_leaves_the_judge_to_a_live_worker(killed_mid_training, start_celery_worker,
                                                                         client):
    project, judge, env = killed_mid_training
    start_celery_worker(concurrency=1, extra_env=env)
    wait_until(lambda: LearnedJudge.objects.get(pk=judge.pk).is_finished, timeout=180,
               message="a live worker to take the judge up and train it")
    judge.refresh_from_db()
    assert judge.status == "done", judge.error
    assert judge.attempts == 2 and judge.lease_owner == "" and judge.model_file
    assert judge.figures["cross_validated"]["sentences"] == 8 * 5
    page = status_partial(client, project)
    assert "worker running it stopped" not in page and "every 2s" not in page
    assert token_client(member(project, Role.LEAD)).post(train_url(project)).status_code == 202  # and again


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_judge_whose_workers_keep_dying_is_failed_with_the_reason(killed_mid_training, start_celery_worker,
                                                                     client):
    project, judge, env = killed_mid_training
    start_celery_worker(concurrency=1, extra_env={**env, "JOB_MAX_ATTEMPTS": "1"})
    wait_until(lambda: LearnedJudge.objects.get(pk=judge.pk).status == "failed", timeout=60,
               message="the judge to be failed")
    judge.refresh_from_db()
    assert "stopped 1 times before it finished" in judge.error and "no model was kept" in judge.error
    page = status_partial(client, project)
    assert "stopped 1 times before it finished" in page and "every 2s" not in page
    # Not blocked: the next training is queued, and the live worker trains it.
    again = token_client(member(project, Role.LEAD)).post(train_url(project))
    assert again.status_code == 202
    wait_until(lambda: LearnedJudge.objects.get(pk=again.json()["id"]).is_finished, timeout=180,
               message="the worker to train the next judge")
    assert LearnedJudge.objects.get(pk=again.json()["id"]).status == "done"


@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_one_judge_in_training_per_project_and_lapses_a_running_one_for_a_watchdog():
    """Judges left by the code before: two in training in one project (the race), one "Training" for good."""
    from django.db.migrations.executor import MigrationExecutor

    before, after = [("autolabel", "0004_learned_judge")], [("autolabel", "0005_learned_judge_lease")]
    project, other = trainable_project(turns=1), trainable_project(turns=1)
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    try:
        judge_model = executor.loader.project_state(before).apps.get_model("autolabel", "LearnedJudge")
        older = judge_model.objects.create(project_id=project.pk, status="running")
        newer = judge_model.objects.create(project_id=project.pk, status="queued")
        stuck = judge_model.objects.create(project_id=other.pk, status="running")
        finished = judge_model.objects.create(project_id=other.pk, status="done")
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(after)
    judges = {judge.pk: judge for judge in LearnedJudge.objects.all()}
    assert judges[older.pk].status == "failed" and "asked for at the same time" in judges[older.pk].error
    assert judges[newer.pk].status == "queued"
    assert judges[stuck.pk].status == "running" and judges[stuck.pk].attempts == 1
    assert judges[finished.pk].status == "done"
    cache.clear()
    assert judges_orphaned() == [stuck.pk]  # a worker's watchdog sends it again
