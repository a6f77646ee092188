"""Password guessing is limited on every sign-in route, per account and per address (issue 14, item 8).

The address is REMOTE_ADDR unless the deployment names how many reverse proxies it trusts: a client's own
X-Forwarded-For header never buys it a fresh budget. Lock-outs live in the database (django-axes), so each
test starts with none; the token endpoint's rate throttle lives in the cache, cleared here too.
"""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from tests.factories import DEFAULT_PASSWORD, UserFactory

pytestmark = pytest.mark.django_db

LIMIT = 4


@pytest.fixture(autouse=True)
def small_limit(settings):
    settings.AXES_FAILURE_LIMIT = LIMIT
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    settings.TRUSTED_PROXY_COUNT = 0
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 0}
    cache.clear()
    yield
    cache.clear()


def html_login(client, username, password, **extra):
    return client.post("/accounts/login/", {"username": username, "password": password}, **extra)


def logged_in(client):
    return "_auth_user_id" in client.session


def test_html_login_locks_the_account_after_the_limit_and_says_when_to_try_again():
    user = UserFactory()
    client = Client()
    for _ in range(LIMIT):
        html_login(client, user.username, "wrong-password")
    response = html_login(client, user.username, DEFAULT_PASSWORD)
    assert response.status_code == 429
    assert not logged_in(client)
    page = response.content.decode()
    assert "Too many failed sign-ins" in page and "Try again after" in page and "in 15 minutes" in page
    assert 'name="password"' in page  # still the login page
    assert 14 * 60 <= int(response["Retry-After"]) <= 15 * 60


def test_the_lock_lifts_after_the_cool_off():
    user = UserFactory()
    client = Client()
    for _ in range(LIMIT):
        html_login(client, user.username, "wrong-password")
    assert html_login(client, user.username, DEFAULT_PASSWORD).status_code == 429
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    response = html_login(client, user.username, DEFAULT_PASSWORD)
    assert response.status_code == 302 and logged_in(client)


def test_one_address_guessing_many_accounts_is_locked_out_too():
    victims = [UserFactory() for _ in range(LIMIT)]
    for victim in victims:
        html_login(Client(), victim.username, "wrong-password")
    bystander = UserFactory()
    response = html_login(Client(), bystander.username, DEFAULT_PASSWORD)
    assert response.status_code == 429
    # The same account from another address is not locked (its own count is 0).
    other = html_login(Client(REMOTE_ADDR="10.9.8.7"), bystander.username, DEFAULT_PASSWORD)
    assert other.status_code == 302


def test_the_account_is_locked_whatever_address_the_guesses_come_from():
    user = UserFactory()
    for n in range(LIMIT):
        html_login(Client(REMOTE_ADDR=f"10.0.0.{n + 1}"), user.username, "wrong-password")
    response = html_login(Client(REMOTE_ADDR="10.0.1.1"), user.username, DEFAULT_PASSWORD)
    assert response.status_code == 429


def test_admin_login_is_limited_too():
    admin = UserFactory(is_staff=True, is_superuser=True)
    client = Client()
    for _ in range(LIMIT):
        client.post("/admin/login/", {"username": admin.username, "password": "wrong-password"})
    response = client.post("/admin/login/?next=/admin/", {"username": admin.username, "password": DEFAULT_PASSWORD})
    assert response.status_code == 429
    assert "Try again after" in response.content.decode()
    assert client.get("/admin/").status_code == 302  # still sent to the login page


def token(client, username, password, **extra):
    return client.post("/api/v1/auth/token/", {"username": username, "password": password},
                       content_type="application/json", **extra)


def test_token_endpoint_locks_out_with_the_api_error_body_whatever_x_forwarded_for_says():
    user = UserFactory()
    client = Client()
    statuses = [token(client, user.username, "wrong", HTTP_X_FORWARDED_FOR=f"203.0.113.{n}").status_code
                for n in range(LIMIT)]
    assert statuses == [400] * (LIMIT - 1) + [429]  # the failure that reaches the limit is told at once
    response = token(client, user.username, DEFAULT_PASSWORD, HTTP_X_FORWARDED_FOR="203.0.113.200")
    assert response.status_code == 429
    body = response.json()
    assert body["status"] == 429 and body["code"] == "locked_out"
    assert "Try again after" in body["detail"] and body["retry_after"] > 0
    assert "token" not in body


def test_token_endpoint_rate_throttle_keys_on_the_connection_not_the_header(settings):
    settings.AXES_FAILURE_LIMIT = 1000  # the rate throttle alone
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK,
                               "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
                                                          "login": "5/minute"}}
    client = Client()
    statuses = [token(client, f"nobody{n}", "wrong", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}").status_code
                for n in range(8)]
    assert statuses[:5] == [400] * 5 and statuses[5:] == [429] * 3


def test_behind_trusted_proxies_the_address_the_proxy_saw_counts(settings):
    settings.TRUSTED_PROXY_COUNT = 1
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    proxy = "10.0.0.1"
    for n in range(LIMIT):
        # The client writes its own X-Forwarded-For; the proxy appends the address it saw (198.51.100.7).
        html_login(Client(REMOTE_ADDR=proxy), f"guess{n}", "wrong",
                   HTTP_X_FORWARDED_FOR=f"192.0.2.{n}, 198.51.100.7")
    attacker = html_login(Client(REMOTE_ADDR=proxy), UserFactory().username, DEFAULT_PASSWORD,
                          HTTP_X_FORWARDED_FOR="192.0.2.99, 198.51.100.7")
    assert attacker.status_code == 429
    # Another person behind the same proxy is not locked out with the attacker.
    colleague = html_login(Client(REMOTE_ADDR=proxy), UserFactory().username, DEFAULT_PASSWORD,
                           HTTP_X_FORWARDED_FOR="198.51.100.8")
    assert colleague.status_code == 302
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"198.51.100.7"}


def test_a_user_who_mistypes_a_few_times_still_signs_in():
    user = UserFactory()
    client = Client()
    for _ in range(LIMIT - 1):
        assert html_login(client, user.username, "typo").status_code == 200
    assert html_login(client, user.username, DEFAULT_PASSWORD).status_code == 302
