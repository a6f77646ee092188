"""Instructions the web application runs per labelled sentence of the annotation flow, by request: a
deterministic A/B of two source trees (valgrind's callgrind counts them; the machine's load does not).

    .venv/bin/python bench/flow_instructions.py --old /tmp/old-tree --new . [--turns 8]

CPU time on this shared two-core machine moves by ±10 % from one run to the next (docs/benchmarks.md): a change
worth 2 % cannot be seen in it. An instruction count moves by well under 1 %. Each tree's process logs two
annotators in and works turns alternately as `bench/load.py --sync` sends them (the screen, one /sync/ per
labelled sentence, submit opening the next turn; every second submission completes its turn and decides its
gold), in process through Django's WSGI handler (`bench/sync_ab.py`'s Browser, every middleware, CSRF checked),
on its own copy of one template database per tree (PostgreSQL). Three warm-up turns are not counted. Under
callgrind, `os.getppid()` marks the edges of each measured request (`--dump-before=getppid` writes the
counters at each mark): each request's count is its own dump. The database server's work is not in it.
Needs valgrind (Debian's package); a tree's run takes about a minute and a half.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.screen_page import SCREEN_URL_RE, csrf_token, screen_sentences, screen_version  # noqa: E402
from bench.sync_ab import PASSWORD, SLUG, Browser, environment, run_child  # noqa: E402

WARM_UP_TURNS = 3


def child(tree: Path, turns: int) -> None:
    """Work the turns in this process (under callgrind); print the measured requests' kinds in order."""
    os.chdir(tree)
    sys.path.insert(0, str(tree))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.wsgi import get_wsgi_application

    from annotator.domain import protocol
    from annotator.domain.vocabulary import Label, Role
    from annotator.models import Membership, Project

    application, browsers = get_wsgi_application(), []
    for number in range(2):
        user = get_user_model().objects.create_user(f"fi-{number}-{uuid.uuid4().hex[:8]}", password=PASSWORD)
        Membership.objects.create(project=Project.objects.get(slug=SLUG), user=user, role=Role.ANNOTATOR)
        browser = Browser(application)
        _, _, page = browser.request("GET", "/accounts/login/")
        browser.request("POST", "/accounts/login/", form={"username": user.username, "password": PASSWORD,
                                                          "csrfmiddlewaretoken": csrf_token(page)})
        browser.screen = None
        browsers.append(browser)
    rng, kinds, measuring = random.Random(1), [], [False]

    def send(browser, kind, *args, **kwargs):
        if measuring[0]:
            os.getppid()  # the request's first edge (a callgrind dump)
            kinds.append(kind)
        answer = browser.request(*args, **kwargs)
        if measuring[0]:
            os.getppid()
        return answer

    def turn(browser) -> int:
        if browser.screen is None:
            _, headers, _ = browser.request("POST", f"/p/{SLUG}/work/next/")
            browser.screen = SCREEN_URL_RE.match(headers["Location"])
        assignment = int(browser.screen.group(1))
        _, _, page = send(browser, "screen", "GET", f"/a/{assignment}/")
        sentences = screen_sentences(page)
        version = screen_version(page)
        for sentence in sentences:
            path = {str(step): str(value) for step, value in protocol.path_for_label(rng.choice(list(Label))).items()}
            steps = [{"action": "answer", "step": step, "value": value, "at": int(time.time() * 1000)}
                     for step, value in path.items()]
            body = {"version": version, "changes": [{"request_id": uuid.uuid4().hex, "sentence": sentence,
                                                     "steps": steps, "path": path, "seconds": 3.0}]}
            status, _, answer = send(browser, "sync", "POST", f"/a/{assignment}/sync/", json_body=body)
            assert status == 200, (status, answer[:300])
            version = json.loads(answer)["version"]
        status, headers, _ = send(browser, "submit", "POST", f"/a/{assignment}/submit/", htmx=True,
                                  form={"version": version, "request_id": uuid.uuid4().hex})
        assert status == 200 and "HX-Redirect" in headers, status
        browser.screen = SCREEN_URL_RE.match(headers["HX-Redirect"])
        return len(sentences)

    for number in range(WARM_UP_TURNS):
        turn(browsers[number % 2])
    measuring[0] = True
    labelled = sum(turn(browsers[number % 2]) for number in range(turns))
    print(json.dumps({"labelled": labelled, "kinds": kinds}))


def _instructions(dump: Path) -> int:
    return int(re.search(r"^totals: (\d+)", dump.read_text(), re.M).group(1))


def measure(tree: str, database_url: str, turns: int, work: Path) -> dict:
    """The tree's instructions per labelled sentence, in all and by request kind (per request and per sentence)."""
    out = work / "callgrind.out"
    command = ["valgrind", "--tool=callgrind", "--dump-before=getppid", f"--callgrind-out-file={out}",
               sys.executable, __file__, "--child", "--tree", tree, "--turns", str(turns)]
    done = subprocess.run(command, env=environment(database_url), capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    # Dump 1 is everything before the first mark; then each request is one dump and the gap after it the next.
    by_kind = defaultdict(list)
    for position, kind in enumerate(figures["kinds"]):
        by_kind[kind].append(_instructions(work / f"callgrind.out.{2 * position + 2}"))
    labelled = figures["labelled"]
    return {"labelled": labelled,
            "per_sentence_millions": round(sum(map(sum, by_kind.values())) / labelled / 1e6, 3),
            "by_kind": {kind: {"requests": len(counts), "millions_each": round(sum(counts) / len(counts) / 1e6, 3),
                               "millions_per_sentence": round(sum(counts) / labelled / 1e6, 3)}
                        for kind, counts in by_kind.items()}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=False, help="the tree of the code before")
    parser.add_argument("--new", default=".", help="the tree of the code after")
    parser.add_argument("--turns", type=int, default=8, help="measured turns per tree (five sentences each)")
    parser.add_argument("--setup-turns", type=int, default=300)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/")
    parser.add_argument("--json")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--tree", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(Path(args.tree).resolve(), args.turns)
        return 0
    import tempfile

    import psycopg

    server = args.database_url.rstrip("/")
    trees = {name: str(Path(tree).resolve()) for name, tree in (("old", args.old), ("new", args.new)) if tree}
    report = {"turns": args.turns}
    with psycopg.connect(server + "/postgres", autocommit=True) as admin:
        for name, tree in trees.items():
            template, copy = f"flow_instructions_{name}_template", f"flow_instructions_{name}"
            for database in (template, copy):
                admin.execute(f"DROP DATABASE IF EXISTS {database}")
            # Each tree's own schema and project (their migrations may differ), then a fresh copy to measure on.
            admin.execute(f"CREATE DATABASE {template}")
            subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=tree,
                           env=environment(f"{server}/{template}"), check=True)
            run_child(tree, f"{server}/{template}", "--setup", "--setup-turns", str(args.setup_turns))
            admin.execute(f"CREATE DATABASE {copy} TEMPLATE {template}")
            with tempfile.TemporaryDirectory() as work:
                report[name] = measure(tree, f"{server}/{copy}", args.turns, Path(work))
            for database in (copy, template):
                admin.execute(f"DROP DATABASE {database}")
            print(f"{name}: {json.dumps(report[name])}", flush=True)
    if len(trees) == 2:
        report["new_over_old"] = round(report["new"]["per_sentence_millions"] / report["old"]["per_sentence_millions"], 3)
    print(json.dumps(report, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
