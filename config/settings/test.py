"""Test settings: what pytest uses (pytest.ini), and the Celery workers the tests start (tests/conftest.py).

The development settings, as `make run` runs them, plus what only tests need: a test database and a cache
folder of each pytest-xdist worker's own.
"""

import os

from .development import *  # noqa: F403
from .development import CACHES, CELERY_BROKER_URL, DATABASES, VAR_DIR

# PYTEST_XDIST_WORKER names the pytest-xdist worker ("gw0", "gw1"...); the Celery workers a test starts
# inherit it, and so share their test process's database and cache.
_xdist_worker = os.environ.get("PYTEST_XDIST_WORKER")

_database = dict(DATABASES["default"])
if _database["ENGINE"] == "django.db.backends.sqlite3":
    # A file (not :memory:) so that a live Celery worker sees the test database.
    _database["TEST"] = {"NAME": str(VAR_DIR / f"test-{_xdist_worker or 'main'}.sqlite3")}
elif os.environ.get("TEST_DATABASE_NAME"):
    _database["TEST"] = {"NAME": os.environ["TEST_DATABASE_NAME"]}
DATABASES = {**DATABASES, "default": _database}

if CACHES["default"]["BACKEND"] == "django.core.cache.backends.filebased.FileBasedCache":
    # Each pytest-xdist worker (and the Celery workers its tests start, which inherit the variable) gets a
    # folder of its own, apart from `make run`'s: tests/conftest.py empties it before every test (a report
    # cached by an earlier run of the suite would otherwise be served to a test that expects none).
    CACHES = {**CACHES, "default": {**CACHES["default"],
                                    "LOCATION": str(VAR_DIR / f"cache-test-{_xdist_worker or 'main'}")}}

# MD5 is fast where PBKDF2 takes ~0.35 s a hash on this machine, and every factory-made user hashes a
# password: the suite's speed only. Production and development keep Django's default list (PBKDF2 first),
# which tests/test_settings.py checks.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

if CELERY_BROKER_URL.startswith("filesystem://"):
    # Each pytest-xdist worker's messages in a folder of its own, which tests/conftest.py empties when the
    # worker's session starts. In the shared folder, every remote-control broadcast (a worker's shutdown at
    # a test's end) left a file for each worker ever started there, none of them listening any more: 2,286
    # files after a morning of runs. A running worker lists the folder at every poll, and idling cost it
    # 75 ms of CPU a second against 3 ms with the folder empty.
    BROKER_DIR = VAR_DIR / f"broker-test-{_xdist_worker or 'main'}"
    # kombu looks for messages once a second by default: a worker a test starts would wait up to that long
    # for each task, and for the shutdown command at teardown (tests/conftest.py).
    CELERY_BROKER_TRANSPORT_OPTIONS = {**filesystem_broker_options(BROKER_DIR), "polling_interval": 0.1}  # noqa: F405

# The security walks request every route with every id, thousands of 404s and 403s, and Django logs a warning
# for each (formatted, then dropped by pytest's capture): 4 % of a walk's CPU. Errors (5xx) are still logged;
# tests/test_security_secrets.py turns the warnings back on to check what a request logs.
LOGGING = {**LOGGING, "loggers": {**LOGGING["loggers"], "django.request": {"level": "ERROR"}}}  # noqa: F405
