"""Benchmark: the streamed gold export through the REST API keeps the web process's memory flat.

    .venv/bin/python bench/api_export.py [--turns 23400] [--sentences-per-turn 10] [--database-url URL]

Builds (once, cached in bench/out/) a database with two synthetic projects, one
of ``turns`` turns x ``sentences-per-turn`` sentences (234,000 sentences by
default) and one ten times smaller; starts a real gunicorn (one sync worker,
DEBUG off) on it; downloads ``GET /api/v1/projects/<slug>/gold/export/`` with a
token, streaming; and samples the gunicorn worker's resident set size (RSS)
every 50 ms during each download. If the export is streamed, the peak RSS above
the baseline does not grow with the project: the large export costs about what
the small one does.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
PYTHON = sys.executable

SETUP = """
import django, sys
django.setup()
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from annotator.models import Membership, Project, Sentence
from bench.synthetic import create_synthetic_project
turns, per_turn = int(sys.argv[1]), int(sys.argv[2])
for slug, n in (("export-small", max(1, turns // 10)), ("export-large", turns)):
    if not Project.objects.filter(slug=slug).exists():
        create_synthetic_project(slug, turns=n, sentences_per_turn=per_turn, reference_words=700, labelled=True)
user, _ = get_user_model().objects.get_or_create(username="bench-lead")
for project in Project.objects.filter(slug__startswith="export-"):
    Membership.objects.get_or_create(project=project, user=user, defaults={"role": "lead"})
token, _ = Token.objects.get_or_create(user=user)
counts = {p.slug: Sentence.objects.filter(turn__dialogue__project=p).count()
          for p in Project.objects.filter(slug__startswith="export-")}
print(token.key, counts["export-small"], counts["export-large"])
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prepare(env, turns, per_turn):
    subprocess.run([PYTHON, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    started = time.perf_counter()
    out = subprocess.run([PYTHON, "-c", SETUP, str(turns), str(per_turn)], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    key, small, large = out[-3], int(out[-2]), int(out[-1])
    return key, small, large, time.perf_counter() - started


class Sampler(threading.Thread):
    def __init__(self, process: psutil.Process, interval=0.05):
        super().__init__(daemon=True)
        self.process, self.interval, self.samples, self.running = process, interval, [], True

    def run(self):
        while self.running:
            self.samples.append((time.perf_counter(), self.process.memory_info().rss))
            time.sleep(self.interval)

    def stop(self):
        self.running = False
        self.join()


def download(base, key, slug, worker):
    sampler = Sampler(worker)
    before = worker.memory_info().rss
    sampler.start()
    started = time.perf_counter()
    size, lines, sentences, marks = 0, 0, 0, []
    headers = {"Authorization": f"Token {key}"}
    with httpx.stream("GET", f"{base}/api/v1/projects/{slug}/gold/export/", headers=headers, timeout=600) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            size += len(line) + 1
            lines += 1
            sentences += len(json.loads(line)["sentences"])
            if lines % 1000 == 0:
                marks.append((time.perf_counter(), lines))
    elapsed = time.perf_counter() - started
    sampler.stop()
    after = worker.memory_info().rss
    peak = max(rss for _, rss in sampler.samples)
    return {"slug": slug, "seconds": elapsed, "bytes": size, "turns": lines, "sentences": sentences,
            "rss_before": before, "rss_peak": peak, "rss_after": after, "samples": sampler.samples}


def quartiles(samples):
    """RSS at 25, 50, 75 and 100 % of the download's duration."""
    start, end = samples[0][0], samples[-1][0]
    out = []
    for q in (0.25, 0.5, 0.75, 1.0):
        t = start + q * (end - start)
        out.append(next(rss for ts, rss in samples if ts >= t - 1e-9))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=23_400)
    parser.add_argument("--sentences-per-turn", type=int, default=10)
    parser.add_argument("--database-url", default="")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.pop("TEST_DATABASE_NAME", None)
    env.update(DEBUG="false", ALLOWED_HOSTS="127.0.0.1", DJANGO_SETTINGS_MODULE="config.settings.development",
               DATABASE_URL=args.database_url
               or f"sqlite:///{OUT / f'api-export-{args.turns}x{args.sentences_per_turn}.sqlite3'}")
    key, small, large, setup_seconds = prepare(env, args.turns, args.sentences_per_turn)
    print(f"database: {env['DATABASE_URL'].split('://')[0]}; projects: {small:,} and {large:,} sentences "
          f"(set-up {setup_seconds:.0f} s, 0 when cached)")

    port = free_port()
    gunicorn = subprocess.Popen(
        [str(Path(PYTHON).parent / "gunicorn"), "config.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "1",
         "--worker-class", "sync", "--timeout", "900", "--log-level", "warning"],
        cwd=ROOT, env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/api/v1/me/", headers={"Authorization": f"Token {key}"}).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                sys.exit("gunicorn did not answer within 60 s")
            time.sleep(0.2)
        worker = psutil.Process(gunicorn.pid).children()[0]
        # Warm up: the first export imports the exporters and fills Django's caches.
        download(base, key, "export-small", worker)
        results = [download(base, key, slug, worker) for slug in ("export-small", "export-large")]
    finally:
        gunicorn.terminate()
        gunicorn.wait(30)

    mb = 1024 * 1024
    print(f"{'project':<13} {'sentences':>10} {'turns':>7} {'MB sent':>8} {'seconds':>8} {'sent./s':>8} "
          f"{'RSS before':>10} {'peak':>7} {'peak-before':>11} {'RSS at 25/50/75/100 % of the download':>40}")
    for r in results:
        marks = "/".join(f"{rss / mb:.0f}" for rss in quartiles(r["samples"]))
        print(f"{r['slug']:<13} {r['sentences']:>10,} {r['turns']:>7,} {r['bytes'] / mb:>8.1f} {r['seconds']:>8.1f} "
              f"{r['sentences'] / r['seconds']:>8,.0f} {r['rss_before'] / mb:>9.0f}M {r['rss_peak'] / mb:>6.0f}M "
              f"{(r['rss_peak'] - r['rss_before']) / mb:>10.1f}M {marks:>40}")
    small_growth = results[0]["rss_peak"] - results[0]["rss_before"]
    large_growth = results[1]["rss_peak"] - results[1]["rss_before"]
    ratio = results[1]["sentences"] / max(results[0]["sentences"], 1)
    print(f"the large export has {ratio:.0f}x the sentences; the worker's peak RSS grew by "
          f"{large_growth / mb:.1f} MB for it vs {small_growth / mb:.1f} MB for the small one")


if __name__ == "__main__":
    main()
