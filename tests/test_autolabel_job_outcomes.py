"""How a pre-labelling job ends, as the lead reads it on the job page, the API and ``manage.py autolabel``
(issue 38, items 11 and 12): failed when every request failed, with the endpoint and the error; done with
problems, counted, with the first reason; the site's default endpoint read from OPENAI_BASE_URL when the job
runs. Real HTTP: the offline baseline server, and a port nobody listens on."""

import importlib
import socket
from io import StringIO

import pytest
from django.apps import apps as django_apps
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from annotator.domain.vocabulary import Role
from autolabel.models import AutoLabelJob, LLMProfile
from tests.autolabel_fixtures import baseline_llm, baseline_server, profile  # noqa: F401
from tests.factories import ProjectFactory, member
from tests.factories_autolabel import plain_turns

pytestmark = pytest.mark.django_db


@pytest.fixture
def closed_port():
    """A port the system just gave and took back: nothing listens there, a connection is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def autolabel(*args):
    out = StringIO()
    call_command("autolabel", *args, "--inline", stdout=out)
    return out.getvalue()


def page_and_api(client, lead, project, job):
    client.force_login(lead)
    page = client.get(f"/p/{project.slug}/autolabel/jobs/{job.pk}/").content.decode()
    api = APIClient()
    api.force_authenticate(lead)
    data = api.get(f"/api/v1/projects/{project.slug}/autolabel-jobs/{job.pk}/").json()
    return page, data


def test_a_job_whose_requests_all_fail_ends_failed_with_the_endpoint_and_the_error(client, closed_port):
    project = ProjectFactory()
    plain_turns(project, 3)
    lead = member(project, Role.LEAD)
    LLMProfile.objects.create(name="down", base_url=f"http://127.0.0.1:{closed_port}/v1", api_key_env="",
                              max_retries=1, supports_n=False)
    with pytest.raises(CommandError) as raised:
        autolabel("--project", project.slug, "--profile", "down", "--samples", "2", "--threshold", "1")
    reason = f"connection refused: 127.0.0.1:{closed_port}"
    assert "failed" in str(raised.value) and reason in str(raised.value)
    job = AutoLabelJob.objects.get()
    assert job.status == "failed" and reason in job.error
    page, data = page_and_api(client, lead, project, job)
    assert "Failed" in page and reason in page and ">Done<" not in page
    assert data["status"] == "failed" and data["state"] == "failed" and reason in data["state_reason"]


def test_a_failed_jobs_page_says_failed_with_the_reason_and_each_sentence_that_all_its_samples_abstained(
        client, closed_port):
    """Issue 46, item 13: the page read "3 of 3 turns (100.0%)" and, per sentence, "no label 0/2 hallucinated,
    2 abstained" (two votes for "not hallucinated", as it read)."""
    project = ProjectFactory()
    plain_turns(project, 3)
    lead = member(project, Role.LEAD)
    LLMProfile.objects.create(name="down", base_url=f"http://127.0.0.1:{closed_port}/v1", api_key_env="",
                              max_retries=0, supports_n=False)
    with pytest.raises(CommandError):
        autolabel("--project", project.slug, "--profile", "down", "--samples", "2", "--threshold", "1")
    job = AutoLabelJob.objects.get()
    assert job.status == "failed" and job.done_turns == job.total_turns == 3  # every turn tried, none labelled
    page, _ = page_and_api(client, lead, project, job)
    reason = f"connection refused: 127.0.0.1:{closed_port}"
    failed = page.split('data-testid="job-failed">', 1)[1].split("</p>", 1)[0]
    assert failed.startswith("Failed: every request failed") and reason in failed
    assert "(100.0%)" not in page and "3 of 3 turns" not in page and 'role="progressbar"' not in page
    assert "had tried <strong" in page and "of its 3 turns when it failed" in page
    sentences = job.project.dialogues.get().turns.first().sentences.count()
    assert page.count("no label: all 2 samples abstained") == 3 * sentences
    assert " hallucinated, 2 abstained" not in page and "0/2 hallucinated" not in page


def test_a_job_with_some_failed_requests_is_done_with_problems_counted_with_the_first_reason(client, profile,
                                                                                              baseline_llm):
    profile.supports_n, profile.max_retries = False, 0
    profile.save()
    baseline_llm.configure(faults={"500": {"every": 4}})
    project = ProjectFactory()
    plain_turns(project, 3)
    lead = member(project, Role.LEAD)
    out = autolabel("--project", project.slug, "--profile", profile.name, "--samples", "3", "--threshold", "2")
    job = AutoLabelJob.objects.get()
    assert job.status == "done" and 0 < job.faults < job.requests
    reason = f"500 from 127.0.0.1:{baseline_llm.port}"
    assert job.first_fault.startswith(reason)
    assert f"Job {job.pk} done with problems" in out and reason in out
    page, data = page_and_api(client, lead, project, job)
    assert "Done with problems" in page and f"{job.faults} failed requests; the first: {reason}" in page
    assert data["state"] == "done_with_problems" and reason in data["state_reason"]


def test_a_clean_job_is_done(client, profile):
    project = ProjectFactory()
    plain_turns(project, 2)
    lead = member(project, Role.LEAD)
    out = autolabel("--project", project.slug, "--profile", profile.name, "--samples", "3", "--threshold", "2")
    job = AutoLabelJob.objects.get()
    assert f"Job {job.pk} done: 2/2 turns" in out
    page, data = page_and_api(client, lead, project, job)
    assert data["state"] == "done" and "Done with problems" not in page


def test_the_default_endpoint_follows_OPENAI_BASE_URL_when_the_job_runs(settings, baseline_llm, closed_port):
    """The profile the migrations made for the offline baseline: migrated with one OPENAI_BASE_URL, the job
    runs with another and goes there."""
    # As 0001 made it (a test that flushes the database, browser tests, removes the migrated row), then 0003.
    default, _ = LLMProfile.objects.get_or_create(
        name="Offline baseline (local)", project=None,
        defaults={"base_url": "http://127.0.0.1:8765/v1", "api_key_env": "OPENAI_API_KEY"})
    migration = importlib.import_module("autolabel.migrations.0003_endpoints_of_projects_estimates")
    migration.default_profile_follows_environment(django_apps, None)
    default.refresh_from_db()
    assert default.follows_environment
    project = ProjectFactory()
    plain_turns(project, 2)
    settings.OPENAI_BASE_URL = baseline_llm.base_url
    autolabel("--project", project.slug, "--profile", default.name, "--samples", "2", "--threshold", "1")
    job = AutoLabelJob.objects.get()
    assert job.status == "done" and job.faults == 0 and job.parameters["base_url"] == baseline_llm.base_url
    settings.OPENAI_BASE_URL = f"http://127.0.0.1:{closed_port}/v1"
    default.max_retries = 0
    default.save()
    with pytest.raises(CommandError, match=f"failed.*connection refused: 127.0.0.1:{closed_port}"):
        autolabel("--project", project.slug, "--profile", default.name, "--samples", "2", "--threshold", "1")


def test_a_profile_a_person_made_keeps_its_address(settings, profile, closed_port):
    settings.OPENAI_BASE_URL = f"http://127.0.0.1:{closed_port}/v1"
    project = ProjectFactory()
    plain_turns(project, 1)
    autolabel("--project", project.slug, "--profile", profile.name, "--samples", "2", "--threshold", "1")
    assert AutoLabelJob.objects.get().status == "done"


def test_a_job_no_worker_took_says_it_is_waiting_for_a_worker(client, profile):
    from datetime import timedelta

    from django.utils import timezone

    from autolabel.jobs import services

    project = ProjectFactory()
    plain_turns(project, 1)
    lead = member(project, Role.LEAD)
    job = services.job_create(project=project, profile=profile, samples=1, threshold=1, enqueue=False)
    AutoLabelJob.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(seconds=30))
    page, data = page_and_api(client, lead, project, job)
    assert "Waiting for a worker" in page and "is a Celery worker running" in page
    assert data["state"] == "waiting_for_worker"
