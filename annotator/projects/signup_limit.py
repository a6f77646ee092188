"""The throttle of self sign-up through an invite link: attempts per client address, like failed sign-ins.

Every sign-up attempt counts, made or refused: a made account is what a flood would want, and a refused one
("that username exists") is how someone would list the site's accounts. Kept in the cache the web servers
share (settings: CACHES), for as long as a sign-in lock-out lasts (LOGIN_COOLOFF_MINUTES).

Counted atomically: an address has ``SIGNUP_ATTEMPT_LIMIT`` slots, each a cache key that an attempt takes with
``cache.add`` (set only if absent) and that expires after the window. Reading a count and writing it back let
40 simultaneous requests all read "fewer than 10" and all pass. ``add`` is atomic on Redis, Memcached, the
database and local-memory caches; the file cache (``make run``'s) checks and writes in two steps, so there the
slots are taken under an exclusive lock on a file in its folder.
"""

import fcntl
import math
import os
import time
from contextlib import contextmanager

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.filebased import FileBasedCache

from ..auth_backend import client_address


@contextmanager
def _one_at_a_time(cache):
    """Nothing on the file cache; an exclusive lock shared by every thread and process of this machine there."""
    if not isinstance(cache, FileBasedCache):
        yield
        return
    os.makedirs(cache._dir, exist_ok=True)
    with open(os.path.join(cache._dir, "signup-attempts.lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
        yield


def signup_attempt_take(request) -> int:
    """Count one sign-up attempt from this address if it may try now: 0 when counted, else the seconds to wait."""
    cache = caches["default"]
    window = settings.AXES_COOLOFF_TIME.total_seconds()
    address = client_address(request)
    slots = [f"signup-attempt:{address}:{slot}" for slot in range(settings.SIGNUP_ATTEMPT_LIMIT)]
    now = time.time()
    with _one_at_a_time(cache):
        for slot in slots:
            if cache.add(slot, now, timeout=math.ceil(window)):
                return 0
        taken = cache.get_many(slots).values()
    return max(1, math.ceil(min(taken, default=now) + window - now))
