"""The README's Python client example, run as written against a live server."""

import json
import os
import re
import subprocess
import sys

import pytest
from django.core.cache import cache

from annotator.domain.vocabulary import Role
from tests.conftest import ROOT
from tests.factories import DEFAULT_PASSWORD, ProjectFactory, TurnFactory, member


def readme_client_code() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## REST API"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("login", ["token", "password"])
def test_the_readme_client_runs_against_a_live_server(live_server, tmp_path, login):
    """As written: an annotator's run answers a question, a lead's run exports the gold."""
    cache.clear()
    project = ProjectFactory(slug="demo")
    for _ in range(2):
        TurnFactory(dialogue__project=project)
    script = tmp_path / "client.py"
    script.write_text(readme_client_code())

    def run_as(user):
        env = {**os.environ, "ANNOTATOR_URL": live_server.url, "ANNOTATOR_PROJECT": "demo"}
        env.pop("ANNOTATOR_TOKEN", None)
        if login == "token":
            from rest_framework.authtoken.models import Token

            env["ANNOTATOR_TOKEN"] = Token.objects.create(user=user).key
        else:
            env.update(ANNOTATOR_USER=user.username, ANNOTATOR_PASSWORD=DEFAULT_PASSWORD)
        result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True,
                                text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stdout

    assert "next question kind" in run_as(member(project, Role.ANNOTATOR, username="annotator-with-script"))
    assert not (tmp_path / "gold.jsonl").exists()
    assert "gold exported" in run_as(member(project, Role.LEAD, username="lead-with-script"))
    lines = (tmp_path / "gold.jsonl").read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["sentences"] for line in lines)
