"""Signing in: the user backend, the client's address and the answer to a locked-out sign-in.

Every request of a logged-in user loads its user row; building that query with
the ORM was a tenth of the web server's CPU in a decision request (bench/load.py
under py-spy, docs/benchmarks.md). Logging in, permissions and everything else
are Django's own.

Failed sign-ins are counted by django-axes (settings: AXES_*), per username and
per client address; ``client_address`` says which address that is, and
``lockout_response`` what a locked-out person is told.
"""

import ipaddress
import math

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied
from django.db.models import Max, Q
from django.http import JsonResponse
from django.shortcuts import render
from django.utils import timezone

from .fastsql.joined import JoinedSelect


_USER = JoinedSelect(get_user_model(), "u", joins=[], extra_columns=[], where="u.id = %s")


class SessionUserBackend(ModelBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            # Stop here: the ModelBackend listed after this one (settings) is there for sessions started
            # before this backend existed, and would check the password a second time.
            raise PermissionDenied
        return user

    def get_user(self, user_id):
        try:
            found = _USER.fetch_one([int(user_id)])
        except (TypeError, ValueError, OverflowError):
            return None
        if found is None:
            return None
        user = found[0]
        return user if self.user_can_authenticate(user) else None


def client_address(request):
    """REMOTE_ADDR, or the address the outermost of ``TRUSTED_PROXY_COUNT`` proxies put in X-Forwarded-For.

    Each proxy appends the address it received the request from, so the last N entries were written by our
    N proxies and everything before them by the client: with N proxies the N-th entry from the right is
    the client's. The same rule as Django REST framework's ``NUM_PROXIES`` (its throttles use it).
    """
    remote = request.META.get("REMOTE_ADDR", "")
    count = settings.TRUSTED_PROXY_COUNT
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    if count <= 0 or not forwarded:
        return remote
    candidate = forwarded[-min(count, len(forwarded))]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote  # a misconfigured proxy chain: count the connection's address rather than a made-up one


def _unlocked_at(request, username):
    """When the lock-out ends: the cool-off after the newest failure counted against this name or address."""
    from axes.models import AccessAttempt

    cooloff = settings.AXES_COOLOFF_TIME
    matching = Q(ip_address=getattr(request, "axes_ip_address", None))
    if username:
        matching |= Q(username=username)
    newest = AccessAttempt.objects.filter(matching, attempt_time__gte=timezone.now() - cooloff).aggregate(
        newest=Max("attempt_time"))["newest"]
    return (newest or timezone.now()) + cooloff


def lockout_response(request, original_response=None, credentials=None):
    """429 with when to try again: the login page for a browser, the API's error body for the API."""
    from axes.helpers import get_client_username

    username = get_client_username(request, credentials)
    unlocked_at = _unlocked_at(request, username)
    wait = max(1, math.ceil((unlocked_at - timezone.now()).total_seconds()))
    minutes = max(1, math.ceil(wait / 60))
    when = timezone.localtime(unlocked_at).strftime("%H:%M %Z")
    detail = (f"Too many failed sign-ins for this account or from this address. "
              f"Try again after {when} (in {minutes} minute{'s' if minutes != 1 else ''}).")
    headers = {"Retry-After": str(wait)}
    if request.path.startswith("/api/"):
        body = {"status": 429, "code": "locked_out", "detail": detail, "retry_after": wait}
        return JsonResponse(body, status=429, headers=headers)
    context = {"locked_out": detail, "next": request.POST.get("next") or request.GET.get("next", "")}
    response = render(request, "registration/login.html", context, status=429)
    response["Retry-After"] = headers["Retry-After"]
    return response
