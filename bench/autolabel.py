#!/usr/bin/env python
"""Benchmark of the auto-labeller against the offline baseline LLM server, over real HTTP.

    .venv/bin/python bench/autolabel.py                 # everything (about 20 minutes: the reference run is slow)
    .venv/bin/python bench/autolabel.py --skip-reference

1. Throughput: 1,000 turns x 5 samples, the server delaying every reply by 500 ms,
   one Celery worker process (threads pool, concurrency 1): wall time from the
   job's enqueueing to its end, with ``n`` (one request per turn and stage) and
   without (one request per sample).
2. The CogniBench reference way, on the same turns and server: one request per
   sample, 20 threads, a random 1-2 s pause before each call, no database writes.
3. Memory: a 10,000-turn job (no delay); the worker's resident memory sampled
   every half second. Flat means no accumulation of replies.

Uses its own SQLite database under var/ (or DATABASE_URL) and its own Celery queue.
"""

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BENCH_DB = ROOT / "var" / "bench-autolabel.sqlite3"
QUEUE = f"bench-autolabel-{uuid.uuid4().hex[:8]}"
os.environ.setdefault("DATABASE_URL", f"sqlite:///{BENCH_DB}")
os.environ["CELERY_QUEUE"] = QUEUE
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.development")


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(delay):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "manage.py", "run_baseline_llm", "--port", str(port), "--delay", str(delay)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("baseline server did not start")


def start_worker():
    env = dict(os.environ)
    log = open(ROOT / "var" / f"{QUEUE}.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", QUEUE, "--concurrency", "1",
         "--pool", "threads", "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    time.sleep(4)  # the worker logs nothing at WARNING when ready; give it time to connect
    if proc.poll() is not None:
        raise RuntimeError(Path(log.name).read_text()[-2000:])
    return proc


def make_turns(project, count):
    from annotator.models import Dialogue, Sentence, Turn
    from tests.factories_autolabel import DANUBE_TURN, REFERENCE

    texts = [text for text, _ in DANUBE_TURN]
    dialogue = Dialogue.objects.create(project=project, external_id=f"bench-{project.slug}", reference=REFERENCE)
    response = " ".join(texts)
    for start in range(0, count, 1000):
        turns = Turn.objects.bulk_create([
            Turn(dialogue=dialogue, index=i, user_message="Tell me about the Danube.", assistant_response=response)
            for i in range(start, min(count, start + 1000))
        ])
        rows, offset = [], 0
        for turn in turns:
            offset = 0
            for index, text in enumerate(texts):
                rows.append(Sentence(turn=turn, index=index, text=text, start=offset, end=offset + len(text)))
                offset += len(text) + 1
        Sentence.objects.bulk_create(rows, batch_size=2000)


def run_job(project, profile, samples=5, threshold=3, use_n=True, watch=None):
    from autolabel.jobs import services
    from autolabel.models import AutoLabelJob

    started = time.monotonic()
    job = services.job_create(project=project, profile=profile, samples=samples, threshold=threshold, use_n=use_n)
    while True:
        job.refresh_from_db()
        if watch:
            watch(job)
        if job.status in AutoLabelJob.FINISHED:
            break
        time.sleep(0.5)
    return job, time.monotonic() - started


def reference_way(base_url, project, samples, threads=20):
    """CogniBench's reference script: one request per sample, 20 threads, a 1-2 s pause before each call."""
    import openai

    from autolabel.labelling import parsing
    from autolabel.labelling import pipeline
    from autolabel.labelling import prompting
    from autolabel.models import PromptVersion

    version = PromptVersion.objects.filter(project=project).order_by("-version").first()
    config = pipeline.JobConfig(samples, 3, False, version.stage1_template, version.stage2_template, [])
    client = openai.OpenAI(base_url=base_url, api_key="no-key", max_retries=5)
    from annotator.models import Sentence, Turn

    specs = []
    for turn in Turn.objects.filter(dialogue__project=project).select_related("dialogue"):
        sentences = [(s.index + 1, s.pk, s.text) for s in Sentence.objects.filter(turn=turn).order_by("index")]
        specs.append(pipeline.TurnSpec(0, turn.pk, turn.dialogue.reference, turn.user_message, sentences))

    def one(spec):
        for stage in (prompting.STAGE_1, prompting.STAGE_2):
            for indices, numbers, messages in pipeline.plan_requests(spec, config, stage):
                time.sleep(random.uniform(1, 2))
                response = client.chat.completions.create(model="baseline-lexical", messages=messages, seed=indices[0])
                parsed = parsing.parse_reply(response.choices[0].message.content, stage, numbers)
                spec.existing[(stage, indices[0])] = {"votes": {str(n): parsing.tag_to_json(t) for n, t in parsed.tags.items()}}

    def per_sample_tasks():
        # Samples of a turn are independent requests in the reference script: one task per (turn, sample).
        for spec in specs:
            for index in range(samples):
                yield pipeline.TurnSpec(0, spec.turn_id, spec.reference, spec.question, spec.sentences,
                                        {(s, i): {"votes": {}} for s in (1, 2) for i in range(samples) if i != index})

    started = time.monotonic()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, per_sample_tasks()))
    return time.monotonic() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--memory-turns", type=int, default=10000)
    parser.add_argument("--reference-turns", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=64, help="Per-job request limit with n.")
    parser.add_argument("--concurrency-no-n", type=int, default=200, help="Per-job request limit without n.")
    parser.add_argument("--skip-reference", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()

    if os.environ["DATABASE_URL"].startswith("sqlite") and BENCH_DB.exists():
        for suffix in ("", "-wal", "-shm"):
            Path(f"{BENCH_DB}{suffix}").unlink(missing_ok=True)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    import psutil

    from annotator.models import Project
    from autolabel.models import LLMProfile

    results = {"machine": f"{os.cpu_count()} cores, shared with other work", "database": os.environ["DATABASE_URL"].split(":")[0]}
    server, base_url = start_server(0.5)
    worker = start_worker()
    try:
        project = Project.objects.create(slug="bench-throughput", name="Bench throughput")
        make_turns(project, args.turns)
        for label, use_n, concurrency in (("with n", True, args.concurrency), ("without n", False, args.concurrency_no_n)):
            profile = LLMProfile.objects.create(name=f"bench {label}", base_url=base_url, api_key_env="",
                                                supports_n=use_n, concurrency=concurrency, timeout_seconds=60)
            job, seconds = run_job(project, profile, use_n=use_n)
            results[f"throughput {label}"] = {
                "turns": job.done_turns, "samples": 5, "requests": job.requests, "concurrency": concurrency,
                "status": job.status, "seconds": round(seconds, 1), "turns_per_second": round(job.done_turns / seconds, 1),
            }
            print(json.dumps({label: results[f"throughput {label}"]}), flush=True)
        if not args.skip_reference:
            ref_project = project
            if args.reference_turns != args.turns:
                ref_project = Project.objects.create(slug="bench-reference", name="Bench reference")
                make_turns(ref_project, args.reference_turns)
            seconds = reference_way(base_url, ref_project, 5)
            results["cognibench reference way"] = {"turns": args.reference_turns, "samples": 5, "threads": 20,
                                                   "seconds": round(seconds, 1)}
            best = results["throughput with n"]["seconds"] * args.reference_turns / args.turns
            results["ratio reference / ours (with n)"] = round(seconds / best, 1)
            print(json.dumps({"reference": results["cognibench reference way"]}), flush=True)
    finally:
        server.terminate()

    if not args.skip_memory:
        server, base_url = start_server(0.0)
        try:
            project = Project.objects.create(slug="bench-memory", name="Bench memory")
            make_turns(project, args.memory_turns)
            profile = LLMProfile.objects.create(name="bench memory", base_url=base_url, api_key_env="",
                                                supports_n=True, concurrency=32)
            process = psutil.Process(worker.pid)
            samples = []

            def watch(job):
                samples.append((job.done_turns, process.memory_info().rss / 2**20))

            job, seconds = run_job(project, profile, watch=watch)
            by_decile = {}
            for done, rss in samples:
                decile = min(10, int(10 * done / max(1, job.total_turns)))
                by_decile[decile * 10] = round(rss, 1)
            results["memory 10k turns"] = {
                "turns": job.done_turns, "seconds": round(seconds, 1), "status": job.status,
                "worker_rss_mib_by_percent_done": by_decile,
                "rss_first_mib": round(samples[0][1], 1), "rss_max_mib": round(max(r for _, r in samples), 1),
                "rss_last_mib": round(samples[-1][1], 1),
            }
        finally:
            server.terminate()
    worker.terminate()
    worker.wait(10)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
