"""In a real browser, with a real worker and the offline baseline server over HTTP: the demo's lead (not staff)
goes from the project page to the LLM endpoints page, adds an endpoint, tests it, reads the estimate on the
job form as the options change, starts a job and reads the tokens and cost the API reported (issue 40)."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from playwright.sync_api import expect

from autolabel.models import AutoLabelJob, LLMProfile
from tests.autolabel_fixtures import baseline_llm, baseline_server  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser, pytest.mark.worker, pytest.mark.slow]

NUMBER = re.compile(r"^\s*[1-9][0-9]*\s*$")


def add_endpoint_from_the_project_page(page, slug, name, base_url, prompt_price, reply_price):
    """From the project page, the lead follows its link to the LLM endpoints page (its address names
    ``endpoints``) and adds an endpoint of the baseline's model, without a key."""
    page.goto(f"/p/{slug}/")
    link = page.get_by_role("link", name="LLM endpoints")
    assert "endpoints" in link.get_attribute("href")
    link.click()
    page.get_by_role("heading", name="LLM endpoints", exact=True).wait_for()
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_label("Base URL").fill(base_url)
    page.get_by_label("Model", exact=True).fill("baseline-lexical")
    page.get_by_label("Environment variable holding the key").fill("")
    page.get_by_label("Price per million prompt tokens").fill(prompt_price)
    page.get_by_label("Price per million reply tokens").fill(reply_price)
    page.get_by_role("button", name="Add the endpoint").click()
    page.get_by_role("row", name=re.compile(name)).wait_for()


def test_the_demo_lead_adds_tests_and_uses_an_endpoint(page_for, start_celery_worker, baseline_llm):
    call_command("load_demo", verbosity=0)
    lead = get_user_model().objects.get(username="lead")
    assert not lead.is_staff and not lead.is_superuser
    start_celery_worker(concurrency=2)

    page = page_for(lead)
    add_endpoint_from_the_project_page(page, "demo", "Our baseline", baseline_llm.base_url, "2.5", "10")
    endpoint = LLMProfile.objects.get(name="Our baseline", project__slug="demo")

    # The Test: a worker sends one request; the page polls and shows the answer, the models and the latency.
    page.get_by_role("button", name="Test Our baseline").click()
    result = page.locator(f"#endpoint-test-{endpoint.pk}")
    expect(result.locator(".test-ok")).to_have_text("Answered", timeout=60_000)
    expect(result.locator(".test-models")).to_contain_text("baseline-lexical")
    expect(result.locator(".test-reply")).to_contain_text("<s1>")
    latency = float(result.locator(".test-latency").inner_text())
    assert latency > 0

    # The job form: the estimate follows the options, with the endpoint's prices and measured latency.
    page.get_by_role("link", name="Auto-label jobs", exact=True).click()
    estimate = page.locator("#job-estimate")
    # Untouched, the box says what to do or estimates the profile the form chose, never a red "This field is
    # required." (issue 50, item 6).
    expect(estimate).to_contain_text(re.compile("Choose an endpoint profile|Estimate before the job starts"))
    expect(estimate).not_to_contain_text("This field is required")
    page.get_by_label("Endpoint profile").select_option(label="Our baseline (this project's)")
    expect(estimate.locator(".estimate-prompt-tokens")).to_have_text(NUMBER, timeout=30_000)
    expect(estimate.locator(".estimate-time")).to_contain_text(re.compile(r"under a second|about \d"))
    page.get_by_label("Samples", exact=True).fill("3")
    page.get_by_label("Threshold", exact=True).fill("2")
    page.get_by_label("Samples", exact=True).dispatch_event("change")
    replies_at_3 = estimate.locator(".estimate-completion-tokens")
    page.get_by_label("Ask for all samples in one request (n)").uncheck()
    # Without n each sample is its own request: three times as many.
    expect(estimate.locator(".estimate-requests")).to_have_text("42", timeout=30_000)
    assert int(replies_at_3.inner_text()) > 0
    estimated_cost = estimate.locator(".estimate-cost").inner_text()
    assert float(estimated_cost.split()[0]) > 0
    assert "in the currency of the endpoint's prices" in estimated_cost

    page.get_by_role("button", name="Start auto-label job").click()
    page.wait_for_url("**/autolabel/jobs/*/")
    expect(page.locator(".job-status")).to_have_text("Done", timeout=120_000)
    job = AutoLabelJob.objects.get()
    assert job.profile == endpoint and job.status == "done" and job.prompt_tokens > 0
    usage = page.get_by_role("table", name="Tokens and cost")
    expect(usage.locator(".job-prompt-tokens")).to_have_text(str(job.prompt_tokens))
    expect(usage.locator(".job-completion-tokens")).to_have_text(str(job.completion_tokens))
    expect(usage.locator(".job-cost")).to_contain_text(f"{job.cost:.6f}")
    expect(usage).to_contain_text("in the currency of the endpoint's prices")
    assert job.cost > 0
    # The estimate made when the job was created sits beside what the API reported.
    expect(usage).to_contain_text(str(job.estimate["prompt_tokens"]))
