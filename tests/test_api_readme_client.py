"""The README's Python client example, run as written against a live server."""

import json
import os
import re
import subprocess
import sys

import pytest
from django.core.cache import cache

from annotator.vocabulary import Role
from tests.conftest import ROOT
from tests.factories import DEFAULT_PASSWORD, ProjectFactory, TurnFactory, member


def readme_client_code() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## REST API"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("login", ["token", "password"])
def test_the_readme_client_runs_against_a_live_server(live_server, tmp_path, login):
    cache.clear()
    project = ProjectFactory(slug="demo")
    for _ in range(2):
        TurnFactory(dialogue__project=project)
    lead = member(project, Role.LEAD, username="lead-with-script")
    env = {**os.environ, "ANNOTATOR_URL": live_server.url, "ANNOTATOR_PROJECT": "demo"}
    env.pop("ANNOTATOR_TOKEN", None)
    if login == "token":
        from rest_framework.authtoken.models import Token

        env["ANNOTATOR_TOKEN"] = Token.objects.create(user=lead).key
    else:
        env.update(ANNOTATOR_USER=lead.username, ANNOTATOR_PASSWORD=DEFAULT_PASSWORD)
    script = tmp_path / "client.py"
    script.write_text(readme_client_code())
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "next question kind" in result.stdout
    lines = (tmp_path / "gold.jsonl").read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["sentences"] for line in lines)
