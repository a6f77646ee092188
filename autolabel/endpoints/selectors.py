"""Reads of a project's LLM endpoints: its own, and the site's it may use."""

from django.conf import settings
from django.db.models import Q
from django.shortcuts import get_object_or_404

from autolabel.models import EndpointTest, LLMProfile


def endpoints_usable_by(project):
    """The endpoints a project's jobs may use: the site's (the admin's) and the project's own."""
    return LLMProfile.objects.filter(Q(project__isnull=True) | Q(project=project)).order_by("project_id", "name")


def endpoint_of_project(project, endpoint_id) -> LLMProfile:
    """One of the project's own endpoints (404 for the site's, which only the admin edits, or another's)."""
    return get_object_or_404(LLMProfile, pk=endpoint_id, project=project)


def endpoint_usable_by(project, endpoint_id) -> LLMProfile:
    return get_object_or_404(endpoints_usable_by(project), pk=endpoint_id)


def endpoints_page(project) -> dict:
    """The page's lists: the project's endpoints and the site's, each with its last test."""
    endpoints = list(endpoints_usable_by(project))
    last_tests = {}
    for test in EndpointTest.objects.filter(profile__in=endpoints).order_by("profile_id", "-created_at", "-pk"):
        last_tests.setdefault(test.profile_id, test)
    for endpoint in endpoints:
        endpoint.last_test = last_tests.get(endpoint.pk)
    return {
        "own_endpoints": [e for e in endpoints if e.project_id is not None],
        "site_endpoints": [e for e in endpoints if e.project_id is None],
        "allowed_hosts": settings.LLM_ENDPOINT_HOSTS,
        "key_hosts": settings.LLM_API_KEY_HOSTS,
        "default_base_url": settings.OPENAI_BASE_URL,
    }
