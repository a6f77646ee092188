"""Issue 40's done-when, walked in Chromium with a real worker and the offline baseline server over HTTP: a lead
who is not staff adds an endpoint from the project page, tests it, reads the estimate, runs a job and reads its
cost, trains the learned judge on the project's gold, starts a learned-judge job from the same job form, compares
it with the LLM job on the evaluation page and draws the turns it is least sure of."""

import re

import pytest
from playwright.sync_api import expect

from annotator.domain.vocabulary import DrawStrategy, Role
from annotator.models import TurnDraw
from autolabel.models import AutoLabelJob, LearnedJudge, LLMProfile
from tests.autolabel_fixtures import baseline_llm, baseline_server  # noqa: F401
from tests.test_autolabel_endpoints_browser import add_endpoint_from_the_project_page
from tests.factories import member
from tests.factories_autolabel import plain_turns
from tests.factories_learned import trainable_project

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser, pytest.mark.worker, pytest.mark.slow]

NUMBER = re.compile(r"^\s*[1-9][0-9]*\s*$")
WORKER = 60_000  # ms: what a busy CI machine may take for a worker's task


def test_a_lead_runs_the_prelabeler_alone_and_routes_humans_to_the_learned_judges_doubts(
        page_for, start_celery_worker, baseline_llm):
    project = trainable_project(turns=5)  # 25 gold sentences
    plain_turns(project, 3)  # and turns nobody labelled yet
    lead = member(project, Role.LEAD)
    assert not lead.is_staff and not lead.is_superuser
    start_celery_worker(concurrency=2)
    page = page_for(lead)

    # The endpoints page, from the project page.
    add_endpoint_from_the_project_page(page, project.slug, "Team baseline", baseline_llm.base_url, "3", "12")
    endpoint = LLMProfile.objects.get(name="Team baseline", project=project)

    # Its test: the answer and the latency.
    page.get_by_role("button", name="Test Team baseline").click()
    result = page.locator(f"#endpoint-test-{endpoint.pk}")
    expect(result.locator(".test-ok")).to_have_text("Answered", timeout=WORKER)
    expect(result.locator(".test-reply")).to_contain_text("<s1>")
    assert float(result.locator(".test-latency").inner_text()) > 0

    # The job form: no learned judge yet (a line says why, with the way to train one); the estimate.
    page.get_by_role("link", name="Auto-label jobs", exact=True).click()
    expect(page.locator("#learned-judge-note")).to_contain_text("no judge has been trained")
    page.get_by_label("Endpoint profile").select_option(label="Team baseline (this project's)")
    estimate = page.locator("#job-estimate")
    expect(estimate.locator(".estimate-prompt-tokens")).to_have_text(NUMBER, timeout=30_000)
    expect(estimate.locator(".estimate-turns")).to_have_text("8")
    assert float(estimate.locator(".estimate-cost").inner_text().split()[0]) > 0

    # The LLM job, run by the worker; its tokens and cost as the API reported them.
    page.get_by_role("button", name="Start auto-label job").click()
    page.wait_for_url("**/autolabel/jobs/*/")
    expect(page.locator(".job-status")).to_have_text("Done", timeout=WORKER)
    llm_job = AutoLabelJob.objects.get(profile=endpoint)
    usage = page.get_by_role("table", name="Tokens and cost")
    expect(usage.locator(".job-prompt-tokens")).to_have_text(str(llm_job.prompt_tokens))
    expect(usage.locator(".job-cost")).to_contain_text(f"{llm_job.cost:.6f}")
    assert llm_job.prompt_tokens > 0 and llm_job.cost > 0

    # The learned judge, trained from the evaluation page by the worker (it reads the LLM job's votes too).
    page.get_by_role("link", name="Evaluation against gold").click()
    page.get_by_role("button", name="Train the learned judge").click()
    expect(page.get_by_test_id("judge-status")).to_have_text("Done", timeout=WORKER)
    judge = LearnedJudge.objects.get(project=project)
    assert judge.gold_sentences == 25 and judge.votes_job_id == llm_job.pk
    expect(page.get_by_test_id("judge-figures")).to_be_visible()

    # The learned judge is now an endpoint of the job form; its estimate sends nothing.
    page.get_by_role("link", name="Auto-label jobs").first.click()
    choice = page.get_by_label("Endpoint profile")
    learned = choice.locator("option", has_text="Learned judge (trained")
    expect(learned).to_contain_text("25 gold sentences, protocol built-in")
    choice.select_option(value=learned.get_attribute("value"))
    expect(estimate.locator(".estimate-learned")).to_contain_text("calls no service", timeout=30_000)
    expect(estimate.locator(".estimate-requests")).to_have_text("0")
    expect(estimate.locator(".estimate-cost")).to_have_text("0.000000")
    page.get_by_role("button", name="Start auto-label job").click()
    page.wait_for_url("**/autolabel/jobs/*/")
    expect(page.locator(".job-status")).to_have_text("Done", timeout=WORKER)
    learned_job = AutoLabelJob.objects.get(learned_judge=judge)
    expect(page.locator("#job-labeller")).to_contain_text(f"learned judge #{judge.pk}")
    expect(page.locator("#job-labeller")).not_to_contain_text("prompt v")
    assert learned_job.done_turns == 8 and learned_job.requests == 0

    # Compared with the LLM job on the evaluation page (paired, on the same gold).
    page.get_by_role("link", name="Evaluation against gold").click()
    page.get_by_label("Compare with job").select_option(value=str(llm_job.pk))
    page.get_by_role("button", name="Compare").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(
        f"Job #{learned_job.pk} (A) compared with job #{llm_job.pk} (B)")
    expect(page.locator(".comparison-table tbody tr").first).to_be_visible()

    # The turns it is least sure of, drawn for human annotation.
    page.goto(f"/p/{project.slug}/autolabel/jobs/{learned_job.pk}/")
    page.locator("#job-checks-link").click()
    page.get_by_label(DrawStrategy.UNCERTAINTY.label).check()
    page.get_by_label("Number of turns").fill("3")
    page.get_by_role("button", name="Draw turns").click()
    expect(page.locator("#draws-table tbody tr")).to_have_count(1)
    expect(page.locator("#draws-table tbody tr")).to_contain_text(DrawStrategy.UNCERTAINTY.label)
    draw = TurnDraw.objects.get(project=project)
    assert (draw.strategy, draw.source_job_id, draw.drawn_turns.count()) == ("uncertainty", learned_job.pk, 3)
