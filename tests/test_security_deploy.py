"""What a deployment exposes (issue 14, items 9-11): production entry points and settings, the admin's API
tokens, the environment variables an LLM profile may send as its key, and the Content-Security-Policy."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.admin.models import LogEntry
from django.test import Client
from rest_framework.authtoken.models import Token

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_the_admin_never_shows_a_whole_api_token():
    staff = UserFactory(is_staff=True, is_superuser=True)
    owner = UserFactory()
    key = Token.objects.create(user=owner).key
    client = Client()
    client.force_login(staff)
    # Added and changed through the admin: the confirmation messages and the log entries name the token.
    other = UserFactory()
    response = client.post("/admin/authtoken/tokenproxy/add/", {"user": other.pk}, follow=True)
    assert response.status_code == 200
    other_key = Token.objects.get(user=other).key
    client.post(f"/admin/authtoken/tokenproxy/{owner.pk}/change/", {"user": owner.pk}, follow=True)
    pages = ["/admin/authtoken/tokenproxy/", f"/admin/authtoken/tokenproxy/{owner.pk}/change/",
             f"/admin/authtoken/tokenproxy/{owner.pk}/history/", f"/admin/authtoken/tokenproxy/{owner.pk}/delete/",
             f"/admin/auth/user/{owner.pk}/delete/", "/admin/", "/admin/admin/logentry/"]
    seen = []
    for url in pages:
        page = client.get(url)
        assert page.status_code in (200, 404), url
        seen.append(page.content.decode())
    seen.append(response.content.decode())
    text = "\n".join(seen)
    for secret in (key, other_key):
        assert secret not in text
        assert secret[:8] not in text
    assert f"{key[:4]}…" in text  # tokens can still be told apart
    reprs = list(LogEntry.objects.values_list("object_repr", flat=True))
    assert reprs and not any(k[:8] in r for r in reprs for k in (key, other_key))


# --- An LLM profile names only API-key variables -----------------------------------------------------------

def profile_form_data(**changes):
    data = {"name": "leaky", "base_url": "https://llm.example.org/v1", "default_model": "m", "api_key_env": "SECRET_KEY",
            "supports_n": "on", "concurrency": 4, "timeout_seconds": 5, "max_retries": 1, "temperature": 1,
            "max_tokens": 64, "input_price_per_million": 0, "output_price_per_million": 0}
    data.update(changes)
    return data


def test_the_admin_refuses_a_profile_that_would_send_secret_key_as_its_api_key():
    from autolabel.models import LLMProfile

    staff = UserFactory(is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(staff)
    response = client.post("/admin/autolabel/llmprofile/add/", profile_form_data())
    assert response.status_code == 200
    assert "not an API-key variable" in response.content.decode()
    assert not LLMProfile.objects.filter(name="leaky").exists()
    accepted = client.post("/admin/autolabel/llmprofile/add/", profile_form_data(api_key_env="MISTRAL_API_KEY"))
    assert accepted.status_code == 302 and LLMProfile.objects.filter(name="leaky").exists()


def test_a_variable_named_in_the_allow_list_is_accepted(settings):
    from django.core.exceptions import ValidationError

    from autolabel.models import LLMProfile

    profile = LLMProfile(name="team", base_url="https://llm.example.org/v1", api_key_env="TEAM_LLM_TOKEN")
    with pytest.raises(ValidationError, match="LLM_API_KEY_ENV_ALLOWED"):
        profile.full_clean()
    settings.LLM_API_KEY_ENV_ALLOWED = ["TEAM_LLM_TOKEN"]
    profile.full_clean()


def test_where_the_key_is_read_a_profile_saved_around_the_form_cannot_send_secret_key(monkeypatch, settings):
    """A profile written straight to the database (shell, fixture, older version): the job fails, nothing is sent."""
    from autolabel.jobs import services
    from autolabel.jobs.llm import EndpointConfigurationError, api_key_from_env
    from autolabel.models import LLMProfile
    from tests.factories import ProjectFactory

    monkeypatch.setenv("SECRET_KEY", "the-django-secret-key-value")
    with pytest.raises(EndpointConfigurationError, match="not an API-key variable"):
        api_key_from_env("SECRET_KEY")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-allowed")
    assert api_key_from_env("OPENAI_API_KEY") == "sk-allowed"
    profile = LLMProfile.objects.create(name="leaky", base_url="https://llm.example.org/v1", api_key_env="SECRET_KEY")
    with pytest.raises(services.JobError, match="not an API-key variable"):
        services.job_create(project=ProjectFactory(), profile=profile, enqueue=False)


def test_the_api_refuses_to_start_a_job_on_such_a_profile_with_the_error_body():
    from rest_framework.test import APIClient

    from annotator.domain.vocabulary import Role
    from autolabel.models import LLMProfile
    from tests.factories import MembershipFactory, ProjectFactory

    project = ProjectFactory()
    lead = UserFactory()
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    LLMProfile.objects.create(name="leaky", base_url="https://llm.example.org/v1", api_key_env="DATABASE_URL")
    client = APIClient()
    client.force_authenticate(lead)
    response = client.post(f"/api/v1/projects/{project.slug}/autolabel-jobs/", {"profile": "leaky"}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["status"] == 400 and "not an API-key variable" in body["detail"]


# --- Production entry points and the documented environment ----------------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def documented_environment(tmp_path):
    """The `export` lines of docs/deploy.md's "Settings for production" block, as an operator types them.

    Two substitutions only: the placeholder SECRET_KEY gets a real random key, and the /srv paths a
    temporary folder (settings create folders there; the test must not write to /srv).
    """
    text = (ROOT / "docs" / "deploy.md").read_text()
    block = text.split("## Settings for production", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    env = {}
    for line in block.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        assert line.startswith("export "), line
        name, value = line[len("export "):].split("=", 1)
        env[name] = value
    assert env["SECRET_KEY"] == "..."
    env["SECRET_KEY"] = secrets.token_urlsafe(64)
    for name, value in env.items():
        if value.startswith("/srv/"):
            env[name] = str(tmp_path / value.lstrip("/"))
    return env


def bare_environment(**extra):
    """A server's environment: no test settings, no DEBUG, no SECRET_KEY unless given."""
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG") if k in os.environ}
    env.update(extra)
    return env


def run(argv, env):
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_check_deploy_is_clean_with_exactly_the_documented_environment(tmp_path):
    env = bare_environment(**documented_environment(tmp_path))
    assert env["DJANGO_SETTINGS_MODULE"] == "config.settings.production"
    result = run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


PRINT_SETTINGS = "from django.conf import settings; print(settings.SETTINGS_MODULE, settings.DEBUG)"


@pytest.mark.parametrize("entry_point", [
    "import config.wsgi",
    "import config.asgi",
    "from config.celery import app; app.loader.import_default_modules()",
])
def test_production_entry_points_use_production_settings_and_refuse_to_start_without_a_secret_key(entry_point, tmp_path):
    refused = run([sys.executable, "-c", entry_point + "; " + PRINT_SETTINGS], bare_environment(VAR_DIR=str(tmp_path)))
    assert refused.returncode != 0
    assert "SECRET_KEY must be set" in refused.stderr
    started = run([sys.executable, "-c", entry_point + "; " + PRINT_SETTINGS],
                  bare_environment(VAR_DIR=str(tmp_path), SECRET_KEY=secrets.token_urlsafe(64)))
    assert started.returncode == 0, started.stderr
    assert started.stdout.split()[-2:] == ["config.settings.production", "False"]


def test_the_procfile_release_step_runs_manage_py_with_production_settings():
    release = next(line for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith("release:"))
    result = subprocess.run(["bash", "-c", release.split(":", 1)[1].split("&&", 1)[0] + ' && echo "$DJANGO_SETTINGS_MODULE"'],
                            env=bare_environment(), capture_output=True, text=True)
    assert result.stdout.strip() == "config.settings.production"


def test_development_settings_default_to_debug_off_and_still_serve_static_files(tmp_path):
    code = ("import django; django.setup(); from django.conf import settings as s; "
            "print(s.DEBUG, s.WHITENOISE_USE_FINDERS, s.ALLOWED_HOSTS)")
    result = run([sys.executable, "-c", code],
                 bare_environment(DJANGO_SETTINGS_MODULE="config.settings.development", VAR_DIR=str(tmp_path)))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[:2] == ["False", "True"]
    opted_in = run([sys.executable, "-c", code],
                   bare_environment(DJANGO_SETTINGS_MODULE="config.settings.development", VAR_DIR=str(tmp_path), DEBUG="true"))
    assert opted_in.stdout.split()[0] == "True"


def test_passwords_are_checked_against_common_numeric_similar_and_short_ones():
    from django.contrib.auth.password_validation import validate_password
    from django.core.exceptions import ValidationError

    user = UserFactory(username="margarethe")
    for weak in ("password123", "84736251093", "margarethe1", "x7!k"):
        with pytest.raises(ValidationError):
            validate_password(weak, user)
    validate_password("violet-harbour-mechanic", user)


def test_without_secret_key_make_run_uses_a_random_key_of_this_machine_never_a_public_one(tmp_path):
    code = ("import django; django.setup(); from django.conf import settings; print(settings.SECRET_KEY)")
    env = bare_environment(DJANGO_SETTINGS_MODULE="config.settings.development", VAR_DIR=str(tmp_path))
    first, second = (run([sys.executable, "-c", code], env).stdout.strip() for _ in range(2))
    assert len(first) >= 50 and first == second  # kept across restarts (sessions stay valid)
    key_file = tmp_path / "secret_key"
    assert key_file.read_text().strip() == first and (key_file.stat().st_mode & 0o077) == 0
    other_machine = run([sys.executable, "-c", code], {**env, "VAR_DIR": str(tmp_path / "other")}).stdout.strip()
    assert other_machine != first
