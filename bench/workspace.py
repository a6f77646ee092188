"""Benchmark of the annotation workspace on a 24,000-turn project (PostgreSQL or SQLite).

    .venv/bin/python bench/workspace.py [--database-url postgres://…/annotator_bench] [--fresh] [--claims 200]
    .venv/bin/python bench/workspace.py --database-url sqlite:///var/bench-workspace.sqlite3 --fresh --wsgi

The project: 24,000 synthetic turns (bench/synthetic.py) imported in one go:
12,000 ordinary turns (10 sentences, ~700-word reference) already fully
annotated (2 submitted slots each, so "next item" has to pass them), then 400
turns of 40 sentences with a ~1,500-word reference, then 11,600 ordinary turns.
Thirty annotators then work: each iteration one annotator

* asks for the next item (POST /p/<slug>/work/next/: claims the oldest open slot — one of the 40-sentence turns),
* opens the annotation screen (GET /a/<id>/),
* makes decisions: walks 8 sentences through the protocol (3 htmx POSTs each, with the panel re-rendered),
* re-opens the screen (now with answers),

and the assignment is then marked submitted directly in the database (not timed).

Requests go through Django's test Client in this process: the whole middleware
stack, sessions, authentication, views, templates and the database, but no
socket and no WSGI server. The test Client keeps the database connection open
across requests; ``--wsgi`` sends them into Django's WSGI handler instead
(bench/sync_ab.py's Browser), which opens and closes it as a server does. Figures are per request, DEBUG off: wall-clock time,
and the CPU time of this process (Python, Django, templates, the psycopg
client), which a machine shared with other work disturbs much less than the
wall-clock time; the database server's own time is only in the wall-clock figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from itertools import chain
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.infra import empty_database  # noqa: E402


DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/annotator_bench"
SLUG = "bench-workspace"
FULL_TURNS, BIG_TURNS, TAIL_TURNS = 12_000, 400, 11_600
THROUGH = {False: "django.test.Client", True: "Django's WSGI handler"}


def configure(database_url: str):
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DEBUG", "false")
    os.environ.setdefault("ALLOWED_HOSTS", "testserver,localhost,127.0.0.1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.development")
    import django

    django.setup()


def ensure_database(database_url: str):
    """Create the benchmark database if it does not exist (PostgreSQL only)."""
    import psycopg
    from urllib.parse import urlparse

    url = urlparse(database_url)
    name = url.path.lstrip("/")
    admin = url._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("select 1 from pg_database where datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(f'create database "{name}"')


def renamed(objects, prefix):
    for obj in objects:
        obj["dialogue"]["id"] = f"{prefix}-{obj['dialogue']['id']}"
        obj["turn"]["id"] = f"{prefix}-{obj['turn']['id']}"
        yield obj


def build_project():
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.db.models import F
    from django.utils import timezone

    from annotator.corpus.imports.importers import ImportSummary
    from annotator.corpus.imports.importers.jsonl import record_from_object
    from annotator.models import Assignment, Membership, Project, Turn
    from annotator.corpus.imports.services import records_import
    from annotator.domain.vocabulary import Role
    from bench.synthetic import iter_turn_objects

    started = time.perf_counter()
    project = Project.objects.create(slug=SLUG, name="Workspace benchmark", overlap=2)
    objects = chain(
        renamed(iter_turn_objects(turns=FULL_TURNS, labelled=False, seed=7), "done"),
        renamed(iter_turn_objects(turns=BIG_TURNS, sentences_per_turn=40, reference_words=1500, labelled=False, seed=11), "big"),
        renamed(iter_turn_objects(turns=TAIL_TURNS, labelled=False, seed=13), "tail"),
    )
    summary = ImportSummary(files=["workspace benchmark"])
    records = (record_from_object(obj, "bench", n, summary) for n, obj in enumerate(objects, start=1))
    with transaction.atomic():
        records_import(project, records, summary=summary)
    print(f"imported {Turn.objects.filter(dialogue__project=project).count()} turns in {time.perf_counter() - started:.0f} s")

    User = get_user_model()
    veterans = [User.objects.create(username=f"bench-veteran-{n}", password="!") for n in range(2)]
    for user in veterans:
        Membership.objects.create(project=project, user=user, role=Role.ANNOTATOR)
    now = timezone.now()
    done_ids = list(
        Turn.objects.filter(dialogue__project=project, dialogue__external_id__startswith="done-")
        .order_by("id").values_list("id", flat=True)
    )
    with transaction.atomic():
        Assignment.objects.bulk_create(
            [Assignment(project=project, turn_id=turn_id, annotator=user, status=Assignment.Status.SUBMITTED,
                        submitted_at=now) for turn_id in done_ids for user in veterans],
            batch_size=5000,
        )
        Turn.objects.filter(id__in=done_ids).update(slots_taken=F("slots_taken") + 2)
    print(f"pre-filled {len(done_ids)} turns with 2 submitted slots each")
    from django.db import connection

    with connection.cursor() as cursor:
        # A project this size has long been analysed by autovacuum on a real server; a benchmark run
        # right after the bulk load would otherwise measure plans made without any statistics.
        cursor.execute("ANALYZE")
    return project


def annotators(project, count):
    from django.contrib.auth import get_user_model

    from annotator.models import Membership
    from annotator.domain.vocabulary import Role

    User = get_user_model()
    users = []
    for n in range(count):
        user, _ = User.objects.get_or_create(username=f"bench-annotator-{n}", defaults={"password": "!"})
        Membership.objects.get_or_create(project=project, user=user, defaults={"role": Role.ANNOTATOR})
        users.append(user)
    return users


def percentile(values, q):
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


class WsgiClient:
    """The few test Client calls ``run`` makes, sent into Django's WSGI handler (request_started and
    request_finished fire, so the database connection lives as long as CONN_MAX_AGE says, as on a server)."""

    def __init__(self, user):
        from django.core.wsgi import get_wsgi_application
        from django.test import Client

        from bench.sync_ab import Browser

        login = Client()
        login.force_login(user)
        self.browser = Browser(get_wsgi_application())
        self.browser.cookies["sessionid"] = login.cookies["sessionid"].value
        self.browser.request("GET", "/accounts/login/")  # the CSRF cookie the POSTs send back

    def _answer(self, status, headers, content):
        from django.http import HttpResponse

        response = HttpResponse(content, status=status)
        for name, value in headers.items():
            response[name] = value
        return response

    def get(self, url):
        return self._answer(*self.browser.request("GET", url))

    def post(self, url, data=None, HTTP_HX_REQUEST=None):
        return self._answer(*self.browser.request("POST", url, form=data or {}, htmx=bool(HTTP_HX_REQUEST)))


def run(claims: int, sentences_per_assignment: int, warmup: int, wsgi: bool = False):
    from django.db import connection
    from django.test import Client
    from django.urls import reverse
    from django.utils import timezone

    from annotator.domain import protocol
    from annotator.models import Assignment, Project, Sentence, Turn
    from annotator.domain.vocabulary import Label

    project = Project.objects.filter(slug=SLUG).first() or build_project()
    users = annotators(project, 30)
    clients = []
    for user in users:
        if wsgi:
            clients.append(WsgiClient(user))
            continue
        client = Client()
        client.force_login(user)
        clients.append(client)
    walks = [protocol.path_for_label(label) for label in (Label.FAITHFUL, Label.SPECULATIVE, Label.INVENTED)]
    timings = {"next": [], "open": [], "decision": [], "floor": []}
    cpu = {"next": [], "open": [], "decision": [], "floor": []}
    clock = lambda: (time.perf_counter(), time.process_time())  # noqa: E731
    next_url = reverse("workspace_next", args=[project.slug])
    home_url = reverse("login")
    for iteration in range(claims + warmup):
        client = clients[iteration % len(clients)]
        t0, c0 = clock()
        response = client.post(next_url)
        t_next, c_next = time.perf_counter() - t0, time.process_time() - c0
        if response.status_code != 302 or "/a/" not in response["Location"]:
            raise SystemExit(f"next item failed: {response.status_code} {response.get('Location')}")
        url = response["Location"]
        t0, c0 = clock()
        page = client.get(url)
        t_open, c_open = time.perf_counter() - t0, time.process_time() - c0
        assert page.status_code == 200
        assignment = Assignment.objects.get(pk=int(url.rstrip("/").split("/")[-1]))
        sentence_ids = list(Sentence.objects.filter(turn_id=assignment.turn_id).order_by("index").values_list("id", flat=True))
        decisions, decisions_cpu = [], []
        version = assignment.version
        for position, sentence_id in enumerate(sentence_ids[:sentences_per_assignment]):
            for step, value in walks[position % len(walks)].items():
                t0, c0 = clock()
                response = client.post(
                    reverse("annotate_act", args=[assignment.pk, "answer"]),
                    {"sentence": sentence_id, "step": step, "value": value, "version": version,
                     "request_id": f"bench-{assignment.pk}-{version}"},
                    HTTP_HX_REQUEST="true",
                )
                decisions.append(time.perf_counter() - t0)
                decisions_cpu.append(time.process_time() - c0)
                assert response.status_code == 200, response.content[:500]
                version += 1
        t0, c0 = clock()
        assert client.get(url).status_code == 200
        t_reopen, c_reopen = time.perf_counter() - t0, time.process_time() - c0
        Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.SUBMITTED, submitted_at=timezone.now())
        # Calibration on the same busy machine: a page that does almost nothing (the login
        # page: session and user lookups and a small template).
        t0, c0 = clock()
        assert client.get(home_url).status_code == 200
        t_floor, c_floor = time.perf_counter() - t0, time.process_time() - c0
        if iteration >= warmup:
            timings["next"].append(t_next)
            timings["open"].extend([t_open, t_reopen])
            timings["decision"].extend(decisions)
            cpu["next"].append(c_next)
            cpu["open"].extend([c_open, c_reopen])
            cpu["decision"].extend(decisions_cpu)
            timings["floor"].append(t_floor)
            cpu["floor"].append(c_floor)
    big = Turn.objects.filter(dialogue__project=project, dialogue__external_id__startswith="big-").first()
    return project, timings, cpu, big, connection.vendor


def main():
    parser = argparse.ArgumentParser(description="Workspace benchmark (next item, open screen, decision).")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL))
    parser.add_argument("--fresh", action="store_true", help="drop the benchmark database and build the project again (comparable figures)")
    parser.add_argument("--claims", type=int, default=200)
    parser.add_argument("--sentences", type=int, default=8, help="sentences walked per assignment")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--wsgi", action="store_true", help="requests into Django's WSGI handler, not the test Client")
    args = parser.parse_args()
    if args.fresh:
        # Each run leaves its assignments behind, so runs on one database drift; a fresh one is comparable.
        empty_database(args.database_url)
    elif args.database_url.startswith("postgres"):
        ensure_database(args.database_url)
    configure(args.database_url)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from annotator.models import Project, Turn

    load_before = os.getloadavg()
    project, timings, cpu, big, vendor = run(args.claims, args.sentences, args.warmup, args.wsgi)
    load_after = os.getloadavg()
    turns = Turn.objects.filter(dialogue__project=project).count()
    print(f"database: {vendor}; project: {turns} turns; measured turn: {big.sentences.count()} sentences, "
          f"reference {len(big.dialogue.reference.split())} words; through "
          f"{THROUGH[args.wsgi]} (no HTTP server)")
    ms = lambda seconds: f"{seconds * 1000:.1f} ms"  # noqa: E731
    print(f"machine: {os.cpu_count()} cores, load average {load_before[0]:.1f} before and {load_after[0]:.1f} after the run")
    goals = {"next": "goal p50 <= 12 ms", "open": "goal p50 <= 25 ms", "decision": "goal p95 < 20 ms",
             "floor": "calibration: the login page"}
    names = {"next": "next item   ", "open": "open screen ", "decision": "one decision", "floor": "login page  "}
    for key in ("next", "open", "decision", "floor"):
        wall, own = timings[key], cpu[key]
        print(f"{names[key]}  wall p50 {ms(statistics.median(wall))}  p95 {ms(percentile(wall, 95))}   "
              f"app CPU p50 {ms(statistics.median(own))}  p95 {ms(percentile(own, 95))}   (n={len(wall)}; {goals[key]})")
    ratio = statistics.median(timings["next"]) / statistics.median(timings["open"])
    print(f"next item / open screen (wall p50): {ratio:.2f}x (issue 49's bar: at most 2x)")

if __name__ == "__main__":
    main()
