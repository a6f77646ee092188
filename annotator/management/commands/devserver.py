"""One command for a developer or a demo: web server + Celery worker (+ baseline LLM server).

The web server is the site: if it stops, everything stops. The worker and the LLM server are helpers: one
that stops is started again (said on the console and in its log), and the site keeps serving; a job its
worker was running is taken up again by the new worker once its lease lapses (docs/reliability.md).
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from urllib.parse import urlparse

from django.conf import settings
from django.core.management import get_commands, load_command_class
from django.core.management.base import BaseCommand, CommandError

# The processes started again when they stop; the web server is not among them (it is the site).
RESTARTED = ("worker", "llm")
# A helper that stops within this many seconds of its start is started again only after a pause that doubles
# each time (up to RESTART_PAUSE_MAX), so that one that cannot start does not spin.
QUICK_EXIT_SECONDS = 10
RESTART_PAUSE_MAX = 30


class Command(BaseCommand):
    help = (
        "Start the web server, a Celery worker and, when the run_baseline_llm command exists, the offline "
        "baseline LLM server; print the URL and the demo logins; start the worker or the LLM server again if it "
        "stops; stop them all on Ctrl-C."
    )

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--concurrency", type=int, default=2, help="Celery worker threads.")
        parser.add_argument("--no-llm", action="store_true", help="Do not start the baseline LLM server.")

    def handle(self, *args, port, host, concurrency, no_llm, **options):
        manage = [sys.executable, str(settings.BASE_DIR / "manage.py")]
        llm_port = urlparse(settings.OPENAI_BASE_URL).port
        if not no_llm and llm_port == port:
            # Said before anything starts: otherwise the site serves and the baseline server fails to listen
            # over and over, and the first job fails far from the cause.
            raise CommandError(f"port {port} is where OPENAI_BASE_URL ({settings.OPENAI_BASE_URL}) has the "
                               "baseline LLM server listen: serve on another port (make run PORT=…), or point "
                               "OPENAI_BASE_URL elsewhere, or pass --no-llm")
        children = []
        argvs, started_at, pauses = {}, {}, {}

        def start(name, argv, replacing=None):
            log = open(settings.VAR_DIR / f"devserver-{name}.log", "ab")
            # The settings this command runs with, named explicitly: the Celery app (and wsgi/asgi) default to
            # production settings, which refuse to start without a SECRET_KEY.
            env = dict(os.environ, PYTHONUNBUFFERED="1", DJANGO_SETTINGS_MODULE=settings.SETTINGS_MODULE)
            process = subprocess.Popen(argv, cwd=settings.BASE_DIR, stdout=log, stderr=subprocess.STDOUT,
                                       start_new_session=True, env=env)
            log.close()  # the child holds its own copy
            if replacing is None:
                children.append((name, process, log.name))
            else:
                children[replacing] = (name, process, log.name)
            argvs[name] = argv
            started_at[name] = time.monotonic()
            return process

        def stop(*_):
            for name, process, _log in reversed(children):
                if process.poll() is None:
                    os.killpg(process.pid, signal.SIGTERM)
            deadline = time.monotonic() + 10
            for name, process, _log in children:
                try:
                    process.wait(max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()

        def interrupted(signum, frame):
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, interrupted)
        # Ctrl-C stops everything even when the shell that started us ignored SIGINT (a background job
        # of a script: Python then leaves SIGINT ignored, and `kill -INT` did nothing).
        signal.signal(signal.SIGINT, interrupted)
        try:
            start("web", manage + ["runserver", f"{host}:{port}", "--noreload"])
            start("worker", [sys.executable, "-m", "celery", "-A", "config", "worker", "-l", "INFO",
                             "--pool", "threads", "--concurrency", str(concurrency), "--without-gossip",
                             "--without-mingle"])
            llm_url = None
            if not no_llm and "run_baseline_llm" in get_commands():
                argv, llm_url = self.baseline_llm_argv(manage)
                start("llm", argv)
            self.wait_for(host, port, children)
            self.print_banner(host, port, llm_url, children)
            parent = os.getppid()
            while True:
                for index, (name, process, log) in enumerate(children):
                    if process.poll() is None:
                        continue
                    if name not in RESTARTED:
                        raise CommandError(f"the {name} process stopped (exit {process.returncode}); see {log}")
                    pause = self.say_restart(name, process, log, time.monotonic() - started_at[name], pauses)
                    time.sleep(pause)
                    start(name, argvs[name], replacing=index)
                if os.getppid() != parent:
                    # Whoever started us (e.g. make, killed by a timeout) is gone: stop with it.
                    raise KeyboardInterrupt
                time.sleep(0.5)
        except KeyboardInterrupt:
            self.stdout.write("\nStopping…")
        finally:
            stop()
            self.stdout.write("Stopped the web server, the worker" + (" and the LLM server." if len(children) > 2 else "."))

    def say_restart(self, name, process, log, lived, pauses):
        """Say on the console and in its log that a stopped helper is started again; returns the pause first."""
        pause = min(RESTART_PAUSE_MAX, 2 * pauses.get(name, 0.5)) if lived < QUICK_EXIT_SECONDS else 0
        pauses[name] = pause or 0.5
        message = (f"the {name} process stopped (exit {process.returncode}) after {lived:.0f} s; "
                   f"starting it again{f' in {pause:.0f} s' if pause else ''} (its log: {log})")
        self.stderr.write(self.style.WARNING(f"devserver: {message}"))
        self.stderr.flush()
        with open(log, "a") as handle:
            handle.write(f"\n[devserver {time.strftime('%Y-%m-%d %H:%M:%S')}] {message}\n")
        return pause

    def baseline_llm_argv(self, manage):
        """The baseline server listens where OPENAI_BASE_URL points, when its command takes --port."""
        url = urlparse(settings.OPENAI_BASE_URL)
        argv = manage + ["run_baseline_llm"]
        command = load_command_class(get_commands()["run_baseline_llm"], "run_baseline_llm")
        options = {s for action in command.create_parser("manage.py", "run_baseline_llm")._actions
                   for s in action.option_strings}
        if "--port" in options and url.port:
            argv += ["--port", str(url.port)]
        if "--host" in options and url.hostname:
            argv += ["--host", url.hostname]
        return argv, settings.OPENAI_BASE_URL

    def wait_for(self, host, port, children, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, process, log in children:
                if process.poll() is not None:
                    raise CommandError(f"the {name} process stopped (exit {process.returncode}); see {log}")
            try:
                with socket.create_connection((host, port), timeout=1):
                    return
            except OSError:
                time.sleep(0.3)
        raise CommandError(f"the web server did not answer on {host}:{port} within {timeout}s")

    def print_banner(self, host, port, llm_url, children):
        self.stdout.write(self.style.SUCCESS(f"\nThe annotator is running at http://{host}:{port}/"))
        self.stdout.write(f"Admin: http://{host}:{port}/admin/")
        if llm_url:
            self.stdout.write(f"Baseline LLM server: {llm_url}")
        demo = settings.BASE_DIR / "fixtures" / "demo" / "project.json"
        if demo.exists():
            self.stdout.write("Demo logins (username / password / role):")
            for entry in json.loads(demo.read_text())["users"]:
                role = entry["role"] or "admin"
                self.stdout.write(f"  {entry['username']:<12} {entry['password']:<18} {role}")
        self.stdout.write("Logs: " + ", ".join(log for _, _, log in children))
        self.stdout.write("Press Ctrl-C to stop.")
        self.stdout.flush()
