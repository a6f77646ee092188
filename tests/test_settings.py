"""Production settings are safe: check --deploy passes, and a missing SECRET_KEY is refused."""

import importlib
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_manage(*args, env_extra):
    # The test process allows async-unsafe ORM calls for Playwright; a deployment must not.
    env = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE"}}
    env.update(env_extra)
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True)


def test_check_deploy_passes_with_production_settings():
    result = run_manage(
        "check", "--deploy", "--fail-level", "WARNING",
        env_extra={"DJANGO_SETTINGS_MODULE": "config.settings.production", "SECRET_KEY": secrets.token_urlsafe(64)},
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_settings_refuse_to_start_without_a_secret_key():
    result = run_manage("check", env_extra={"DJANGO_SETTINGS_MODULE": "config.settings.production"})
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


@pytest.mark.parametrize(("key", "reason"), [
    ("a" * 60, "1 distinct characters, fewer than 5"),
    ("abcd" * 20, "4 distinct characters, fewer than 5"),
    ("django-insecure-" + "k3J9x_Qm2vLp8RzT4wYb6NcD1fHs0GaE7uViO5eX", "starts with 'django-insecure-'"),
    ("Zq8" + "x7Rt" * 11, "47 characters, fewer than 50"),
])
def test_production_settings_refuse_a_key_django_flags_as_weak_with_the_reason(key, reason):
    """Issue 22 item 7: a key `check --deploy` would flag (security.W009) is refused at start, with the reason."""
    result = run_manage("check", env_extra={"DJANGO_SETTINGS_MODULE": "config.settings.production", "SECRET_KEY": key})
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr
    assert reason in result.stderr


def test_production_cookies_are_secure():
    env = {"SECRET_KEY": secrets.token_urlsafe(64)}
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='config.settings.production'; django.setup();"
        "from django.conf import settings as s;"
        "print(s.DEBUG, s.SESSION_COOKIE_SECURE, s.SESSION_COOKIE_HTTPONLY, s.SESSION_COOKIE_SAMESITE, s.CSRF_COOKIE_SECURE)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True)
    assert result.stdout.split() == ["False", "True", "True", "Lax", "True"], result.stderr



STRONG_HASHERS = ("django.contrib.auth.hashers.PBKDF2PasswordHasher", "django.contrib.auth.hashers.Argon2PasswordHasher")


def first_password_hasher(settings_module, monkeypatch):
    """The hasher new passwords get under ``settings_module``: its PASSWORD_HASHERS, else Django's default."""
    from django.conf import global_settings

    monkeypatch.setenv("SECRET_KEY", secrets.token_urlsafe(64))  # production settings refuse to load without one
    module = importlib.import_module(settings_module)
    module = importlib.reload(module)  # read with this environment, whoever imported it before
    return getattr(module, "PASSWORD_HASHERS", global_settings.PASSWORD_HASHERS)[0]


def test_only_the_test_settings_hash_passwords_with_md5(monkeypatch):
    """config/settings/test.py trades MD5 for speed; a deployment and `make run` keep a strong hasher first."""
    assert first_password_hasher("config.settings.production", monkeypatch) in STRONG_HASHERS
    assert first_password_hasher("config.settings.development", monkeypatch) in STRONG_HASHERS
    assert first_password_hasher("config.settings.test", monkeypatch) == "django.contrib.auth.hashers.MD5PasswordHasher"


@pytest.mark.parametrize("url", ["sqlite:///var/kept.sqlite3", "postgres://someone@127.0.0.1:5432/kept"])
def test_a_database_connection_is_kept_between_requests_on_sqlite_as_on_postgresql(monkeypatch, url):
    """Opening and closing the SQLite file on every request was a tenth of a Start (issue 49): both databases keep
    a connection for CONN_MAX_AGE seconds (60 unless set; 0 closes it after every request)."""
    from config.settings.base import database_from_env

    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.delenv("CONN_MAX_AGE", raising=False)
    assert database_from_env()["CONN_MAX_AGE"] == 60
    monkeypatch.setenv("CONN_MAX_AGE", "0")
    assert database_from_env()["CONN_MAX_AGE"] == 0
