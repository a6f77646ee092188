"""The Content-Security-Policy header: built once per policy (annotator.middleware), the same as django-csp's."""

import pytest
from csp.utils import build_policy
from django.http import HttpResponse
from django.test import RequestFactory

from annotator.middleware import StaticPolicyCSPMiddleware
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_every_response_carries_django_csps_policy(client):
    client.force_login(UserFactory())
    for url in ("/", "/accounts/login/", "/no-such-page/"):
        header = client.get(url)["Content-Security-Policy"]
        assert header == build_policy()
        assert "script-src 'self'" in header and "'unsafe-eval'" not in header


def test_a_changed_policy_is_served_from_the_next_response(client, settings):
    assert "connect-src 'self'" in client.get("/accounts/login/")["Content-Security-Policy"]
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"default-src": ["'none'"]}}
    settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = {"DIRECTIVES": {"img-src": ["'self'"]}}
    response = client.get("/accounts/login/")
    assert response["Content-Security-Policy"] == "default-src 'none'"
    assert response["Content-Security-Policy-Report-Only"] == build_policy(report_only=True)
    assert "img-src 'self'" in response["Content-Security-Policy-Report-Only"]


def _respond(response, nonce=False):
    request = RequestFactory().get("/")
    middleware = StaticPolicyCSPMiddleware(lambda request: response)
    middleware.process_request(request)
    if nonce:
        str(request.csp_nonce)
    return request, middleware.process_response(request, response)


def test_a_response_with_a_policy_of_its_own_or_a_nonce_goes_through_django_csp():
    updated = HttpResponse()
    updated._csp_update = {"img-src": ["https://example.org"]}
    assert "https://example.org" in _respond(updated)[1]["Content-Security-Policy"]

    exempt = HttpResponse()
    exempt._csp_exempt = True
    assert "Content-Security-Policy" not in _respond(exempt)[1]

    request, with_nonce = _respond(HttpResponse(), nonce=True)
    assert with_nonce["Content-Security-Policy"] == build_policy(nonce=request._csp_nonce)


def test_a_nonce_asked_for_after_the_header_is_written_is_an_error():
    from csp.exceptions import CSPNonceError

    request, response = _respond(HttpResponse())
    assert response["Content-Security-Policy"] == build_policy()
    with pytest.raises(CSPNonceError):
        str(request.csp_nonce)
