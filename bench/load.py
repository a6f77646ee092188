"""Load test: simulated annotators working through the annotation screen's HTTP requests.

What it does, in one command (``.venv/bin/python bench/load.py``):

1. starts a private PostgreSQL cluster (never the shared one), migrates it and
   creates a project with ``--turns`` turns of ``--sentences`` sentences and
   ``--annotators`` annotator accounts;
2. serves the app on loopback (DEBUG off) with gunicorn as deployed, or Granian for comparison (``--server``);
3. runs the annotators for ``--duration`` seconds, each in its own HTTP
   session (asyncio, bench/lean_http.py: one kept-alive connection each), sending exactly what the htmx page sends: the
   login form, ``POST /p/<slug>/work/next/`` (Start) for the first turn (each
   submit's answer opens the next turn's screen, as the page's Submit does),
   ``GET /a/<id>/`` (the screen), one ``POST /a/<id>/answer/`` per protocol decision with the
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
import sys
import threading
import time
from collections import Counter
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.infra import (  # noqa: E402
    PYTHON, ROOT, Granian, Gunicorn, PrivatePostgres, app_env, machine_speed_ms, manage, percentile)
# The annotators and the checks live beside this file (each module under 400 lines); imported here so that
# ``from bench import load`` gives the whole load test (tests/test_bench_load.py).
from bench.load_annotators import (  # noqa: E402,F401
    PASSWORD, SLUG, Annotator, FloorAnnotator, Stats, SyncAnnotator, run_annotators)
from bench.load_checks import server_cpu_seconds, verify  # noqa: E402


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
