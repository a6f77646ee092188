"""Jobs against the real baseline server over HTTP: predictions, calls per turn, faults, resume."""

import pytest

from autolabel.jobs import services
from autolabel.models import AutoLabelJob, JobTurn, Prediction, SampleReply
from tests.autolabel_fixtures import baseline_llm, baseline_server, profile  # noqa: F401
from tests.factories import ProjectFactory
from tests.factories_autolabel import gold_turn, plain_turns

pytestmark = pytest.mark.django_db


def run(job):
    status = services.job_run(job.pk)
    job.refresh_from_db()
    return status


def test_job_labels_every_sentence_with_votes_and_costs(profile, baseline_llm):
    project = ProjectFactory()
    turn = gold_turn(project)
    job = services.job_create(project=project, profile=profile, samples=5, threshold=3, enqueue=False)
    assert run(job) == AutoLabelJob.Status.DONE
    assert (job.done_turns, job.total_turns) == (1, 1)
    predictions = {p.sentence.index: p for p in Prediction.objects.filter(job=job).select_related("sentence")}
    assert sorted(predictions) == [0, 1, 2, 3, 4]
    assert predictions[0].label == "irrelevant"
    assert predictions[1].label == "faithful" and not predictions[1].hallucinated
    assert predictions[3].label == "invented" and predictions[3].hallucinated_votes >= 3
    assert all(len(p.sample_votes) == 5 for p in predictions.values())
    # With n: one request for stage 1 and one for stage 2 (the speculative sentence is cognitive).
    stats = baseline_llm.stats()
    assert stats["chat_requests"] == 2 and stats["choices"] == 10
    assert job.requests == 2
    assert SampleReply.objects.filter(job=job).count() == 10
    assert job.prompt_tokens > 0 and job.completion_tokens > 0 and job.cost > 0
    assert job.faults == 0 and job.abstentions == 0 and job.problems == {}
    assert job.parameters["prompt_version"] == job.prompt_version.version == 1
    assert turn.pk in JobTurn.objects.filter(job=job).values_list("turn_id", flat=True)


def test_without_n_a_turn_costs_samples_requests_per_stage_never_sentences_times_samples(profile, baseline_llm):
    profile.supports_n = False
    profile.save()
    project = ProjectFactory()
    turns = plain_turns(project, 3)
    job = services.job_create(project=project, profile=profile, samples=5, threshold=2, enqueue=False)
    assert not job.use_n
    run(job)
    stats = baseline_llm.stats()
    stage2_turns = SampleReply.objects.filter(job=job, stage=2).values("turn_id").distinct().count()
    assert stats["chat_requests"] == 5 * len(turns) + 5 * stage2_turns
    assert stats["chat_requests"] <= 2 * 5 * len(turns)  # 5 sentences x 5 samples would be 25 per stage
    assert Prediction.objects.filter(job=job).count() == 15


def test_requests_in_flight_never_exceed_the_profile_concurrency(profile, baseline_llm):
    profile.supports_n, profile.concurrency = False, 3
    profile.save()
    baseline_llm.configure(delay=0.2)
    project = ProjectFactory()
    plain_turns(project, 3)
    job = services.job_create(project=project, profile=profile, samples=5, threshold=3, enqueue=False)
    assert run(job) == AutoLabelJob.Status.DONE
    stats = baseline_llm.stats()
    assert stats["chat_requests"] >= 15
    assert 1 <= stats["max_in_flight"] <= 3


def test_faults_are_retried_and_malformed_replies_abstain_without_crashing(profile, baseline_llm):
    profile.supports_n = False
    profile.save()
    baseline_llm.configure(faults={"429": {"every": 5}, "500": {"every": 7}, "garbage": {"every": 13}, "malformed": {"every": 4},
                                   "truncated": {"every": 9}, "language": {"every": 11}}, retry_after=0.1)
    project = ProjectFactory()
    plain_turns(project, 4)
    job = services.job_create(project=project, profile=profile, samples=5, threshold=3, enqueue=False)
    assert run(job) == AutoLabelJob.Status.DONE
    stats = baseline_llm.stats()
    assert stats["faults"].get("429") and stats["faults"].get("500")
    assert stats["faults"].get("garbage")
    transient = stats["faults"]["429"] + stats["faults"]["500"] + stats["faults"]["garbage"]
    # Every transient fault was retried, except a sample's last attempt when it ran out of retries.
    assert job.retries + job.faults == transient and job.retries > job.faults
    assert SampleReply.objects.filter(job=job).exclude(error="").count() == job.faults
    assert job.problems.get("unknown_tag") and job.problems.get("extra_text") and job.problems.get("truncated")
    assert job.abstentions > 0
    assert Prediction.objects.filter(job=job).count() == 20
    assert SampleReply.objects.filter(job=job).exclude(problems={}).exists()


def test_timeouts_exhaust_retries_and_the_samples_abstain(profile, baseline_llm):
    profile.supports_n, profile.timeout_seconds, profile.max_retries = False, 0.3, 1
    profile.save()
    # 3 samples x (1 try + 1 retry) = the first 6 requests all stall past the client's timeout.
    baseline_llm.configure(faults={"timeout": {"first": 6}}, timeout_delay=1.0)
    project = ProjectFactory()
    plain_turns(project, 1, sentences=[("Sure!", "irrelevant")])
    job = services.job_create(project=project, profile=profile, samples=3, threshold=2, enqueue=False)
    # Every request failed: the job labelled nothing, and says so (issue 38, item 11).
    assert run(job) == AutoLabelJob.Status.FAILED
    assert f"every request failed (3 of 3): timed out: 127.0.0.1:{baseline_llm.port}" in job.error
    assert job.faults == 3 and job.retries == 3
    failed = SampleReply.objects.filter(job=job, stage=1)
    assert failed.count() == 3
    assert all("timed out" in row.error and row.votes == {} for row in failed)
    prediction = Prediction.objects.get(job=job)
    # Every sample abstained: no label is made up.
    assert (prediction.abstentions, prediction.label, prediction.hallucinated) == (3, "", False)


def test_wrong_key_or_model_fails_the_job_with_a_clear_error(profile, baseline_llm):
    profile.base_url = baseline_llm.base_url.replace("/v1", "/nowhere")
    profile.save()
    project = ProjectFactory()
    plain_turns(project, 2)
    job = services.job_create(project=project, profile=profile, samples=2, threshold=1, enqueue=False)
    assert run(job) == AutoLabelJob.Status.FAILED
    assert "404" in job.error


def test_a_resumed_job_reuses_done_turns_and_writes_no_duplicates(profile, baseline_llm):
    project = ProjectFactory()
    plain_turns(project, 4)
    job = services.job_create(project=project, profile=profile, samples=3, threshold=2, enqueue=False)
    run(job)
    requests = baseline_llm.stats()["chat_requests"]
    # Simulate a crash after the job was written: it is put back to running with an expired lease.
    AutoLabelJob.objects.filter(pk=job.pk).update(status="running", lease_owner="dead-worker", lease_until=None)
    JobTurn.objects.filter(job=job, turn=JobTurn.objects.filter(job=job).first().turn).update(done=False)
    assert services.jobs_orphaned_claim() == [job.pk]
    assert services.jobs_orphaned_claim() == []  # claimed once: no flood of copies in the queue
    run(job)
    assert job.status == "done" and job.done_turns == 4
    assert Prediction.objects.filter(job=job).count() == 20
    # The undone turn's samples were already stored: no new request was needed.
    assert baseline_llm.stats()["chat_requests"] == requests


def test_cancel_a_queued_job(profile):
    project = ProjectFactory()
    plain_turns(project, 1)
    job = services.job_create(project=project, profile=profile, enqueue=False)
    services.job_cancel(job)
    job.refresh_from_db()
    assert job.status == "cancelled" and services.job_run(job.pk) == ""


def test_job_validation(profile):
    project = ProjectFactory()
    with pytest.raises(services.JobError, match="no turns"):
        services.job_create(project=project, profile=profile, enqueue=False)
    plain_turns(project, 1)
    with pytest.raises(services.JobError, match="threshold"):
        services.job_create(project=project, profile=profile, samples=3, threshold=4, enqueue=False)
    other = plain_turns(ProjectFactory(), 1)[0]
    with pytest.raises(services.JobError, match="not in project"):
        services.job_create(project=project, profile=profile, turn_ids=[other.pk], enqueue=False)
