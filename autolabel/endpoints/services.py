"""A project's LLM endpoints: the one write path of a lead's profiles, and the Test probe's life.

A lead's endpoint is an ``LLMProfile`` with the project as owner (the admin edits the same records; site-wide
profiles, without a project, stay the admin's). What may be saved is the site's rule (policy.py), checked by
the form and again whenever a request goes out. A test is recorded, then run by a worker after commit
(``autolabel.test_endpoint``, on threads of its own beside the worker's pool: probe_threads.py): no model
call inside a web request.
"""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotator.projects.protocols import protocol_for
from annotator.queue import task_send_after_commit

from autolabel.endpoints.policy import connection_for
from autolabel.endpoints.probe import probe
from autolabel.jobs.llm import EndpointConfigurationError
from autolabel.labelling import prompting
from autolabel.models import EndpointTest, LLMProfile


class EndpointError(ValueError):
    """An endpoint that cannot be changed as asked; the message says why."""


def endpoint_save(form, project) -> LLMProfile:
    """Create or update a lead's endpoint from a valid ``EndpointForm``."""
    profile = form.save(commit=False)
    profile.project = project
    profile.follows_environment = False
    profile.save()
    return profile


def endpoint_delete(profile: LLMProfile) -> None:
    """Remove a lead's endpoint; one that jobs used stays (their record names it)."""
    used = profile.jobs.count() + profile.extraction_jobs.count()
    if used:
        raise EndpointError(f"The endpoint {profile.name} is used by {used} job{'s' if used != 1 else ''}: "
                            f"it stays so that their records keep naming it.")
    profile.delete()


def endpoint_test_start(profile: LLMProfile, user=None) -> EndpointTest:
    """Record a test of ``profile`` and have a worker run it once the record is committed."""
    with transaction.atomic():
        test = EndpointTest.objects.create(profile=profile, created_by=user, endpoint=profile.endpoint_url())
        task_send_after_commit("autolabel.test_endpoint", test.pk)
    return test


def endpoint_test_run(test_id: int) -> str:
    """Run a recorded test (a worker calls this): the policy, then the bounded probe; returns its status."""
    test = EndpointTest.objects.select_related("profile").filter(pk=test_id).first()
    if test is None or test.is_finished:
        return test.status if test else ""
    profile = test.profile
    try:
        base_url, api_key = connection_for(profile)
    except EndpointConfigurationError as refusal:
        return _record(test, status=EndpointTest.Status.FAILED, endpoint=profile.endpoint_url(), error=str(refusal))
    protocol = protocol_for(profile.project) if profile.project_id else None
    result = probe(base_url, api_key, profile.default_model, probe_messages(protocol),
                   settings.LLM_ENDPOINT_TEST_TIMEOUT_SECONDS)
    answered = result.latency_seconds is not None
    if answered:
        LLMProfile.objects.filter(pk=profile.pk).update(latency_seconds=result.latency_seconds)
    return _record(test, status=EndpointTest.Status.DONE if answered else EndpointTest.Status.FAILED,
                   endpoint=base_url, reply=result.reply, models_listed=result.models,
                   latency_seconds=result.latency_seconds, error=result.error)


WORKER_STOPPED = "The worker stopped before it ran the test: test again."


def endpoint_test_abandon(test_id: int) -> None:
    """Record a test no worker will run (its worker stopped first) as failed, unless it finished."""
    EndpointTest.objects.filter(pk=test_id, finished_at__isnull=True).update(
        status=EndpointTest.Status.FAILED, error=WORKER_STOPPED, finished_at=timezone.now())


def probe_messages(protocol=None) -> list[dict]:
    """The test's one request: the pre-labeler's own stage-1 prompt for a one-sentence turn, so that the answer
    shows whether the model follows the marker format (and the offline baseline, which reads only that, answers).
    A project's endpoint is asked in the project's protocol (its reply then speaks the project's words); a
    site-wide one, which no project owns, in the built-in default."""
    return prompting.build_messages(prompting.STAGE_1, prompting.DEFAULT_STAGE1_TEMPLATE,
                                    reference="The endpoint answers requests.", question="Does the endpoint answer?",
                                    sentences=[(1, "The endpoint answers requests.")], protocol=protocol)


def _record(test: EndpointTest, **fields) -> str:
    EndpointTest.objects.filter(pk=test.pk).update(finished_at=timezone.now(), **fields)
    return fields["status"]
