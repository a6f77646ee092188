"""Fixtures of the auto-labeller tests: the baseline LLM server, started for real on a free port.

Import them into a test module: ``from tests.autolabel_fixtures import baseline_llm, profile  # noqa: F401``.
"""

import json
import os
import re
import select
import subprocess
import sys
import time
import urllib.request

import pytest

from autolabel.models import LLMProfile
from tests.conftest import ROOT

# The server's first line (autolabel/management/commands/run_baseline_llm.py) names the port it listens on.
LISTENING = re.compile(r"listening on http://[^:/]+:(\d+)/")


class BaselineLLM:
    """A running ``manage.py run_baseline_llm`` process and its control endpoints."""

    def __init__(self, process, port):
        self.process = process
        self.port = port
        self.root = f"http://127.0.0.1:{port}"
        self.base_url = f"{self.root}/v1"

    def _post(self, path, payload):
        request = urllib.request.Request(self.root + path, data=json.dumps(payload).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def configure(self, delay=0.0, faults=None, retry_after=1.0, timeout_delay=30.0):
        """Set the delay and faults; also resets the request statistics."""
        return self._post("/_control/config", {"delay": delay, "faults": faults or {}, "retry_after": retry_after,
                                               "timeout_delay": timeout_delay, "reset_stats": True})

    def stats(self):
        with urllib.request.urlopen(self.root + "/_control/stats", timeout=10) as response:
            return json.loads(response.read())


def start_baseline(*args):
    """Start the server on a port the system gives it (``--port 0``) and read that port from its first line.

    A port found free here and handed to the server could be taken in between by another test process (four
    run at once, each with its live server and its own baseline server); the test would then talk to that one.
    """
    process = subprocess.Popen(
        [sys.executable, "manage.py", "run_baseline_llm", "--port", "0", "--batch-delay", "0.05", *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    deadline = time.monotonic() + 30
    output = b""
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"baseline server exited: {(output + process.stdout.read()).decode(errors='replace')}")
        # Raw reads of the pipe (no text buffer of our own that select could not see): lines may come together.
        ready, _, _ = select.select([process.stdout], [], [], 0.2)
        if ready:
            output += os.read(process.stdout.fileno(), 4096)
            listening = LISTENING.search(output.decode(errors="replace"))
            if listening:
                return BaselineLLM(process, int(listening.group(1)))
    process.kill()
    raise RuntimeError(f"baseline server did not start within 30 s: {output.decode(errors='replace')}")


@pytest.fixture(scope="session")
def baseline_server():
    server = start_baseline()
    yield server
    server.process.terminate()
    server.process.wait(10)


@pytest.fixture
def baseline_llm(baseline_server):
    """The session's baseline server, with no delay and no faults at the start of each test."""
    baseline_server.configure()
    yield baseline_server
    baseline_server.configure()


@pytest.fixture
def profile(baseline_llm, db):
    return LLMProfile.objects.create(
        name=f"baseline-{baseline_llm.port}", base_url=baseline_llm.base_url, default_model="baseline-lexical",
        api_key_env="", supports_n=True, supports_batch=True, concurrency=8, timeout_seconds=5, max_retries=4,
        input_price_per_million="2.5", output_price_per_million="10",
    )
