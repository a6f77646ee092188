"""Every route of the URL conf needs a login, and every POST needs a CSRF token.

The routes come from walking the URL conf (tests/url_walk.py), so a route added
later by anyone is covered automatically.
"""

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from tests.factories import UserFactory
from tests.url_walk import routes, simple_values, urls

pytestmark = pytest.mark.django_db

METHODS = ("get", "post", "put", "patch", "delete")

# The only routes an anonymous visitor may use: the two login forms (the app's
# and the admin's, which redirects to the same authentication) and the API's
# token exchange, which is the API's login (POST username + password).
PUBLIC = {
    "login": set(METHODS),
    "admin:login": set(METHODS),
    "api:token": {"post"},
    # The API's catch-all: a JSON 404 for a path that is no endpoint (nothing to protect).
    "api:not-found": set(METHODS),
    # An invite link and its page: the project's name and the role, and a way to sign in or up
    # (tests/test_invite_links.py shows they reveal nothing else, and nothing without a link).
    "project_join": set(METHODS),
    "project_invite": set(METHODS),
}

# Fragments htmx polls (badges, a question thread): after the session ends they answer an empty
# 204 to a GET, so that no login page is swapped into the page; every other method still redirects.
POLLED_FRAGMENTS = {"qa:nav_badges", "qa:turn_questions", "qa:question_messages", "gold_nav_badge"}

# POSTs that need no CSRF token because they carry no ambient authority: the
# API token exchange authenticates with the password in the body, never a cookie.
CSRF_EXEMPT = {"api:token", "api:not-found"}


def test_the_walk_sees_the_whole_url_conf():
    """The walk reaches the routes every helper adds (guards against a broken walker)."""
    names = {route.name for route in routes()}
    for expected in ("home", "project_detail", "login", "logout", "admin:index"):
        assert expected in names
    assert len(names) > 20


def login_targets(route):
    targets = (reverse(settings.LOGIN_URL),)
    return targets + (reverse("admin:login"),) if route.is_admin else targets


@pytest.mark.parametrize("method", METHODS)
def test_every_route_but_login_refuses_anonymous_visitors(method):
    client = Client()
    checked = 0
    for route, url in urls(simple_values):
        if method in PUBLIC.get(route.name, ()):
            continue
        response = getattr(client, method)(url)
        checked += 1
        where = f"{method.upper()} {url} ({route.name or 'unnamed'})"
        if method == "get" and route.name in POLLED_FRAGMENTS and response.status_code == 204:
            assert response.content == b"", f"{where} answered 204 with a body"
            continue
        if route.is_api:
            # DRF: 401 for a missing login (or 405 when the route has no such method, which reveals nothing).
            assert response.status_code in (401, 403, 405), f"{where} answered {response.status_code}"
            if response.status_code == 405:
                assert response.status_code != 200
        else:
            assert response.status_code == 302, f"{where} answered {response.status_code} to an anonymous visitor"
            assert response["Location"].startswith(login_targets(route)), f"{where} redirects to {response['Location']}"
    assert checked > 20


def test_anonymous_api_reads_answer_401_with_a_message():
    client = Client()
    for route, url in urls(simple_values):
        if not route.is_api or "get" in PUBLIC.get(route.name, ()):
            continue
        response = client.get(url)
        if route.name == "api:token":
            continue  # POST-only login: GET is 405
        if response.headers.get("Content-Type", "").startswith("application/json"):
            assert response.status_code == 401, f"GET {url}: {response.status_code}"
            assert response.json(), url


@pytest.mark.parametrize("method", ("post", "put", "patch", "delete"))
def test_every_unsafe_request_without_csrf_token_is_refused(method):
    """A logged-in staff user (who passes every permission check) sending no CSRF token gets 403 everywhere."""
    user = UserFactory(is_staff=True, is_superuser=True)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    for route, url in urls(simple_values):
        if route.name in CSRF_EXEMPT:
            continue
        response = getattr(client, method)(url, data="", content_type="application/x-www-form-urlencoded")
        assert response.status_code == 403, (
            f"{method.upper()} {url} ({route.name or 'unnamed'}) without a CSRF token answered {response.status_code}"
        )


def test_a_post_with_the_csrf_token_passes_the_check():
    """The refusals above are the CSRF check, not something else: the same POST with the token gets through."""
    user = UserFactory(is_staff=True, is_superuser=True)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    page = client.get(reverse("api:token-page"))
    token = page.cookies[settings.CSRF_COOKIE_NAME].value if settings.CSRF_COOKIE_NAME in page.cookies else None
    assert token, "the token page sets a CSRF cookie"
    response = client.post(reverse("api:token-page"), {"action": "create", "csrfmiddlewaretoken": token})
    assert response.status_code == 302
