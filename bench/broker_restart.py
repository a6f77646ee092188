"""Fault: the Celery broker (Redis) crashes and comes back while an auto-label job runs.

One command: ``.venv/bin/python bench/broker_restart.py``

1. starts a private ``redis-server`` (append-only, on a free port from 6380; the
   machine's shared Redis is never touched) and a fresh PostgreSQL database
   ``bench_broker_restart`` on the machine's server (``--database-url`` to change);
2. creates a project of ``--turns`` turns, starts the offline baseline LLM
   server (each reply delayed ``--delay`` s, so that the job lasts a while) and
   one real Celery worker on the private broker;
3. starts an auto-label job (enqueued through the broker, as the admin does),
   waits until ``--crash-after`` turns are done, kills Redis with SIGKILL (a
   crash, not a shutdown), keeps it down ``--downtime`` seconds, starts it again;
4. waits for the job to finish, then starts a second job, which only runs if the
   worker reconnected to the broker by itself;
5. checks: both jobs done with no error, exactly one prediction per sentence and
   one stored reply per turn x stage x sample (nothing duplicated by a
   redelivered task), the worker still the process started in step 2.

Exit status 0 when every check holds; the figures are printed (and written as
JSON with ``--json``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.infra import (  # noqa: E402
    PYTHON, ROOT, PrivateRedis, app_env, empty_database, free_port, terminate, wait_for_port,
)

SLUG = "broker-restart"
QUEUE = "bench-broker-restart"


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise SystemExit(f"FAILED: timed out after {timeout:.0f} s waiting for {what}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/bench_broker_restart",
                        help="a PostgreSQL database (dropped and created) or sqlite:///path (deleted first)")
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--delay", type=float, default=0.15, help="seconds the baseline server waits per reply")
    parser.add_argument("--crash-after", type=int, default=5, help="turns done before Redis is killed")
    parser.add_argument("--downtime", type=float, default=5.0)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    redis = PrivateRedis()
    processes: list[subprocess.Popen] = []
    (ROOT / "var").mkdir(exist_ok=True)
    try:
        redis.start()
        empty_database(args.database_url)
        env = app_env(args.database_url, redis.url, CELERY_QUEUE=QUEUE)
        os.environ.update({k: env[k] for k in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "CELERY_BROKER_URL",
                                               "CELERY_QUEUE", "SECRET_KEY", "DEBUG")})
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        from annotator.models import Sentence
        from autolabel.jobs import services
        from autolabel.models import AutoLabelJob, LLMProfile, Prediction, SampleReply
        from bench.synthetic import create_synthetic_project

        project, _ = create_synthetic_project(SLUG, turns=args.turns, sentences_per_turn=6, reference_words=200,
                                              labelled=False, name="Broker restart")
        sentences = Sentence.objects.filter(turn__dialogue__project=project).count()

        llm_port = free_port(8800)
        processes.append(subprocess.Popen(
            [PYTHON, "manage.py", "run_baseline_llm", "--port", str(llm_port), "--delay", str(args.delay)],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
        ))
        wait_for_port(llm_port, proc=processes[-1])
        log_path = ROOT / "var" / "bench-broker-restart-worker.log"
        worker = subprocess.Popen(
            [PYTHON, "-m", "celery", "-A", "config", "worker", "-Q", QUEUE, "--concurrency", "2",
             "--pool", "threads", "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "INFO"],
            cwd=ROOT, env=env, stdout=open(log_path, "w"), stderr=subprocess.STDOUT,
        )
        processes.append(worker)
        wait_for(lambda: "ready." in log_path.read_text(), 60, "the Celery worker to be ready")

        profile = LLMProfile.objects.create(name="baseline (bench)", base_url=f"http://127.0.0.1:{llm_port}/v1",
                                            api_key_env="", supports_n=True, concurrency=2, timeout_seconds=10,
                                            max_retries=3)

        def job_now(pk):
            return AutoLabelJob.objects.get(pk=pk)

        started = time.monotonic()
        first = services.job_create(project=project, profile=profile, samples=5, threshold=3)
        wait_for(lambda: job_now(first.pk).done_turns >= args.crash_after, 120, f"{args.crash_after} turns done")
        done_at_crash = job_now(first.pk).done_turns
        crashed_at = time.monotonic()
        redis.stop()  # SIGKILL
        time.sleep(args.downtime)
        done_while_down = job_now(first.pk).done_turns - done_at_crash
        redis.start()
        back_at = time.monotonic()
        job = wait_for(lambda: (j := job_now(first.pk)).status in (AutoLabelJob.Status.DONE, AutoLabelJob.Status.FAILED)
                       and j, 300, "the first job to finish")
        first_finished = time.monotonic()

        second = services.job_create(project=project, profile=profile, samples=3, threshold=2)
        second_job = wait_for(lambda: (j := job_now(second.pk)).status in (AutoLabelJob.Status.DONE,
                                                                             AutoLabelJob.Status.FAILED) and j,
                              120, "a job started after the restart to finish (the worker reconnected)")
        second_finished = time.monotonic()

        checks = {}
        for label, j, samples in (("first", job, 5), ("second", second_job, 3)):
            predictions = Prediction.objects.filter(job=j)
            replies = SampleReply.objects.filter(job=j)
            checks[f"{label} job done without error"] = j.status == AutoLabelJob.Status.DONE and not j.error
            checks[f"{label} job: one prediction per sentence"] = (
                predictions.count() == predictions.values("sentence").distinct().count() == sentences)
            checks[f"{label} job: one reply per turn x stage x sample"] = (
                replies.count() == replies.values("turn", "stage", "sample_index").distinct().count()
                and replies.filter(stage=1).count() == args.turns * samples)
        checks["the worker survived (same process)"] = worker.poll() is None
        log = log_path.read_text()
        figures = {
            "turns": args.turns, "sentences": sentences, "downtime_s": args.downtime,
            "turns_done_at_crash": done_at_crash, "turns_done_while_redis_was_down": done_while_down,
            "first_job_s": round(first_finished - started, 1),
            "first_job_after_redis_back_s": round(first_finished - back_at, 1),
            "crash_to_first_job_done_s": round(first_finished - crashed_at, 1),
            "second_job_s": round(second_finished - first_finished, 1),
            "first_job_requests": job.requests, "first_job_retries": job.retries, "first_job_faults": job.faults,
            "worker_log_connection_errors": log.count("Cannot connect to redis")
            + log.count("Connection to broker lost"),
            "checks": checks,
        }
        for name, ok in checks.items():
            print(f"{'ok    ' if ok else 'FAILED'} {name}")
        print(json.dumps({k: v for k, v in figures.items() if k != "checks"}, indent=1))
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=1))
        return 0 if all(checks.values()) else 1
    finally:
        for proc in processes:
            terminate(proc)
        redis.destroy()


if __name__ == "__main__":
    sys.exit(main())
