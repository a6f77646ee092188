"""The Celery broker (a real Redis) crashes and restarts while an auto-label job runs.

Runs ``bench/broker_restart.py`` (a private redis-server, a real Celery worker, the baseline
LLM server) on a database of its own, and checks what it reports: the job finishes, nothing is
written twice, and the same worker takes a job sent after the restart.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.skipif(shutil.which("redis-server") is None,
                                 reason="needs the redis-server program (Debian package redis-server)"),
              pytest.mark.slow]  # a broker and a worker started and killed: tests/conftest.py starts it first


def test_a_broker_crash_during_a_job_loses_nothing_and_the_worker_carries_on(tmp_path):
    database = os.environ.get("DATABASE_URL", "")
    if database.startswith("postgres"):
        database = database.rsplit("/", 1)[0] + "/test_broker_restart"
    else:
        database = f"sqlite:///{tmp_path / 'broker-restart.sqlite3'}"
    figures_file = tmp_path / "figures.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    result = subprocess.run(
        [sys.executable, "bench/broker_restart.py", "--database-url", database, "--turns", "24",
         "--downtime", "3", "--json", str(figures_file)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert figures_file.exists(), result.stdout[-3000:] + result.stderr[-3000:]
    figures = json.loads(figures_file.read_text())
    failed = [name for name, ok in figures["checks"].items() if not ok]
    assert not failed, f"{failed}\n{result.stdout[-3000:]}"
    assert result.returncode == 0
    # The crash really happened in the middle of the job, and the worker noticed it.
    assert 0 < figures["turns_done_at_crash"] < figures["turns"]
    assert figures["worker_log_connection_errors"] > 0
