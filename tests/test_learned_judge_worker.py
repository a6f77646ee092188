"""A real Celery worker trains the learned judge and runs its job; the job's predictions carry a confidence and
are read like an LLM's: the evaluation page (with the comparison), the smallest-margin draw."""

import pytest
from django.urls import reverse

from annotator.domain.vocabulary import DrawStrategy, Role
from autolabel.checks.drawing import draw_for_job
from autolabel.jobs.services import learned_job_create
from autolabel.learned.training import judge_train_create
from autolabel.learned.decision import SAMPLES
from autolabel.models import AutoLabelJob, LearnedJudge, Prediction
from tests.conftest import wait_until
from tests.factories import member
from tests.factories_autolabel import plain_turns
from tests.factories_learned import trainable_project

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.worker, pytest.mark.slow]


def fresh(row):
    row.refresh_from_db()
    return row


def test_a_worker_trains_the_judge_and_runs_its_job_whose_predictions_carry_a_confidence(start_celery_worker, client):
    project = trainable_project(turns=4)
    plain_turns(project, 3)  # turns without gold: the judge labels them too
    lead = member(project, Role.LEAD)
    start_celery_worker(concurrency=1)
    judge = judge_train_create(project, created_by=lead)  # the task is sent on commit
    wait_until(lambda: fresh(judge).is_finished, timeout=180, message="the worker to train the judge")
    assert judge.status == LearnedJudge.Status.DONE, judge.error
    assert judge.figures["cross_validated"]["sentences"] == 20

    job = learned_job_create(project=project, judge=judge, created_by=lead)
    wait_until(lambda: fresh(job).is_finished, timeout=120, message="the worker to run the learned judge's job")
    assert job.status == AutoLabelJob.Status.DONE, job.error
    assert job.done_turns == job.total_turns == 7 and job.requests == 0 and job.cost == 0
    predictions = list(Prediction.objects.filter(job=job))
    assert len(predictions) == 7 * 5
    for prediction in predictions:
        assert 0 < prediction.confidence <= 1 and len(prediction.sample_votes) == SAMPLES
        assert prediction.label and sum(prediction.label_votes.values()) == SAMPLES
        # The votes share the probabilities, moved only as far as the rule's label needs (learned.decision).
        assert prediction.label_votes[prediction.label] >= 1

    client.force_login(lead)
    assert client.get(reverse("autolabel:job_detail", args=[project.slug, job.pk])).status_code == 200
    assert "learned judge #" in client.get(reverse("autolabel:job_list", args=[project.slug])).content.decode()
    page = client.get(reverse("autolabel:job_evaluation", args=[project.slug, job.pk])).content.decode()
    assert 'data-testid="learned-job-warning"' in page and "read too high" in page
    draw = draw_for_job(job, strategy=DrawStrategy.UNCERTAINTY, size=2, actor=lead)
    assert draw.drawn_turns.count() == 2
