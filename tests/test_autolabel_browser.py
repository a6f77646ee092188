"""In a real browser: a lead starts a job, watches the progress bar fill without reloading, opens the evaluation."""

import re

import pytest
from playwright.sync_api import expect

from annotator.domain.vocabulary import Role
from autolabel.models import AutoLabelJob, LLMProfile
from tests.autolabel_fixtures import baseline_llm, baseline_server  # noqa: F401
from tests.factories import ProjectFactory, member
from tests.factories_autolabel import DANUBE_TURN, gold_turn

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser, pytest.mark.worker, pytest.mark.slow]


def test_lead_starts_a_job_and_watches_it_finish(page_for, start_celery_worker, baseline_llm):
    baseline_llm.configure(delay=0.3)
    LLMProfile.objects.create(name="Offline baseline", base_url=baseline_llm.base_url, api_key_env="", concurrency=1)
    project = ProjectFactory(name="Rivers")
    dialogue = gold_turn(project).dialogue
    for _ in range(5):
        gold_turn(project, dialogue=dialogue, sentences=DANUBE_TURN)
    lead = member(project, Role.LEAD)
    start_celery_worker(concurrency=1)

    page = page_for(lead)
    page.goto(f"/p/{project.slug}/")
    page.get_by_role("link", name="Auto-label (LLM pre-labels)").click()
    page.get_by_label("Endpoint profile").select_option(label="Offline baseline")
    page.get_by_label("Samples", exact=True).fill("5")
    page.get_by_label("Threshold", exact=True).fill("3")
    page.get_by_role("button", name="Start auto-label job").click()

    page.wait_for_url("**/autolabel/jobs/*/")
    job = AutoLabelJob.objects.get()
    # The page polls: the counter moves and the status reaches Done without a reload.
    # (A locator, not wait_for_function: its string predicate is eval'd in the page, which the CSP forbids.)
    expect(page.locator(".job-done")).to_have_text(re.compile(r"^\s*[1-9][0-9]*\s*$"), timeout=60000)
    page.get_by_text("Done", exact=True).wait_for(timeout=60000)
    assert page.locator(".job-done").inner_text() == "6"
    assert page.get_by_role("progressbar", name="Turns labelled").get_attribute("aria-valuenow") == "6"
    job.refresh_from_db()
    assert job.status == "done"
    page.get_by_role("link", name="Evaluation against gold").click()
    page.get_by_role("heading", name="Hallucination detection by threshold").wait_for()
    assert page.locator("table.evaluation-table tbody tr").count() == 5
