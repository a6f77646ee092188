"""`manage.py devserver`: web server and worker come up, the URL answers, a killed worker is started again while the
site keeps serving, Ctrl-C stops every child."""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT, wait_until

pytestmark = pytest.mark.slow


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def devserver_start(tmp_path):
    """`manage.py devserver` as `make run` starts it, on a database of the test's own; returns (process, port)."""
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "VAR_DIR": str(tmp_path / "var"),
           "CELERY_BROKER_URL": "filesystem://", "CACHE_URL": ""}
    env.pop("TEST_DATABASE_NAME", None)
    # As `make run` starts it: no settings module named (the Celery app alone would pick the production
    # settings, which refuse to start without a SECRET_KEY), no DEBUG.
    for name in ("DJANGO_SETTINGS_MODULE", "DEBUG", "SECRET_KEY"):
        env.pop(name, None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    port = free_port()
    out = open(tmp_path / "out.txt", "w")
    # Started with SIGINT ignored, as a background job of a script starts it (and as this test ran under
    # such a CI shell): Ctrl-C must stop it all the same. (exec keeps an ignored signal ignored; a
    # preexec_fn is not safe in a test process with threads.)
    argv = [sys.executable, "manage.py", "devserver", "--port", str(port), "--no-llm"]
    process = subprocess.Popen(
        [sys.executable, "-c", "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
         "os.execv(sys.argv[1], sys.argv[1:])", *argv],
        cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    return process, port


def child_pids(process):
    return [int(line.split()[0]) for line in subprocess.run(
        ["ps", "-o", "pid=", "--ppid", str(process.pid)], capture_output=True, text=True).stdout.splitlines()]


def devserver_stop(process):
    process.send_signal(signal.SIGINT)
    try:
        process.wait(60)
    except subprocess.TimeoutExpired:
        process.terminate()  # not left running beside the rest of the suite (SIGTERM stops its children)
        process.wait(30)
        raise


def test_devserver_serves_and_stops_its_children_on_ctrl_c(tmp_path):
    process, port = devserver_start(tmp_path)
    try:
        wait_until(lambda: "Press Ctrl-C to stop." in (tmp_path / "out.txt").read_text(), timeout=90,
                   message="devserver banner")
        text = (tmp_path / "out.txt").read_text()
        assert f"http://127.0.0.1:{port}/" in text and "annotator1" in text
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/") as response:
            assert response.status == 200
        # DEBUG is off by default, static files are served all the same.
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/static/js/app.js") as response:
            assert response.status == 200
        with pytest.raises(urllib.error.HTTPError) as not_found:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/no-such-page/")
        assert not_found.value.code in (302, 404)
        assert b"URLconf" not in not_found.value.read()  # no debug page listing every URL
        children = child_pids(process)
        assert len(children) == 2  # web server and worker
    finally:
        devserver_stop(process)
    assert "Stopped the web server, the worker" in (tmp_path / "out.txt").read_text()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{pid}") for pid in children):
        time.sleep(0.2)
    assert not [pid for pid in children if os.path.exists(f"/proc/{pid}")]


def test_a_killed_worker_is_started_again_and_the_site_keeps_serving(tmp_path):
    process, port = devserver_start(tmp_path)
    out = tmp_path / "out.txt"
    worker_log = tmp_path / "var" / "devserver-worker.log"
    try:
        wait_until(lambda: "Press Ctrl-C to stop." in out.read_text(), timeout=90, message="devserver banner")
        wait_until(lambda: "ready." in worker_log.read_text(), timeout=60, message="the worker to be ready")
        [worker] = [pid for pid in child_pids(process) if b"celery" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        [web] = [pid for pid in child_pids(process) if pid != worker]
        os.kill(worker, signal.SIGKILL)

        wait_until(lambda: "starting it again" in out.read_text(), timeout=30, message="the restart on the console")
        console = out.read_text()
        assert "the worker process stopped (exit -9)" in console
        wait_until(lambda: len(child_pids(process)) == 2 and worker not in child_pids(process), timeout=30,
                   message="a new worker process")
        assert process.poll() is None and web in child_pids(process)
        # Its log says why it starts again, and the new worker comes up after that line.
        wait_until(lambda: "ready." in worker_log.read_text().split("starting it again")[-1], timeout=60,
                   message="the new worker to be ready")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/") as response:
            assert response.status == 200
    finally:
        devserver_stop(process)
    assert "Stopped the web server, the worker" in out.read_text()


def test_a_web_port_that_is_the_llm_servers_is_refused_before_anything_starts(settings):
    """`make run PORT=8765` once served the site while the baseline LLM server failed to listen on the same
    port, restarted by the devserver over and over; now it is refused at once, naming the clash."""
    from django.core.management import CommandError, call_command

    settings.OPENAI_BASE_URL = "http://127.0.0.1:8765/v1"
    with pytest.raises(CommandError, match=r"port 8765 is where OPENAI_BASE_URL .* baseline LLM server listen"):
        call_command("devserver", "--port", "8765")
