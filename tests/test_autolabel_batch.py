"""Batch mode end to end against the baseline server's files and batches endpoints."""

import pytest

from autolabel.jobs import batch
from autolabel.jobs import services
from autolabel.models import AutoLabelJob, Prediction, SampleReply
from tests.autolabel_fixtures import baseline_llm, baseline_server, profile  # noqa: F401
from tests.factories import ProjectFactory
from tests.factories_autolabel import plain_turns

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_polling(monkeypatch):
    monkeypatch.setattr(batch, "BATCH_POLL_SECONDS", 0.05)


def test_batch_job_uploads_polls_joins_by_custom_id_and_votes(profile, baseline_llm):
    project = ProjectFactory()
    plain_turns(project, 3)
    job = services.job_create(project=project, profile=profile, samples=5, threshold=3, batch_mode=True, enqueue=False)
    assert services.job_run(job.pk) == AutoLabelJob.Status.DONE
    job.refresh_from_db()
    stats = baseline_llm.stats()
    assert stats["chat_requests"] == 0  # nothing went through the real-time endpoint
    assert stats["batches"] == 2  # stage 1, then stage 2 for the cognitive sentences
    assert stats["batch_lines"] == 6  # one line per turn and stage (n=5)
    assert SampleReply.objects.filter(job=job, stage=1).count() == 15
    assert Prediction.objects.filter(job=job).count() == 15
    assert job.done_turns == 3 and job.batch_state["status"] == "completed"
    # Same judge, same seeds: batch mode gives the same predictions as real time.
    live = services.job_create(project=project, profile=profile, samples=5, threshold=3, enqueue=False)
    services.job_run(live.pk)
    by_batch = dict(Prediction.objects.filter(job=job).values_list("sentence_id", "label"))
    by_live = dict(Prediction.objects.filter(job=live).values_list("sentence_id", "label"))
    assert by_batch == by_live
    # Batch requests cost half.
    live.refresh_from_db()
    assert float(job.cost) * 2 == pytest.approx(float(live.cost), abs=1e-5)


def test_failed_batch_lines_are_sent_again_then_reported(profile, baseline_llm):
    profile.supports_n = False
    profile.save()
    project = ProjectFactory()
    plain_turns(project, 2)
    # The first 3 lines fail (500): they come back in the error file and go out in a second batch.
    baseline_llm.configure(faults={"500": {"first": 3}})
    job = services.job_create(project=project, profile=profile, samples=2, threshold=1, batch_mode=True, enqueue=False)
    assert services.job_run(job.pk) == "done"
    job.refresh_from_db()
    assert job.retries == 3 and job.faults == 0
    assert SampleReply.objects.filter(job=job, stage=1).exclude(votes={}).count() == 4
    # A batch whose lines keep failing: after the last round they are reported as faults and abstain, and the
    # job, which labelled nothing, fails with the reason (issue 38, item 11).
    baseline_llm.configure(faults={"500": {"every": 1}})
    job = services.job_create(project=project, profile=profile, samples=2, threshold=1, batch_mode=True, enqueue=False)
    assert services.job_run(job.pk) == "failed"
    job.refresh_from_db()
    assert f"failed in 3 batch rounds at 127.0.0.1:{baseline_llm.port}" in job.error
    assert job.faults == 4 and job.abstentions == 2 * 5 * 2
    assert set(Prediction.objects.filter(job=job).values_list("label", flat=True)) == {""}


def test_a_batch_job_can_be_cancelled_while_the_batch_runs(profile, baseline_llm, monkeypatch):
    project = ProjectFactory()
    plain_turns(project, 2)
    job = services.job_create(project=project, profile=profile, samples=2, threshold=1, batch_mode=True, enqueue=False)
    original = batch._save_batch_state

    def cancel_once_submitted(job_, owner, **changes):
        state = original(job_, owner, **changes)
        if changes.get("batch_id"):
            AutoLabelJob.objects.filter(pk=job_.pk).update(cancel_requested=True)
        return state

    monkeypatch.setattr(batch, "_save_batch_state", cancel_once_submitted)
    assert services.job_run(job.pk) == "cancelled"
