"""A/B of the annotation flow's server CPU per labelled sentence: two source trees, interleaved rounds.

    .venv/bin/python bench/sync_ab.py --old /tmp/perf-base --new . --rounds 5 --turns 15

Each round runs, for each tree in turn (old, new, then new, old in the next round, so neither always goes
first), a fresh process of that tree's code that logs a new annotator in and works ``--turns`` turns of five
sentences exactly as the page does: ``POST /p/<slug>/work/next/`` (Start; a tree whose Submit opens the next turn
needs it once), ``GET /a/<id>/`` (the screen), one
JSON ``POST /a/<id>/sync/`` per labelled sentence (the steps of a random label's walk, the path, the seconds)
and ``POST /a/<id>/submit/``: the requests ``bench/load.py --sync`` sends, in the same proportions. Requests go
through Django's WSGI handler in process (every middleware, CSRF checked, session cookie), without the HTTP
server, so the figure is the application's own CPU (``time.process_time`` around each request) plus the
PostgreSQL backend's CPU (``psutil`` on ``pg_backend_pid()``, one kept connection) per labelled sentence.
One warm-up turn per process is not counted. Each tree has its own database on the shared PostgreSQL
(``--database-url``; created, migrated and filled once). The machine is shared: the report gives
every round's figures, the medians and the spread, and the load average.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this tree's bench package, also in a child that runs another tree's code
from bench.screen_page import SCREEN_URL_RE, csrf_token, screen_sentences, screen_version  # noqa: E402

SLUG = "sync-ab"
PASSWORD = "sync-ab-password-1"


# --- the child: one tree's code, one annotator ----------------------------------------------------------------

class Browser:
    """Requests straight into the WSGI handler, with cookies; CPU of each request counted while ``counting``."""

    def __init__(self, handler):
        self.handler, self.cookies, self.cpu, self.counting, self.requests = handler, {}, 0.0, False, 0
        self.by_kind = {}

    def request(self, method, path, *, form=None, json_body=None, htmx=False):
        body = b""
        environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": "", "SERVER_NAME": "127.0.0.1",
                   "SERVER_PORT": "80", "HTTP_HOST": "127.0.0.1", "wsgi.url_scheme": "http",
                   "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1", "wsgi.errors": sys.stderr,
                   "wsgi.multithread": False, "wsgi.multiprocess": True, "wsgi.run_once": False,
                   "wsgi.version": (1, 0)}
        if form is not None:
            body = urlencode(form).encode()
            environ["CONTENT_TYPE"] = "application/x-www-form-urlencoded"
        if json_body is not None:
            body = json.dumps(json_body).encode()
            environ["CONTENT_TYPE"] = "application/json"
        environ["CONTENT_LENGTH"] = str(len(body))
        environ["wsgi.input"] = io.BytesIO(body)
        if self.cookies:
            environ["HTTP_COOKIE"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if method == "POST" and "csrftoken" in self.cookies:
            environ["HTTP_X_CSRFTOKEN"] = self.cookies["csrftoken"]
        if htmx:
            environ["HTTP_HX_REQUEST"] = "true"
        status_headers = {}

        def start_response(status, headers, exc_info=None):
            status_headers["status"], status_headers["headers"] = int(status.split()[0]), headers

        started = time.process_time()
        result = self.handler(environ, start_response)
        try:
            content = b"".join(result)
        finally:
            if hasattr(result, "close"):
                result.close()
        if self.counting:
            spent = time.process_time() - started
            self.cpu += spent
            self.requests += 1
            kind = path.rstrip("/").rsplit("/", 1)[-1] if method == "POST" else "screen"
            self.by_kind[kind] = self.by_kind.get(kind, 0.0) + spent
        headers = status_headers["headers"]
        for name, value in headers:
            if name.lower() == "set-cookie":
                key, _, rest = value.strip().partition("=")
                self.cookies[key] = rest.split(";", 1)[0]
        return status_headers["status"], dict(headers), content.decode()


def child(args) -> None:
    tree = Path(args.tree).resolve()
    os.chdir(tree)
    sys.path.insert(0, str(tree))
    import django

    django.setup()
    from django.core.wsgi import get_wsgi_application

    from annotator.domain import protocol
    from annotator.domain.vocabulary import Label

    if args.setup:
        return setup(args)
    import psutil
    from django.contrib.auth import get_user_model
    from django.db import connection

    from annotator.domain.vocabulary import Role
    from annotator.models import Membership, Project

    user = get_user_model().objects.create_user(f"ab-{uuid.uuid4().hex[:12]}", password=PASSWORD)
    Membership.objects.create(project=Project.objects.get(slug=SLUG), user=user, role=Role.ANNOTATOR)
    browser = Browser(get_wsgi_application())
    status, _, page = browser.request("GET", "/accounts/login/")
    status, _, _ = browser.request("POST", "/accounts/login/", form={
        "username": user.username, "password": PASSWORD, "csrfmiddlewaretoken": csrf_token(page)})
    assert status == 302, status
    rng = random.Random(args.seed)
    labelled = 0

    opened_by_submit = None  # the screen the last submit opened (the code before went back to the queue)

    def turn():
        nonlocal labelled, opened_by_submit
        screen = opened_by_submit
        if screen is None:
            status, headers, _ = browser.request("POST", f"/p/{SLUG}/work/next/")
            screen = SCREEN_URL_RE.match(headers["Location"])
        assignment = int(screen.group(1))
        status, _, page = browser.request("GET", f"/a/{assignment}/")
        sentences = screen_sentences(page)
        version = screen_version(page)
        for sentence in sentences:
            label = rng.choice(list(Label))
            path = {str(step): str(value) for step, value in protocol.path_for_label(label).items()}
            steps = [{"action": "answer", "step": step, "value": value, "at": int(time.time() * 1000)}
                     for step, value in path.items()]
            body = {"version": version, "changes": [{"request_id": uuid.uuid4().hex, "sentence": sentence,
                                                     "steps": steps, "path": path,
                                                     "seconds": round(rng.uniform(1, 9) * len(steps), 2)}]}
            status, _, answer = browser.request("POST", f"/a/{assignment}/sync/", json_body=body)
            assert status == 200, (status, answer[:300])
            version = json.loads(answer)["version"]
            labelled += 1
        status, headers, _ = browser.request("POST", f"/a/{assignment}/submit/", htmx=True, form={
            "version": version, "request_id": uuid.uuid4().hex})
        assert status == 200 and "HX-Redirect" in headers, status
        opened_by_submit = SCREEN_URL_RE.match(headers["HX-Redirect"])

    turn()  # warm-up: imports, caches, the kept connection
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = psutil.Process(cursor.fetchone()[0])

    def backend_cpu():
        times = backend.cpu_times()
        return times.user + times.system

    labelled, database_before = 0, backend_cpu()
    browser.counting = True
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
    for _ in range(args.turns):
        turn()
    browser.counting = False
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.profile)
    database = backend_cpu() - database_before
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] == backend.pid, "the connection was not kept: backend CPU incomplete"
    print(json.dumps({"labelled": labelled, "requests": browser.requests,
                      "app_ms_by_request": {kind: round(cpu * 1000 / labelled, 2) for kind, cpu in browser.by_kind.items()},
                      "app_ms": browser.cpu * 1000 / labelled, "db_ms": database * 1000 / labelled}))


def setup(args) -> None:
    from annotator.models import Project
    from bench.synthetic import create_synthetic_project

    if Project.objects.filter(slug=SLUG).exists():
        return
    project, _ = create_synthetic_project(SLUG, turns=args.setup_turns, sentences_per_turn=5, reference_words=250,
                                          labelled=False, name="Sync A/B")
    project.overlap = 2
    project.save(update_fields=["overlap"])


# --- the parent: databases, interleaved rounds, report ------------------------------------------------------

def environment(database_url: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in {"DJANGO_ALLOW_ASYNC_UNSAFE", "TEST_DATABASE_NAME"}}
    env.update({"DJANGO_SETTINGS_MODULE": "config.settings.development", "DATABASE_URL": database_url,
                "DEBUG": "0", "SECRET_KEY": "sync-ab-" + uuid.uuid4().hex * 2, "LOG_LEVEL": "WARNING",
                "CONN_MAX_AGE": "600", "PYTHONHASHSEED": "0"})
    return env


def run_child(tree: str, database_url: str, *extra) -> str:
    out = subprocess.run([sys.executable, __file__, "--child", "--tree", tree, *extra], env=environment(database_url),
                         capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return out.stdout


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", help="the tree of the code before (a worktree or an archive)")
    parser.add_argument("--new", default=".", help="the tree of the code after")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turns", type=int, default=15, help="measured turns per process (5 sentences each)")
    parser.add_argument("--setup-turns", type=int, default=2000)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/",
                        help="server of the two databases (sync_ab_old, sync_ab_new), created if missing")
    parser.add_argument("--json")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--setup", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--tree", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--profile", help="with --child: write the measured turns' cProfile (CPU clock) here")
    args = parser.parse_args(argv)
    if args.child:
        child(args)
        return 0
    import psycopg

    trees = {"old": str(Path(args.old).resolve()), "new": str(Path(args.new).resolve())}
    urls = {name: args.database_url.rstrip("/") + f"/sync_ab_{name}" for name in trees}
    with psycopg.connect(args.database_url.rstrip("/") + "/postgres", autocommit=True) as admin:
        for name in trees:
            if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [f"sync_ab_{name}"]).fetchone():
                admin.execute(f"CREATE DATABASE sync_ab_{name}")
    for name, tree in trees.items():
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=tree,
                       env=environment(urls[name]), check=True)
        run_child(tree, urls[name], "--setup", "--setup-turns", str(args.setup_turns))
    results = {name: [] for name in trees}
    loads = []
    for number in range(args.rounds):
        order = ["old", "new"] if number % 2 == 0 else ["new", "old"]
        for name in order:
            loads.append(os.getloadavg()[0])
            figures = json.loads(run_child(trees[name], urls[name], "--turns", str(args.turns),
                                           "--seed", str(args.seed + number)).strip().splitlines()[-1])
            results[name].append(figures)
            print(f"round {number + 1} {name}: app {figures['app_ms']:.2f} + db {figures['db_ms']:.2f} = "
                  f"{figures['app_ms'] + figures['db_ms']:.2f} ms per labelled sentence "
                  f"({figures['labelled']} sentences, {figures['requests']} requests, load {loads[-1]:.1f})",
                  flush=True)
    report = {"load_average_1min": {"min": min(loads), "max": max(loads)}, "turns_per_process": args.turns}
    for name, rounds in results.items():
        app = [r["app_ms"] for r in rounds]
        db = [r["db_ms"] for r in rounds]
        total = [a + d for a, d in zip(app, db)]
        report[name] = {"app_ms_median": round(statistics.median(app), 2), "db_ms_median": round(statistics.median(db), 2),
                        "total_ms_median": round(statistics.median(total), 2),
                        "total_ms_range": [round(min(total), 2), round(max(total), 2)]}
    report["new_over_old"] = round(report["new"]["total_ms_median"] / report["old"]["total_ms_median"], 3)
    print(json.dumps(report, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps({"report": report, "rounds": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
