"""Throttling: scripts using a token share a per-user budget; browsers (session) are not throttled.

Rates come from ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]`` and are read at
request time, so a deployment (or a test) can change them in settings.
"""

from rest_framework.authentication import TokenAuthentication
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle


class _LiveRate:
    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


class TokenClientThrottle(_LiveRate, UserRateThrottle):
    """Requests authenticated with an API token: ``token`` rate per user."""

    scope = "token"

    def __init__(self):
        # The rate is resolved per request in allow_request (settings may change).
        pass

    def allow_request(self, request, view):
        if not isinstance(request.successful_authenticator, TokenAuthentication):
            return True
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)


class LoginThrottle(_LiveRate, AnonRateThrottle):
    """Password attempts on the token endpoint: ``login`` rate per client address.

    The address is DRF's ``get_ident``: REMOTE_ADDR, or behind ``NUM_PROXIES`` (= TRUSTED_PROXY_COUNT)
    proxies the one the outermost proxy saw; never the client-written part of X-Forwarded-For. Failed
    passwords are also counted per account and address by django-axes (annotator.auth_backend).
    """

    scope = "login"

    def __init__(self):
        pass

    def allow_request(self, request, view):
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)
