"""A real Celery worker runs the job; killed mid-job, another worker adopts it and finishes it."""

import os
import signal

import pytest

from autolabel.jobs import services
from autolabel.models import AutoLabelJob, LLMProfile, Prediction, SampleReply
from tests.autolabel_fixtures import baseline_llm, baseline_server  # noqa: F401
from tests.conftest import wait_until
from tests.factories import ProjectFactory
from tests.factories_autolabel import plain_turns

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker, pytest.mark.slow]

FAST_LEASE = {"AUTOLABEL_LEASE_SECONDS": "3"}


def job_state(job):
    job.refresh_from_db()
    return job


def test_worker_killed_mid_job_is_replaced_and_the_job_completes_without_duplicates(start_celery_worker, baseline_llm):
    baseline_llm.configure(delay=0.2)
    profile = LLMProfile.objects.create(name="slow baseline", base_url=baseline_llm.base_url, api_key_env="",
                                        supports_n=True, concurrency=2, timeout_seconds=10, max_retries=2)
    project = ProjectFactory()
    plain_turns(project, 24)
    first = start_celery_worker(concurrency=1, extra_env=FAST_LEASE)
    job = services.job_create(project=project, profile=profile, samples=5, threshold=3)  # enqueued on commit

    wait_until(lambda: job_state(job).done_turns >= 3, timeout=60, message="the first worker to make progress")
    os.kill(first.pid, signal.SIGKILL)
    first.wait(10)
    job = job_state(job)
    assert job.status == AutoLabelJob.Status.RUNNING and 3 <= job.done_turns < 24
    done_before_kill = job.done_turns

    start_celery_worker(concurrency=1, extra_env=FAST_LEASE)
    wait_until(lambda: job_state(job).status == AutoLabelJob.Status.DONE, timeout=120, message="the job to finish")
    job = job_state(job)
    assert job.done_turns == job.total_turns == 24 and done_before_kill < 24
    # Exactly one prediction per sentence, exactly one reply per turn x stage x sample.
    assert Prediction.objects.filter(job=job).count() == 24 * 5
    assert Prediction.objects.filter(job=job).values("sentence").distinct().count() == 24 * 5
    replies = SampleReply.objects.filter(job=job)
    assert replies.filter(stage=1).count() == 24 * 5
    assert replies.count() == replies.values("turn", "stage", "sample_index").distinct().count()
    assert job.lease_owner == "" and job.error == ""


def test_cancel_stops_a_running_job(start_celery_worker, baseline_llm):
    baseline_llm.configure(delay=0.3)
    profile = LLMProfile.objects.create(name="slow", base_url=baseline_llm.base_url, api_key_env="", concurrency=1)
    project = ProjectFactory()
    plain_turns(project, 30)
    start_celery_worker(concurrency=1)
    job = services.job_create(project=project, profile=profile, samples=3, threshold=2)
    wait_until(lambda: job_state(job).done_turns >= 1, timeout=60, message="the job to start")
    services.job_cancel(job)
    wait_until(lambda: job_state(job).status == AutoLabelJob.Status.CANCELLED, timeout=30, message="the job to stop")
    assert job_state(job).done_turns < 30
