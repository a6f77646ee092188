"""Hostile imports at size: 200 MB files through the import command, peak memory measured.

One command: ``.venv/bin/python bench/hostile_imports.py [--mb 200]``. Each case
runs ``manage.py import_jsonl`` / ``import_cognibench`` in a child process on a
fresh SQLite database (in a temporary directory), and reports the exit status,
the last line of the error, wall time, the peak resident memory of the child
(``ru_maxrss``) and how many turns ended up in the database (must be 0 for a
refused file):

* ``jsonl-valid``: a valid 200 MB JSONL file (synthetic corpus), imported;
* ``jsonl-bad-last-line``: the same file whose very last line is broken: refused,
  nothing imported (the whole file was written and rolled back);
* ``jsonl-invalid-utf8-last-line``: the last line holds invalid UTF-8;
* ``jsonl-one-huge-line``: a single 200 MB line (one turn with a 200 MB response);
* ``cognibench-array``: a valid CogniBench dialogues.json of ``--cognibench-mb`` MB (105 by
  default, one JSON array), imported whole: read one record at a time since issue #14 (it was
  read whole before, 5.4x the file in memory);
* ``cognibench-sample-array``: the records of the real CogniBench sample (``../shared/data``),
  repeated under new ids until the file has ``--cognibench-mb`` MB: the real release's shape
  (many short fields), which costs more memory per byte than the synthetic records;
* ``cognibench-array-bad-last-record``: the same whose very last record has ``turn_index: -5``:
  refused by name, nothing imported.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.infra import PYTHON, ROOT  # noqa: E402


def make_jsonl(path: Path, megabytes: int, tail: bytes | None = None) -> int:
    """Synthetic turns until the file has ``megabytes`` MB; ``tail`` replaces the last line."""
    from bench.synthetic import iter_turn_objects

    target = megabytes * 1_000_000
    lines = 0
    with open(path, "wb") as handle:
        for obj in iter_turn_objects(turns=10**9, sentences_per_turn=10, reference_words=700, labelled=True):
            handle.write(json.dumps(obj, ensure_ascii=False).encode())
            handle.write(b"\n")
            lines += 1
            if handle.tell() >= target:
                break
        if tail is not None:
            handle.write(tail + b"\n")
            lines += 1
    return lines


def make_huge_line(path: Path, megabytes: int) -> None:
    sentence = "The northern basin was founded in 1820 after a long dispute over land. "
    response = sentence * (megabytes * 1_000_000 // len(sentence))
    path.write_text(json.dumps({"dialogue": {"id": "huge"}, "turn": {"index": 0, "response": response}}) + "\n")


def make_cognibench(path: Path, megabytes: int, bad_last: bool = False) -> None:
    """Valid records (ten sentences each, a 40-sentence reference) until the file has ``megabytes`` MB."""
    sentence = "The northern basin was founded in 1820 after a long dispute over land."
    response = " ".join([sentence] * 10)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("[")
        n = 0
        while handle.tell() < megabytes * 1_000_000:
            current = f"<user> Tell me about basin {n}. <assistant> {response}"
            record = {"Unnamed: 0": n, "id": f"{n}_en_0", "dialogue": current, "current_turn": current,
                      "current_turn_processed": "<>\n".join([sentence] * 10) + "<>\n", "turn_index": 0,
                      "topic": "history", "language": "english", "type": "fact",
                      "reference": " ".join([sentence] * 40)}
            handle.write(("," if n else "") + json.dumps(record))
            n += 1
        if bad_last:
            handle.write("," + json.dumps({**record, "id": f"{n}_en_0", "turn_index": -5}))
        handle.write("]")


def make_cognibench_from_sample(path: Path, megabytes: int) -> None:
    """The real sample's records, again and again under new ids (``<n>_<id>``), until ``megabytes`` MB."""
    from tests.conftest import SHARED_DATA

    sample = json.loads((SHARED_DATA / "cognibench-sample" / "dialogues.json").read_text(encoding="utf-8"))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("[")
        n = 0
        while handle.tell() < megabytes * 1_000_000:
            for record in sample:
                handle.write(("," if n else "") + json.dumps({**record, "id": f"r{n}x{record['id']}"}))
                n += 1
        handle.write("]")


def run_case(name: str, command: list[str], workdir: Path) -> dict:
    db = workdir / f"{name}.sqlite3"
    env = {k: v for k, v in os.environ.items() if k not in {"TEST_DATABASE_NAME", "DJANGO_ALLOW_ASYNC_UNSAFE"}}
    env.update({"DATABASE_URL": f"sqlite:///{db}", "DJANGO_SETTINGS_MODULE": "config.settings.development", "DEBUG": "0",
                "LOG_LEVEL": "WARNING"})
    subprocess.run([PYTHON, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    # ru_maxrss of RUSAGE_CHILDREN is the largest child so far: measure each case in its own wrapper process.
    wrapper = ("import resource, subprocess, sys, json;"
               "p = subprocess.run(sys.argv[1:], capture_output=True, text=True);"
               "print(json.dumps({'rc': p.returncode, 'out': p.stdout[-400:], 'err': p.stderr[-600:],"
               "'rss_mb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))")
    started = time.monotonic()
    result = subprocess.run([PYTHON, "-c", wrapper, PYTHON, "manage.py", *command], cwd=ROOT, env=env,
                            capture_output=True, text=True)
    elapsed = time.monotonic() - started
    data = json.loads(result.stdout.strip().splitlines()[-1])
    with sqlite3.connect(db) as conn:
        turns = conn.execute("SELECT count(*) FROM annotator_turn").fetchone()[0]
        batches = conn.execute("SELECT count(*) FROM annotator_importbatch").fetchone()[0]
    message = (data["err"].strip().splitlines() or [""])[-1] if data["rc"] else (data["out"].strip().splitlines() or [""])[-1]
    return {"case": name, "exit": data["rc"], "seconds": round(elapsed, 1), "peak_rss_mb": round(data["rss_mb"]),
            "turns_in_db": turns, "import_batches": batches, "message": message[:300]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--cognibench-mb", type=int, default=105)
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.development")
    results = []
    with tempfile.TemporaryDirectory(prefix="hostile-imports-") as tmp:
        tmp = Path(tmp)
        cases = {
            "jsonl-valid": lambda p: make_jsonl(p, args.mb),
            "jsonl-bad-last-line": lambda p: make_jsonl(p, args.mb, tail=b'{"dialogue": {"id": "x"}, "turn": {"index": "two"'),
            "jsonl-invalid-utf8-last-line": lambda p: make_jsonl(
                p, args.mb, tail=b'{"dialogue": {"id": "\xff\xfe"}, "turn": {"index": 0, "response": "a"}}'),
            "jsonl-one-huge-line": lambda p: make_huge_line(p, args.mb),
            "cognibench-array": lambda p: make_cognibench(p, args.cognibench_mb),
            "cognibench-sample-array": lambda p: make_cognibench_from_sample(p, args.cognibench_mb),
            "cognibench-array-bad-last-record": lambda p: make_cognibench(p, args.cognibench_mb, bad_last=True),
        }
        for name, make in cases.items():
            if args.only and name not in args.only:
                continue
            path = tmp / (f"{name}.json" if name.startswith("cognibench") else f"{name}.jsonl")
            make(path)
            size = path.stat().st_size / 1e6
            kind = "import_cognibench" if name.startswith("cognibench") else "import_jsonl"
            row = run_case(name, [kind, "--project", "hostile", "--create", str(path)], tmp)
            row["file_mb"] = round(size)
            results.append(row)
            print(json.dumps(row), flush=True)
            path.unlink()
    return results


if __name__ == "__main__":
    main()
