"""The throttle of self sign-up through an invite link: attempts per client address, like failed sign-ins.

Every sign-up attempt counts, made or refused: a made account is what a flood would want, and a refused one
("that username exists") is how someone would list the site's accounts. Kept in the cache the web servers
share (settings: CACHES), for as long as a sign-in lock-out lasts (LOGIN_COOLOFF_MINUTES).
"""

import math
import time

from django.conf import settings
from django.core.cache import cache

from ..auth_backend import client_address


def _key(request) -> str:
    return f"signup-attempts:{client_address(request)}"


def signup_wait(request) -> int:
    """Seconds this address must wait before its next sign-up attempt; 0 if it may try now."""
    window = settings.AXES_COOLOFF_TIME.total_seconds()
    now = time.time()
    recent = [moment for moment in cache.get(_key(request), []) if moment > now - window]
    if len(recent) < settings.SIGNUP_ATTEMPT_LIMIT:
        return 0
    return max(1, math.ceil(recent[-settings.SIGNUP_ATTEMPT_LIMIT] + window - now))


def signup_attempt_count(request) -> None:
    """Count one sign-up attempt from this address."""
    window = settings.AXES_COOLOFF_TIME.total_seconds()
    now = time.time()
    recent = [moment for moment in cache.get(_key(request), []) if moment > now - window]
    cache.set(_key(request), recent[-settings.SIGNUP_ATTEMPT_LIMIT:] + [now], timeout=math.ceil(window))
