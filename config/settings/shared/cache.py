"""The cache, and the sessions kept in it."""

import os

from .environment import VAR_DIR

# Shared by the web server and the Celery workers: a job reports its progress
# here while its own transaction is still open (an import is one transaction, so
# progress written to its table would only appear at the end). A folder by
# default; CACHE_URL=redis://... when the processes run on several machines.
CACHE_URL = os.environ.get("CACHE_URL", "")
if CACHE_URL.startswith(("redis://", "rediss://")):
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}}
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            # Made by the cache on its first write. The test settings give each pytest-xdist worker its own.
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }

# Sessions are read on every request: from the cache, the database only when the cache lost them
# (one query less per annotation request; docs/benchmarks.md, load).
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
