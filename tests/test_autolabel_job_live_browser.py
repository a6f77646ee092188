"""In a real browser: a lead opens a running job's page and the predictions come in without a reload."""

import pytest
from playwright.sync_api import expect

from annotator.domain.vocabulary import Role
from autolabel.jobs import services
from autolabel.models import LLMProfile
from tests.autolabel_fixtures import baseline_llm, baseline_server  # noqa: F401
from tests.factories import ProjectFactory, member
from tests.factories_autolabel import DANUBE_TURN, gold_turn

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser, pytest.mark.worker, pytest.mark.slow]


def test_predictions_appear_on_the_job_page_as_the_worker_stores_them(page_for, start_celery_worker, baseline_llm):
    # Each turn takes a second or more (two stages, 0.5 s each); the worker stores every second.
    baseline_llm.configure(delay=0.5)
    profile = LLMProfile.objects.create(name="Offline baseline", base_url=baseline_llm.base_url, api_key_env="",
                                        concurrency=1)
    project = ProjectFactory(name="Rivers")
    dialogue = gold_turn(project).dialogue
    for _ in range(5):
        gold_turn(project, dialogue=dialogue, sentences=DANUBE_TURN)
    lead = member(project, Role.LEAD)
    job = services.job_create(project=project, profile=profile, samples=5, threshold=3, enqueue=False)

    page = page_for(lead)
    page.goto(f"/p/{project.slug}/autolabel/jobs/{job.pk}/")
    expect(page.get_by_test_id("no-prediction-yet")).to_be_visible()
    page.evaluate("window.__notReloaded = true")

    start_celery_worker(concurrency=1)
    services.job_enqueue(job.pk)
    # The first labelled turn shows up with its labels and votes, while the job still runs.
    turns = page.get_by_test_id("live-turn")
    expect(turns.first).to_contain_text("The river was named after a Roman goddess", timeout=60000)
    expect(turns.first).to_contain_text("hallucinated")
    # Then every turn, and the full table once the job is done; the page was never reloaded.
    page.get_by_text("Done", exact=True).wait_for(timeout=60000)
    expect(page.locator("#job-predictions table tbody tr")).to_have_count(6 * len(DANUBE_TURN))
    assert page.evaluate("window.__notReloaded") is True
