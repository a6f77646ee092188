"""The settings package (config/, issue 16): importing settings writes nothing, each environment keeps its own
concerns, and the folders the settings name are made where they are used."""

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_python(code, tmp_path, **env):
    base = {k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ}
    base.update(VAR_DIR=str(tmp_path / "var"), SECRET_KEY=secrets.token_urlsafe(64), **env)
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=base, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("module", ["config.settings.development", "config.settings.test",
                                    "config.settings.production"])
def test_importing_settings_makes_no_folder(module, tmp_path):
    run_python(f"import importlib; importlib.import_module({module!r})", tmp_path, DJANGO_SETTINGS_MODULE=module)
    assert not (tmp_path / "var").exists()


def test_the_folders_are_made_at_start_up_and_by_the_celery_app(tmp_path):
    code = ("import django, os; django.setup(); from django.conf import settings;"
            "print(sorted(os.listdir(settings.VAR_DIR)));"
            "from config.celery import app; app.conf.broker_url;"
            "print(sorted(os.listdir(settings.VAR_DIR / 'broker')))")
    started, broker = run_python(code, tmp_path, DJANGO_SETTINGS_MODULE="config.settings.development").splitlines()
    assert started == str(["staticfiles"])
    assert broker == str(["control", "out", "processed"])


def test_the_http_client_logs_warnings_only_once_django_is_set_up(tmp_path):
    code = ("import django, logging; django.setup();"
            "print(logging.getLogger('httpx').getEffectiveLevel(), logging.getLogger('httpx2').getEffectiveLevel())")
    out = run_python(code, tmp_path, DJANGO_SETTINGS_MODULE="config.settings.development")
    assert out.split() == [str(30), str(30)]


def test_only_the_test_settings_give_each_xdist_worker_its_own_database_and_cache(tmp_path):
    code = ("import django, json; django.setup(); from django.conf import settings as s;"
            "print(json.dumps([s.DATABASES['default']['TEST'].get('NAME'), s.CACHES['default']['LOCATION']]))")
    var = tmp_path / "var"
    for module, expected in [
        ("config.settings.test", [str(var / "test-gw7.sqlite3"), str(var / "cache-test-gw7")]),
        ("config.settings.development", [None, str(var / "cache")]),
    ]:
        out = run_python(code, tmp_path, DJANGO_SETTINGS_MODULE=module, PYTEST_XDIST_WORKER="gw7")
        assert json.loads(out) == expected, module
