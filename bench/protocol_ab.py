"""The annotation screen and a saved sentence under CogniBench's protocol and a 12-step, 20-label one, same run.

    .venv/bin/python bench/protocol_ab.py [--rounds 6] [--turns 4] [--sentences 5]

One process, one fresh SQLite database in var/ (migrated once): two projects with the same synthetic corpus,
one on the built-in CogniBench document, one on ``bench/protocol_walk.py``'s generated document of 12 steps and
20 labels (set with ``protocol_set``, as a lead would). One annotator works ``--turns`` turns of each project
per round, the projects alternating which goes first (A B, then B A), exactly as the page does:
``POST /p/<slug>/work/next/`` (Start), ``GET /a/<id>/`` (the screen: counted as "screen"), one JSON
``POST /a/<id>/sync/`` per sentence with the steps of a label's walk and its path (counted as "sentence"),
``POST /a/<id>/submit/``. The labels cycle through every path of the project's protocol, so the long paths of the
large protocol (up to 12 steps in one save) are in every round. Requests go through Django's WSGI handler in
process (every middleware, CSRF, session cookie; bench/sync_ab.py's ``Browser``), so CPU
(``time.process_time``, SQLite's work included, since it runs in process) and wall time are the application's.
One warm-up turn per project is not counted. Prints per request kind the median CPU and wall milliseconds of each
protocol over all rounds, each round's medians, the ratio large / cognibench, the load average, and the saved
sentence's median CPU by the number of steps its walk has (a 12-step walk saves 12 steps and their audit rows:
more work than a 3-step one, whatever the protocol's code costs).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.infra import PYTHON, app_env  # noqa: E402
from bench.screen_page import SCREEN_URL_RE, csrf_token, screen_sentences, screen_version  # noqa: E402

PASSWORD = "protocol-ab-password-1"
SLUGS = {"cognibench": "protocol-ab-cognibench", "large": "protocol-ab-large"}


def setup(turns: int, sentences: int) -> None:
    from django.contrib.auth import get_user_model

    from annotator.domain.vocabulary import Role
    from annotator.models import Membership
    from annotator.projects.protocol_services import protocol_set
    from bench.protocol_walk import large_document
    from bench.synthetic import create_synthetic_project

    user = get_user_model().objects.create_user("protocol-ab", password=PASSWORD)
    for name, slug in SLUGS.items():
        project, _ = create_synthetic_project(slug, turns=turns, sentences_per_turn=sentences, reference_words=250,
                                              labelled=False, name=f"Protocol A/B {name}")
        project.overlap = 1
        project.save(update_fields=["overlap"])
        if name == "large":
            protocol_set(project, large_document())
        Membership.objects.create(project=project, user=user, role=Role.ANNOTATOR)


class Timed:
    """bench/sync_ab.py's in-process browser, timing each request's CPU and wall clock by kind."""

    def __init__(self, browser):
        self.browser = browser
        self.samples: dict[str, list[tuple[float, float]]] = {}
        self.counting = False

    def request(self, kind, method, path, **kwargs):
        wall, cpu = time.perf_counter(), time.process_time()
        answer = self.browser.request(method, path, **kwargs)
        if self.counting:
            self.samples.setdefault(kind, []).append((time.process_time() - cpu, time.perf_counter() - wall))
        return answer


def work_turn(timed: Timed, slug: str, protocol, paths_cycle) -> None:
    status, headers, _ = timed.request("start", "POST", f"/p/{slug}/work/next/")
    assert status == 302, status
    assignment = int(SCREEN_URL_RE.match(headers["Location"]).group(1))
    status, _, page = timed.request("screen", "GET", f"/a/{assignment}/")
    assert status == 200, status
    sentences = screen_sentences(page)
    version = screen_version(page)
    for sentence in sentences:
        path = next(paths_cycle)
        steps = [{"action": "answer", "step": step, "value": value, "at": int(time.time() * 1000)}
                 for step, value in path.items()]
        body = {"version": version, "changes": [{"request_id": uuid.uuid4().hex, "sentence": sentence,
                                                 "steps": steps, "path": dict(path), "seconds": 3.0 * len(steps)}]}
        status, _, answer = timed.request("sentence", "POST", f"/a/{assignment}/sync/", json_body=body)
        if timed.counting:  # the same save by the length of its walk: like with like across the two protocols
            timed.samples.setdefault(f"sentence of {len(steps)} steps", []).append(timed.samples["sentence"][-1])
        assert status == 200, (status, answer[:300])
        version = json.loads(answer)["version"]
    status, headers, _ = timed.request("submit", "POST", f"/a/{assignment}/submit/", htmx=True,
                                       form={"version": version, "request_id": uuid.uuid4().hex})
    assert status == 200 and "HX-Redirect" in headers, status


def measure(args) -> dict:
    import itertools

    import django

    django.setup()
    from django.core.wsgi import get_wsgi_application

    from annotator.models import Project
    from annotator.projects.protocols import protocol_for
    from bench.sync_ab import Browser

    browser = Browser(get_wsgi_application())
    _, _, page = browser.request("GET", "/accounts/login/")
    status, _, _ = browser.request("POST", "/accounts/login/", form={
        "username": "protocol-ab", "password": PASSWORD, "csrfmiddlewaretoken": csrf_token(page)})
    assert status == 302, status
    timers = {name: Timed(browser) for name in SLUGS}
    protocols = {name: protocol_for(Project.objects.get(slug=slug)) for name, slug in SLUGS.items()}
    cycles = {name: itertools.cycle(protocol.paths()) for name, protocol in protocols.items()}
    for name, slug in SLUGS.items():  # warm-up: imports, caches, the loaded protocol
        work_turn(timers[name], slug, protocols[name], cycles[name])
    rounds, loads = [], []
    for number in range(args.rounds):
        order = list(SLUGS) if number % 2 == 0 else list(reversed(SLUGS))
        loads.append(os.getloadavg()[0])
        this_round = {}
        for name in order:
            timed = timers[name]
            before = {kind: len(samples) for kind, samples in timed.samples.items()}
            timed.counting = True
            for _ in range(args.turns):
                work_turn(timed, SLUGS[name], protocols[name], cycles[name])
            timed.counting = False
            this_round[name] = {kind: round(statistics.median(c for c, _ in samples[before.get(kind, 0):]) * 1000, 2)
                                for kind, samples in timed.samples.items() if kind in ("screen", "sentence")}
        rounds.append(this_round)
        print(f"round {number + 1}: {json.dumps(this_round)} load {loads[-1]:.2f}", file=sys.stderr, flush=True)
    report = {"load_average_1min": {"min": min(loads), "max": max(loads)}, "rounds": rounds,
              "protocols": {name: {"steps": len(p.steps), "labels": len(p.labels), "paths": len(p.paths())}
                            for name, p in protocols.items()}}
    for name, timed in timers.items():
        report[name] = {kind: {"cpu_ms_median": round(statistics.median(c for c, _ in samples) * 1000, 2),
                               "wall_ms_median": round(statistics.median(w for _, w in samples) * 1000, 2),
                               "requests": len(samples)}
                        for kind, samples in timed.samples.items() if kind in ("screen", "sentence")}
    for name, timed in timers.items():
        report[name]["sentence_cpu_ms_median_by_steps"] = {
            int(kind.split()[2]): round(statistics.median(c for c, _ in samples) * 1000, 2)
            for kind, samples in sorted(timed.samples.items(), key=lambda item: item[0])
            if kind.startswith("sentence of ")}
    report["large_over_cognibench"] = {
        kind: {clock: round(report["large"][kind][clock] / report["cognibench"][kind][clock], 3)
               for clock in ("cpu_ms_median", "wall_ms_median")}
        for kind in ("screen", "sentence")}
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--turns", type=int, default=4, help="measured turns per project and round")
    parser.add_argument("--sentences", type=int, default=5, help="sentences per turn")
    parser.add_argument("--setup", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.setup:
        import django

        django.setup()
        setup(turns=(args.rounds * args.turns + 2) * 2, sentences=args.sentences)
        return 0
    database = ROOT / "var" / "protocol-ab.sqlite3"
    database.parent.mkdir(exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(str(database) + suffix).unlink(missing_ok=True)
    env = app_env(f"sqlite:///{database}")
    subprocess.run([PYTHON, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, check=True, capture_output=True)
    subprocess.run([PYTHON, __file__, "--setup", "--rounds", str(args.rounds), "--turns", str(args.turns),
                    "--sentences", str(args.sentences)], cwd=ROOT, env=env, check=True)
    os.environ.update({"DATABASE_URL": env["DATABASE_URL"], "DJANGO_SETTINGS_MODULE": env["DJANGO_SETTINGS_MODULE"],
                       "DEBUG": "0", "SECRET_KEY": env["SECRET_KEY"], "LOG_LEVEL": "WARNING", "VAR_DIR": env["VAR_DIR"]})
    print(json.dumps(measure(args), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
