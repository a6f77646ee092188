"""Load test: simulated annotators working through the annotation screen's HTTP requests.

What it does, in one command (``.venv/bin/python bench/load.py``):

1. starts a private PostgreSQL cluster (never the shared one), migrates it and
   creates a project with ``--turns`` turns of ``--sentences`` sentences and
   ``--annotators`` annotator accounts;
2. serves the app on loopback (DEBUG off) with gunicorn as deployed, or Granian for comparison (``--server``);
3. runs the annotators for ``--duration`` seconds, each in its own HTTP
   session (asyncio, bench/lean_http.py: one kept-alive connection each), sending exactly what the htmx page sends: the
   login form, ``POST /p/<slug>/work/next/`` (Start), ``GET /a/<id>/`` (the
   screen), one ``POST /a/<id>/answer/`` per protocol decision with the
   version the page last saw, a fresh ``request_id`` and the ``HX-Request`` and
   ``X-CSRFToken`` headers, and ``POST /a/<id>/submit/`` when every sentence
   has a label (the per-step requests the page sent before issue 15 and the API
   still takes). ``--sync`` sends what the page sends now instead: the decisions
   of a sentence at the same pace, kept by the client, then one ``POST
   /a/<id>/sync/`` (JSON) when the sentence has its label, with the version the
   last answer gave and the steps taken. Like the page, a request that fails on the
   network or with a 5xx/429 is retried with the same ``request_id`` (backoff
   0.5 s doubling, at most 8 s);
4. reports decisions/s, latency percentiles of the requests that save (per
   decision, or per sentence with ``--sync``; first attempt to final answer, so a
   retried request counts with its whole wait), errors, the server requests and
   the server CPU per labelled sentence;
5. checks the database: every acknowledged decision stored exactly once, the
   final label of each sentence the one the annotator chose, every submitted
   turn complete, no turn with more live slots than the project's overlap.

``--fault db-restart`` restarts (crashes) the private PostgreSQL during the run,
``--fault-at`` seconds after the start, down for ``--downtime`` seconds.
``--rate`` is each annotator's pace in decisions per second (a person takes
seconds per decision; 4/s per annotator x 50 = the 200/s goal); ``--rate 0``
sends as fast as the server answers (closed loop, for the saturation figure).

``--floor`` sends the decisions to the least a decision request can cost on this
stack (bench/floor/urls.py) instead; ``--with-screens`` keeps each turn's real
Start, screen and submit requests around them; ``--floor-extra-ms N`` adds N ms
of server CPU to each floor request. Together they trace how the latency at the
offered rate grows with the CPU a decision costs (docs/reliability.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.infra import (  # noqa: E402
    PYTHON, ROOT, Granian, Gunicorn, PrivatePostgres, app_env, machine_speed_ms, manage, percentile)
from bench.lean_http import LeanClient  # noqa: E402

SLUG = "load"
PASSWORD = "load-test-password-4711"
VERSION_RE = re.compile(r'id="decision-panel"[^>]*?data-version="(\d+)"', re.S)
SENTENCE_LINK_RE = re.compile(r'<a[^>]*class="sentence[^"]*"[^>]*data-sentence="(\d+)"|<a[^>]*data-sentence="(\d+)"[^>]*class="sentence')
CSRF_INPUT_RE = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


# --- set-up (runs in a subprocess with the app's environment) ---------------------------------------

def setup(annotators: int, turns: int, sentences: int, overlap: int) -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password

    from annotator.models import Membership
    from annotator.domain.vocabulary import Role
    from bench.synthetic import create_synthetic_project

    project, summary = create_synthetic_project(SLUG, turns=turns, sentences_per_turn=sentences,
                                                reference_words=250, labelled=False, name="Load test")
    project.overlap = overlap
    project.save(update_fields=["overlap"])
    User = get_user_model()
    password = make_password(PASSWORD)
    users = User.objects.bulk_create([User(username=f"annotator{n:03d}", password=password) for n in range(annotators)])
    Membership.objects.bulk_create([Membership(project=project, user=u, role=Role.ANNOTATOR) for u in users])
    print(json.dumps({"turns": summary.turns, "sentences": summary.sentences, "annotators": len(users)}))


# --- the simulated annotators ------------------------------------------------------------------------

@dataclass
class Stats:
    latencies: list = field(default_factory=list)  # seconds, answer requests (decisions)
    other_latencies: list = field(default_factory=list)  # screen loads, next, submit
    decisions: int = 0
    decision_times: list = field(default_factory=list)  # monotonic time of each acknowledgement
    errors: Counter = field(default_factory=Counter)  # final failures, by kind
    retried_attempts: Counter = field(default_factory=Counter)  # failed attempts that were retried
    acked: dict = field(default_factory=dict)  # request_id -> (assignment_id, sentence_id, step, value)
    chosen: dict = field(default_factory=dict)  # (assignment_id, sentence_id) -> label, when every step was acked
    submitted: list = field(default_factory=list)  # assignment ids
    first_failure: float | None = None
    last_failure: float | None = None
    recovered_at: float | None = None
    error_samples: list = field(default_factory=list)
    requests: Counter = field(default_factory=Counter)  # attempts sent to the server in the window, by kind


class Annotator:
    labels_sentences = True  # False for the floor, whose decisions label nothing

    def __init__(self, number: int, base_url: str, stats: Stats, deadline: float, rate: float, seed: int):
        self.username = f"annotator{number:03d}"
        self.base_url = base_url
        self.stats = stats
        self.deadline = deadline
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self.rng = random.Random(seed)
        self.csrf = ""
        self.client = None
        self.all_logged_in: asyncio.Event | None = None
        self.login_turns: asyncio.Semaphore | None = None
        self.next_slot = 0.0

    async def start_pacing(self):
        """A random offset, so that the annotators' decisions do not arrive in lockstep."""
        await asyncio.sleep(self.rng.random() * max(self.interval, 0.05))
        self.next_slot = time.monotonic()

    async def wait_for_slot(self):
        """Keep the pace of ``--rate``; a slot missed by over a second is not made up with a burst."""
        if self.interval:
            self.next_slot = max(self.next_slot + self.interval, time.monotonic() - 1.0)
            delay = self.next_slot - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)

    def acknowledged(self, request_id: str, elapsed: float, what: tuple):
        self.stats.decisions += 1
        self.stats.decision_times.append(time.monotonic())
        self.stats.latencies.append(elapsed)
        self.stats.acked[request_id] = what

    async def request(self, method: str, path: str, *, data=None, json_body=None, htmx=False, kind="other",
                      give_up=None):
        """One logical request, retried like the page does until it gets an answer (or the run is over)."""
        headers = {"X-CSRFToken": self.csrf} if method == "POST" else {}
        if htmx:
            headers["HX-Request"] = "true"
        started = time.monotonic()
        attempt = 0
        give_up = give_up or (self.deadline + 30)
        while True:
            self.stats.requests[kind] += 1
            try:
                response = await self.client.request(method, path, data=data, headers=headers, json_body=json_body)
            except Exception as error:  # noqa: BLE001 - any network failure: retry with the same request id
                failure = f"network: {type(error).__name__}"
            else:
                if response.status_code < 500 and response.status_code != 429:
                    elapsed = time.monotonic() - started
                    if attempt and self.stats.recovered_at is None and self.stats.first_failure is not None:
                        self.stats.recovered_at = time.monotonic()
                    return response, elapsed
                failure = f"HTTP {response.status_code}"
                if len(self.stats.error_samples) < 5:
                    self.stats.error_samples.append(f"{method} {path}: {response.status_code} {response.text[:300]!r}")
            now = time.monotonic()
            self.stats.retried_attempts[f"{kind}: {failure}"] += 1
            self.stats.first_failure = self.stats.first_failure or now
            self.stats.last_failure = now
            if now > give_up:
                self.stats.errors[f"{kind}: gave up after {failure}"] += 1
                return None, now - started
            await asyncio.sleep(min(0.5 * 2 ** attempt, 8.0))
            attempt += 1

    async def login(self):
        try:
            async with self.login_turns:
                await self._login()
        finally:
            self.logged_in.set()

    async def _login(self):
        response, _ = await self.request("GET", "/accounts/login/")
        self.csrf = CSRF_INPUT_RE.search(response.text).group(1)
        response, _ = await self.request(
            "POST", "/accounts/login/",
            data={"username": self.username, "password": PASSWORD, "csrfmiddlewaretoken": self.csrf},
        )
        if response is None or response.status_code != 302:
            raise RuntimeError(f"{self.username} could not log in: {response and response.status_code}")
        self.csrf = self.client.cookies.get("csrftoken") or self.csrf

    async def run(self):
        async with LeanClient(self.base_url, timeout=30.0) as self.client:
            await self.login()
            await self.all_logged_in.wait()
            await self.start_pacing()
            while time.monotonic() < self.deadline:
                if not await self.annotate_turn():
                    return

    async def annotate_turn(self) -> bool:
        """Start, the screen, every sentence walked through the protocol, submit; False to stop."""
        from annotator.domain import protocol
        from annotator.domain.vocabulary import Label

        opened = await self.open_turn()
        if opened is None:
            return False
        assignment_id, sentence_ids, version = opened
        for sentence_id in sentence_ids:
            label = self.rng.choice(list(Label))
            for step, value in protocol.path_for_label(label).items():
                await self.wait_for_slot()
                if time.monotonic() >= self.deadline:
                    return False
                version = await self.decide(assignment_id, sentence_id, str(step), str(value), version)
                if version is None:
                    return False
            if self.labels_sentences:
                self.stats.chosen[(assignment_id, sentence_id)] = label.value
        return await self.submit(assignment_id, version)

    async def open_turn(self) -> tuple[int, list[int], int] | None:
        """Start and the screen: the assignment, its sentences and the version shown, or None to stop."""
        assignment_id = await self.start()
        if assignment_id is None:
            return None
        response, elapsed = await self.request("GET", f"/a/{assignment_id}/", kind="screen")
        if response is None:
            return None
        self.stats.other_latencies.append(elapsed)
        sentence_ids = list(dict.fromkeys(int(a or b) for a, b in SENTENCE_LINK_RE.findall(response.text)))
        if not sentence_ids:
            self.stats.errors["screen: no sentences found"] += 1
            return None
        return assignment_id, sentence_ids, int(VERSION_RE.search(response.text).group(1))

    async def start(self) -> int | None:
        """Start / Continue: the id of the assignment the server hands out, or None to stop."""
        response, elapsed = await self.request("POST", f"/p/{SLUG}/work/next/", kind="next")
        if response is None:
            return None
        self.stats.other_latencies.append(elapsed)
        location = response.headers.get("location", "")
        match = re.match(r".*/a/(\d+)/$", location)
        if not match:
            self.stats.errors[f"next: no assignment ({response.status_code} {location})"] += 1
            return None
        return int(match.group(1))

    async def decide(self, assignment_id: int, sentence_id: int, step: str, value: str, version: int) -> int | None:
        """One protocol decision, as the panel sends it; the version the answer shows, or None to stop."""
        request_id = uuid.uuid4().hex
        data = {"sentence": sentence_id, "step": step, "value": value, "version": version,
                "request_id": request_id, "seconds": f"{self.rng.uniform(1, 9):.2f}"}
        response, elapsed = await self.request("POST", f"/a/{assignment_id}/answer/", data=data, htmx=True,
                                               kind="answer")
        if response is None:
            return None
        if response.status_code != 200:
            self.stats.errors[f"answer: HTTP {response.status_code}"] += 1
            if len(self.stats.error_samples) < 5:
                self.stats.error_samples.append(f"answer {response.status_code}: {response.text[:300]!r}")
            return None
        self.acknowledged(request_id, elapsed, (assignment_id, sentence_id, step, value))
        return int(VERSION_RE.search(response.text).group(1))

    async def submit(self, assignment_id: int, version: int) -> bool:
        data = {"version": version, "request_id": uuid.uuid4().hex}
        response, elapsed = await self.request("POST", f"/a/{assignment_id}/submit/", data=data, htmx=True,
                                               kind="submit")
        if response is None:
            return False
        self.stats.other_latencies.append(elapsed)
        if response.status_code == 200 and response.headers.get("HX-Redirect"):
            self.stats.submitted.append(assignment_id)
            return True
        self.stats.errors[f"submit: HTTP {response.status_code}"] += 1
        return False


class SyncAnnotator(Annotator):
    """``--sync``: what the annotation page sends now (static/js/annotation_outbox.js), one request per sentence.

    The decisions keep the same pace (the annotator's keys); the page keeps them and
    sends the sentence's walk when it has its label, one change per request, with the
    version the last answer gave. The request ids of the steps (``<id>:<n>``) are the
    ones the audit history stores, so the database checks see every decision.
    """

    async def annotate_turn(self) -> bool:
        from annotator.domain import protocol
        from annotator.domain.vocabulary import Label

        opened = await self.open_turn()
        if opened is None:
            return False
        assignment_id, sentence_ids, version = opened
        for sentence_id in sentence_ids:
            label = self.rng.choice(list(Label))
            path = {str(step): str(value) for step, value in protocol.path_for_label(label).items()}
            steps, seconds = [], 0.0
            for step, value in path.items():
                await self.wait_for_slot()
                if time.monotonic() >= self.deadline:
                    return False
                steps.append({"action": "answer", "step": step, "value": value, "at": int(time.time() * 1000)})
                seconds += self.rng.uniform(1, 9)
            version = await self.save_sentence(assignment_id, sentence_id, steps, path, seconds, version)
            if version is None:
                return False
            self.stats.chosen[(assignment_id, sentence_id)] = label.value
        return await self.submit(assignment_id, version)

    async def save_sentence(self, assignment_id, sentence_id, steps, path, seconds, version) -> int | None:
        request_id = uuid.uuid4().hex
        body = {"version": version, "changes": [{"request_id": request_id, "sentence": sentence_id, "steps": steps,
                                                 "path": path, "seconds": round(seconds, 2)}]}
        response, elapsed = await self.request("POST", f"/a/{assignment_id}/sync/", json_body=body, kind="sync")
        if response is None:
            return None
        if response.status_code != 200:
            self.stats.errors[f"sync: HTTP {response.status_code}"] += 1
            if len(self.stats.error_samples) < 5:
                self.stats.error_samples.append(f"sync {response.status_code}: {response.text[:300]!r}")
            return None
        self.stats.latencies.append(elapsed)
        for number, step in enumerate(steps, start=1):
            self.stats.decisions += 1
            self.stats.decision_times.append(time.monotonic())
            self.stats.acked[f"{request_id}:{number}"] = (assignment_id, sentence_id, step["step"], step["value"])
        return json.loads(response.text)["version"]


class FloorAnnotator(Annotator):
    """``--floor``: decisions sent to ``POST /floor/<id>/`` (bench/floor/urls.py), at the same pace.

    Alone, after one Start; with ``--with-screens``, inside each turn's real Start,
    screen and submit requests, as many as the protocol walk would send. That
    submit is refused (the floor labels nothing), so Start hands back the same turn.
    """

    labels_sentences = False
    with_screens = False

    async def run(self):
        if self.with_screens:
            return await super().run()
        async with LeanClient(self.base_url, timeout=30.0) as self.client:
            await self.login()
            await self.all_logged_in.wait()
            assignment_id = await self.start()
            if assignment_id is None:
                return
            await self.start_pacing()
            while time.monotonic() < self.deadline:
                await self.wait_for_slot()
                if await self.decide(assignment_id, None, "", "", 0) is None:
                    return

    async def decide(self, assignment_id, sentence_id, step, value, version):
        request_id = uuid.uuid4().hex
        response, elapsed = await self.request(
            "POST", f"/floor/{assignment_id}/", data={"n": "1", "request_id": request_id}, htmx=True, kind="floor")
        if response is None or response.status_code != 200:
            self.stats.errors[f"floor: {response and response.status_code}"] += 1
            return None
        self.acknowledged(request_id, elapsed, (assignment_id, None, "", ""))
        return version

    async def submit(self, assignment_id, version):
        response, elapsed = await self.request("POST", f"/a/{assignment_id}/submit/", htmx=True, kind="submit",
                                               data={"version": version, "request_id": uuid.uuid4().hex})
        # Refused: nothing is labelled (422), or the floor's writes moved the version on (409).
        if response is None or response.status_code not in (409, 422):
            self.stats.errors[f"submit at the floor: {response and response.status_code}"] += 1
            return False
        self.stats.other_latencies.append(elapsed)
        return True


async def run_annotators(base_url: str, count: int, duration: float, rate: float, seed: int,
                         on_start=None, floor: bool = False, with_screens: bool = False,
                         sync: bool = False) -> tuple[Stats, float, float]:
    stats = Stats()
    kind = FloorAnnotator if floor else SyncAnnotator if sync else Annotator
    annotators = [kind(n, base_url, stats, float("inf"), rate, seed + n) for n in range(count)]
    all_logged_in = asyncio.Event()
    # PBKDF2 makes a login cost about a second of server CPU on a slow day: fifty at once time out
    # and retry (a fresh hash each time). A few at a time, as many as the server has workers.
    login_turns = asyncio.Semaphore(4)
    for annotator in annotators:
        if floor:
            annotator.with_screens = with_screens
        annotator.logged_in = asyncio.Event()
        annotator.all_logged_in = all_logged_in
        annotator.login_turns = login_turns

    async def start_clock():
        # Logging in (PBKDF2 on the server) is not part of the measured window.
        await asyncio.gather(*(a.logged_in.wait() for a in annotators))
        # Failures while logging in are not part of the fault figures of the measured window.
        stats.first_failure = stats.last_failure = stats.recovered_at = None
        stats.requests.clear()
        if on_start is not None:
            on_start()
        deadline = time.monotonic() + duration
        for annotator in annotators:
            annotator.deadline = deadline
        all_logged_in.set()
        return time.monotonic()

    clock = asyncio.create_task(start_clock())
    results = await asyncio.gather(*(a.run() for a in annotators), return_exceptions=True)
    started = await clock
    for result in results:
        if isinstance(result, Exception):
            stats.errors[f"annotator crashed: {type(result).__name__}: {result}"] += 1
    return stats, started, time.monotonic()


# --- checks in the database --------------------------------------------------------------------------

def verify(database_url: str, stats: Stats) -> dict:
    import psycopg

    from annotator.domain import protocol

    url = database_url.replace("postgres://", "postgresql://", 1)
    problems = {}
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        ids = list(stats.acked)
        cur.execute(
            "SELECT request_id, count(*) FROM annotator_annotationevent WHERE request_id = ANY(%s) GROUP BY request_id",
            (ids,),
        )
        counts = dict(cur.fetchall())
        problems["acknowledged_missing"] = sum(1 for r in ids if r not in counts)
        problems["acknowledged_stored_twice"] = sum(1 for r in ids if counts.get(r, 0) > 1)
        cur.execute(
            "SELECT count(*) FROM (SELECT assignment_id, request_id FROM annotator_annotationevent "
            "WHERE request_id <> '' GROUP BY assignment_id, request_id HAVING count(*) > 1) AS d"
        )
        problems["duplicate_request_ids"] = cur.fetchone()[0]
        # The final label of every sentence the annotator finished is the label chosen.
        keys = list(stats.chosen)
        cur.execute(
            "SELECT assignment_id, sentence_id, label, path FROM annotator_sentenceannotation "
            "WHERE assignment_id = ANY(%s)",
            ([a for a, _ in keys],),
        )
        stored = {(a, s): (label, path) for a, s, label, path in cur.fetchall()}
        wrong = 0
        for key, label in stats.chosen.items():
            got = stored.get(key)
            if got is None or got[0] != label or protocol.label_of(got[1]) != label:
                wrong += 1
        problems["finished_sentences_with_a_different_label"] = wrong
        # Every submitted turn is complete: each of its sentences has a label.
        cur.execute(
            """
            SELECT a.id FROM annotator_assignment a
            JOIN annotator_sentence s ON s.turn_id = a.turn_id
            LEFT JOIN annotator_sentenceannotation sa ON sa.assignment_id = a.id AND sa.sentence_id = s.id
            WHERE a.status = 'submitted' AND (sa.id IS NULL OR sa.label = '')
            GROUP BY a.id
            """
        )
        problems["submitted_turns_incomplete"] = len(cur.fetchall())
        cur.execute("SELECT id FROM annotator_assignment WHERE status = 'submitted' AND id = ANY(%s)",
                    (stats.submitted,))
        problems["acknowledged_submits_not_submitted"] = len(stats.submitted) - len(cur.fetchall())
        cur.execute(
            """
            SELECT count(*) FROM (
              SELECT a.turn_id FROM annotator_assignment a
              JOIN annotator_project p ON p.id = a.project_id
              WHERE a.status IN ('assigned', 'in_progress', 'submitted') AND NOT a.is_qualification
              GROUP BY a.turn_id, p.overlap HAVING count(*) > p.overlap
            ) AS o
            """
        )
        problems["turns_over_overlap"] = cur.fetchone()[0]
        cur.execute("SELECT count(*) FROM annotator_annotationevent WHERE action = 'answer'")
        problems_info = {"answer_events_in_db": cur.fetchone()[0]}
        cur.execute("SELECT count(*), count(DISTINCT annotator_id) FROM annotator_assignment")
        assignments, holders = cur.fetchone()
        problems_info.update({"assignments": assignments, "annotators_with_work": holders})
    return {"problems": problems, "info": problems_info}


def server_cpu_seconds(server: Gunicorn | Granian, pg: PrivatePostgres) -> dict:
    """CPU seconds used so far by the app (server process and workers) and the database (postmaster and backends).

    The machine is shared with other engineers' test runs, so wall-clock
    figures depend on their load; CPU time per decision does much less.
    """
    import psutil

    def tree(pid):
        total = 0.0
        try:
            root = psutil.Process(pid)
            for proc in [root, *root.children(recursive=True)]:
                try:
                    times = proc.cpu_times()
                    total += times.user + times.system + times.children_user + times.children_system
                except psutil.NoSuchProcess:
                    pass
        except psutil.NoSuchProcess:
            pass
        return total

    pg_pid = None
    pid_file = pg.data / "postmaster.pid"
    if pid_file.exists():
        pg_pid = int(pid_file.read_text().split()[0])
    return {"app": tree(server.proc.pid), "database": tree(pg_pid) if pg_pid else 0.0}


# --- the run -----------------------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of annotation")
    parser.add_argument("--rate", type=float, default=4.0, help="decisions/s per annotator; 0 = closed loop")
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--sentences", type=int, default=5)
    parser.add_argument("--overlap", type=int, default=2)
    parser.add_argument("--workers", type=int, default=4, help="server worker processes")
    parser.add_argument("--threads", type=int, default=1, help="threads per worker")
    parser.add_argument("--server", choices=["gunicorn", "granian"], default="gunicorn",
                        help="the WSGI server: gunicorn as deployed (Procfile), or Granian for comparison "
                             "(keeps connections open, parses HTTP in Rust; docs/benchmarks.md)")
    parser.add_argument("--worker-class", default="sync", help="gunicorn's worker class (sync closes the connection "
                        "after each request; gthread keeps it open)")
    parser.add_argument("--fault", choices=["none", "db-restart"], default="none")
    parser.add_argument("--fault-at", type=float, default=20.0)
    parser.add_argument("--downtime", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--statement-stats", action="store_true",
                        help="report the statements that took the database's time (pg_stat_statements)")
    parser.add_argument("--sync", action="store_true",
                        help="send what the annotation page sends now: one /a/<id>/sync/ per labelled sentence "
                             "(its decisions at the same pace) instead of one /answer/ per decision")
    parser.add_argument("--floor", action="store_true",
                        help="measure the floor instead: the least a decision request costs on this stack "
                             "(bench/floor/urls.py)")
    parser.add_argument("--with-screens", action="store_true",
                        help="with --floor: also send each turn's real Start, screen and submit requests (the "
                             "decisions still go to the floor): the least the whole annotation flow costs")
    parser.add_argument("--floor-extra-ms", type=float, default=0.0,
                        help="with --floor: each request also burns this much of the server's CPU, to trace "
                             "latency against the CPU a decision costs")
    args = parser.parse_args(argv)

    speed = machine_speed_ms()
    print(f"machine speed: {speed} ms for the reference work (bench/infra.py machine_speed_ms; lower is faster)",
          flush=True)
    pg = PrivatePostgres(statement_stats=args.statement_stats)
    server = None
    try:
        print(f"private PostgreSQL on 127.0.0.1:{pg.port} ({pg.dir})", flush=True)
        pg.start()
        pg.create_database()
        env = app_env(pg.url, CONN_MAX_AGE=600)
        manage(env, "migrate", "--noinput", "-v", "0")
        t0 = time.monotonic()
        import subprocess

        out = subprocess.run([PYTHON, __file__, "--setup", str(args.annotators), str(args.turns), str(args.sentences),
                              str(args.overlap)], cwd=ROOT, env=env, capture_output=True, text=True)
        if out.returncode:
            raise RuntimeError(out.stderr)
        print(f"set-up: {out.stdout.strip()} in {time.monotonic() - t0:.1f}s", flush=True)
        if args.floor:
            env["DJANGO_SETTINGS_MODULE"] = "bench.floor.settings"
            env["FLOOR_EXTRA_CPU_MS"] = str(args.floor_extra_ms)
        if args.server == "granian":
            server = Granian(env, workers=args.workers, threads=args.threads)
        else:
            server = Gunicorn(env, workers=args.workers, threads=args.threads, worker_class=args.worker_class)
        server.start()
        print(f"{args.server} on {server.url}: {args.workers} workers x {args.threads} threads", flush=True)

        fault_log = {}

        def restart():
            time.sleep(args.fault_at)
            fault_log["down_at"] = time.monotonic()
            pg.restart(downtime=args.downtime, mode="immediate")
            fault_log["up_at"] = time.monotonic()

        def window_starts():
            # After every annotator has logged in: snapshot CPU, start the fault clock.
            cpu_before.update(server_cpu_seconds(server, pg), client=time.process_time())
            print(f"all {args.annotators} annotators logged in: the measured window starts", flush=True)
            if args.fault == "db-restart":
                threading.Thread(target=restart, daemon=True).start()

        import os

        import django  # the client side uses the protocol module only (no database)

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.development")
        django.setup()
        cpu_before = {}
        stats, started, ended = asyncio.run(run_annotators(
            server.url, args.annotators, args.duration, args.rate, args.seed,
            on_start=window_starts, floor=args.floor, with_screens=args.with_screens, sync=args.sync))
        cpu_after = {**server_cpu_seconds(server, pg), "client": time.process_time()}
        wall = ended - started
        checks = verify(pg.url, stats)
        top_statements = pg.top_statements() if args.statement_stats else None
    finally:
        if server:
            server.stop()
        pg.destroy()

    window = [t for t in stats.decision_times if started <= t]
    labelled = len(stats.chosen)
    saving_requests = stats.requests["sync"] + stats.requests["answer"]
    figures = {
        "what": (("annotation screen, one /sync/ per sentence" if args.sync else "annotation screen, one /answer/ "
                  "per decision") if not args.floor else
                 "floor (bench/floor/urls.py)" + (" inside each turn's Start, screen and submit" if args.with_screens else "")
                 + f" + {args.floor_extra_ms} ms of CPU per floor request"),
        "annotators": args.annotators,
        "rate_per_annotator": args.rate,
        "server": (f"granian {args.workers}x{args.threads}" if args.server == "granian"
                   else f"gunicorn {args.workers}x{args.threads} {args.worker_class}"),
        "duration_s": round(wall, 1),
        "decisions": stats.decisions,
        "decisions_per_s": round(stats.decisions / wall, 1) if wall else 0,
        "latency_ms": {
            "p50": round(percentile(stats.latencies, 50) * 1000, 1),
            "p95": round(percentile(stats.latencies, 95) * 1000, 1),
            "p99": round(percentile(stats.latencies, 99) * 1000, 1),
            "max": round(max(stats.latencies, default=0) * 1000, 1),
        },
        "labelled_sentences": labelled,
        # Attempts sent in the measured window (a retried request counts each time): the requests that save
        # (answer / sync), and all of them (with each turn's Start, screen and submit).
        "server_requests_per_labelled_sentence": {
            "saving": round(saving_requests / labelled, 2) if labelled else None,
            "all": round(sum(stats.requests.values()) / labelled, 2) if labelled else None,
        },
        "requests_by_kind": dict(stats.requests),
        "server_cpu_ms_per_labelled_sentence": {
            part: round((cpu_after[part] - cpu_before[part]) * 1000 / labelled, 1) if labelled else None
            for part in ("app", "database")
        },
        "server_cpu_ms_per_decision": {
            part: round((cpu_after[part] - cpu_before[part]) * 1000 / max(stats.decisions, 1), 1)
            for part in ("app", "database")
        },
        # The load generator runs on the same two cores: what it uses is not available to the server.
        "load_generator_cpu_ms_per_decision": round(
            (cpu_after["client"] - cpu_before["client"]) * 1000 / max(stats.decisions, 1), 1),
        "load_average_1min_at_end": round(__import__("os").getloadavg()[0], 1),
        # Before and after the run: the shared machine's speed changes by a factor of three within minutes.
        "machine_speed_ms": {"before": speed, "after": machine_speed_ms()},
        "other_requests_p95_ms": round(percentile(stats.other_latencies, 95) * 1000, 1),
        "submitted_turns": len(stats.submitted),
        "errors": sum(stats.errors.values()),
        "error_kinds": dict(stats.errors),
        "retried_attempts": dict(stats.retried_attempts),
        "error_samples": stats.error_samples,
        "status_of_failed_attempts": dict(Counter(k.split(": ", 1)[1] for k in stats.retried_attempts.elements())),
        **checks,
    }
    if args.fault == "db-restart" and fault_log:
        figures["fault"] = {
            "database_down_at_s": round(fault_log["down_at"] - started, 1),
            "database_up_after_s": round(fault_log.get("up_at", ended) - fault_log["down_at"], 1),
            "first_failed_attempt_s": round((stats.first_failure or started) - started, 1) if stats.first_failure else None,
            "last_failed_attempt_s": round((stats.last_failure or started) - started, 1) if stats.last_failure else None,
            "first_success_after_a_failure_s": round(stats.recovered_at - started, 1) if stats.recovered_at else None,
            "decisions_after_restart": sum(1 for t in window if t > fault_log.get("up_at", ended)),
        }
    if top_statements is not None:
        figures["top_statements"] = top_statements
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(figures, indent=2))
    bad = figures["errors"] or any(checks["problems"].values()) or not stats.decisions
    print("RESULT:", "FAIL" if bad else "OK",
          f"{figures['decisions_per_s']} decisions/s, p95 {figures['latency_ms']['p95']} ms, "
          f"{figures['errors']} errors, problems {checks['problems']}")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--setup":
        setup(*map(int, sys.argv[2:6]))
    else:
        sys.exit(main())
