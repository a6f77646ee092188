"""Benchmark: import and export of the synthetic CogniBench-L corpus on SQLite and PostgreSQL.

    .venv/bin/python bench/import_export.py [--turns 24000] [--db sqlite,postgres] [--imports-only]

A Chinese corpus of the same size (``synthetic.write_jsonl(language="zh")``: no units in the file,
the studio cuts each response with sentencex) is imported too, and its rate and memory are
compared with the English import without gold in the same run.

Each step runs the real management command in a child process on a fresh
database and reports wall time, sentences per second and the child's peak RSS
(``ru_maxrss`` from ``wait4``). Export is measured at two project sizes to show
whether memory grows with the project. PostgreSQL uses
``BENCH_POSTGRES_URL`` (default ``postgres://postgres@127.0.0.1:5432/bench_import_export``;
the database is dropped and re-created).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.infra import empty_database  # noqa: E402

OUT = ROOT / "bench" / "out"
PYTHON = sys.executable


def run(argv, env, label):
    """Run a child; return (wall seconds, peak RSS in MB, CPU seconds of the child)."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        sys.exit(f"{label} failed:\n{output.decode()[-3000:]}")
    return seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def fresh_database(kind, tag):
    env = dict(os.environ)
    env.pop("TEST_DATABASE_NAME", None)
    if kind == "sqlite":
        env["DATABASE_URL"] = f"sqlite:///{OUT / f'bench-{tag}.sqlite3'}"
    else:
        url = urlparse(os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/bench_import_export"))
        env["DATABASE_URL"] = url._replace(path=url.path + f"_{tag}").geturl()
    empty_database(env["DATABASE_URL"])
    run([PYTHON, "manage.py", "migrate", "-v0"], env, "migrate")
    return env


def main():
    parser = argparse.ArgumentParser(description="import/export benchmark")
    parser.add_argument("--turns", type=int, default=24_000)
    parser.add_argument("--db", default="sqlite,postgres")
    parser.add_argument("--imports-only", action="store_true", help="skip the exports")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.development")
    import django

    django.setup()
    from bench.synthetic import write_jsonl

    corpora = {}
    for labelled in (False, True):
        name = f"synthetic-{args.turns}-{'gold' if labelled else 'plain'}.jsonl"
        path = OUT / name
        if not path.exists():
            write_jsonl(path, turns=args.turns, labelled=labelled)
        corpora[labelled] = path
    chinese = OUT / f"synthetic-{args.turns}-zh.jsonl"
    if not chinese.exists():
        write_jsonl(chinese, turns=args.turns, labelled=False, language="zh")
    quarter = OUT / f"synthetic-{args.turns // 4}-gold.jsonl"
    if not quarter.exists():
        write_jsonl(quarter, turns=args.turns // 4, labelled=True)
    sentences = args.turns * 10

    print(f"corpus: {args.turns} turns x 10 sentences = {sentences} sentences, ~700-word references, "
          f"{corpora[False].stat().st_size / 1e6:.0f} MB (plain) / {corpora[True].stat().st_size / 1e6:.0f} MB (with gold); "
          f"Chinese: same turns, no units in the file, ~700-character references, {chinese.stat().st_size / 1e6:.0f} MB")
    print(f"machine: {os.cpu_count()} cores, shared with other work (load average {os.getloadavg()[0]:.1f})")
    print()
    # What every step pays before it reads a byte: Python, Django and the command's imports
    # (`--help` of the command itself, best of three). The peers' figures are for servers already
    # running, so the rate without it is given too.
    startup = min(run([PYTHON, "manage.py", "export_gold", "--help"], dict(os.environ), "startup")[0]
                  for _ in range(3))
    print(f"start-up of a management command (best of 3): {startup:.2f} s wall")
    print()
    print(f"{'database':<10} {'step':<34} {'wall s':>7} {'sent/s wall':>12} {'excl. start-up':>14} {'CPU s':>6} "
          f"{'peak RSS MB':>11}")

    def row(kind, what, seconds, rss, cpu, count):
        print(f"{kind:<10} {what:<34} {seconds:>7.2f} {count / seconds:>12,.0f} {count / (seconds - startup):>14,.0f} "
              f"{cpu:>6.2f} {rss:>11.0f}", flush=True)

    comparisons = []
    for kind in args.db.split(","):
        measured = {}
        for labelled, what in ((False, "import (sentences only)"), (True, "import (sentences + gold)")):
            env = fresh_database(kind, "gold" if labelled else "plain")
            seconds, rss, cpu = run([PYTHON, "manage.py", "import_jsonl", "--project", "bench", "--create",
                                     str(corpora[labelled])], env, what)
            row(kind, what, seconds, rss, cpu, sentences)
            measured.setdefault("en", (seconds, rss, cpu))
        what = "import zh (studio cuts units)"
        zh_env = fresh_database(kind, "zh")
        seconds, rss, cpu = run([PYTHON, "manage.py", "import_jsonl", "--project", "bench", "--create", str(chinese)],
                                zh_env, what)
        row(kind, what, seconds, rss, cpu, sentences)
        measured["zh"] = (seconds, rss, cpu)
        comparisons.append((kind, measured))
        if args.imports_only:
            continue
        # env now holds the database with gold: export it, then a quarter-size project for the memory trend.
        for fmt in ("jsonl", "cognibench"):
            seconds, rss, cpu = run([PYTHON, "manage.py", "export_gold", "--project", "bench", "--format", fmt,
                                     "--out", str(OUT / f"export-{kind}.{fmt}")], env, f"export {fmt}")
            row(kind, f"export {fmt} ({args.turns} turns)", seconds, rss, cpu, sentences)
        env = fresh_database(kind, "quarter")
        run([PYTHON, "manage.py", "import_jsonl", "--project", "bench", "--create", str(quarter)], env, "import")
        seconds, rss, cpu = run([PYTHON, "manage.py", "export_gold", "--project", "bench", "--format", "jsonl",
                                 "--out", str(OUT / f"export-{kind}-quarter.jsonl")], env, "export quarter")
        row(kind, f"export jsonl ({args.turns // 4} turns)", seconds, rss, cpu, sentences // 4)
    for kind, measured in comparisons:
        (en_seconds, en_rss, en_cpu), (zh_seconds, zh_rss, zh_cpu) = measured["en"], measured["zh"]
        print(f"{kind}: Chinese import at {en_seconds / zh_seconds:.2f}x the English sentences/s wall "
              f"({en_cpu / zh_cpu:.2f}x by CPU time; goal >= 0.5), peak memory {zh_rss / en_rss:.2f}x English "
              "(goal <= 1.5)")
    print(f"load average after the run: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
