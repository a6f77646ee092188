"""Key -> next question on screen, and server requests per labelled sentence, on the annotation page in Chromium.

    .venv/bin/python bench/annotation_keys.py [--sentences 40] [--latency 300] [--gap 20] [--app-root DIR] [--profile]
                                              [--protocol cognibench|large]

``--app-root`` serves another copy of the application (e.g. the code before
issue #15, ``git archive 309352a | tar -x -C /tmp/before``) with the same
database and measurement; a page without the save status is waited for by
polling the database instead.

What it does, in one command:

1. a fresh SQLite database in var/ (migrated, static files collected), one
   project with one turn of ``--sentences`` sentences and one annotator;
2. serves the app on loopback with gunicorn (DEBUG off), as deployed;
3. opens the annotation screen in headless Chromium (Debian's), sets
   ``--latency`` ms of emulated network latency (CDP
   ``Network.emulateNetworkConditions``) and types the whole turn with
   ``--gap`` ms between keys: the sentences cycle through the complete paths
   of the protocol, each answer typed with its key (``--protocol large``: the
   project has bench/protocol_walk.py's 12 steps and 20 labels instead of
   CogniBench's built-in protocol);
4. measures, for every key, the time from the key event (``event.timeStamp``)
   to the next ``requestAnimationFrame`` callback (the frame that paints the
   result), the time until the page's key handler has drawn the new state, and
   what the panel shows in that frame: the question the protocol asks next (or
   the next sentence when one got its label);
5. counts the page's POST requests to the server, waits for "Saved", and checks
   the database: every sentence has the label typed, every step is once in the
   audit history.

``--profile`` also samples the page's JavaScript while the keys are typed (CDP
``Profiler``, every 100 µs) and reports where the main thread's time went: the
functions with the most self time, and the share of garbage collection, layout
and paint the samples caught ("(program)" is the browser's own work).

Prints one JSON object (docs/benchmarks.md keeps the figures).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.infra import PYTHON, Gunicorn, app_env, machine_speed_ms, percentile  # noqa: E402

SLUG = "bench-keys"
USERNAME, PASSWORD = "keys-annotator", "bench-keys-password"
CHROMIUM = "/usr/bin/chromium"

# Runs in the page before its own scripts: the key's time, and what the panel shows in the next frame.
MEASURE = """
window.__keys = [];
window.__handled = [];
// Bubbling on window: after the page's own handler on document has drawn the new state.
window.addEventListener("keydown", (event) => { window.__handled.push(performance.now() - event.timeStamp); });
window.addEventListener("keydown", (event) => {
  const started = event.timeStamp;
  requestAnimationFrame(() => {
    const question = document.getElementById("question-text");
    const title = document.getElementById("panel-title");
    window.__keys.push({ key: event.key, ms: performance.now() - started,
                         question: question ? question.textContent : "", title: title ? title.textContent : "" });
  });
}, true);
"""


def chosen_protocol(name: str):
    """The protocol typed through: CogniBench's built-in one, or bench/protocol_walk.py's 12 steps and 20 labels."""
    from annotator.domain.protocol.document import COGNIBENCH, load_protocol
    from bench.protocol_walk import large_document

    return COGNIBENCH if name == "cognibench" else load_protocol(large_document())


def setup(sentences: int, protocol_name: str = "cognibench") -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from annotator.models import Membership
    from annotator.domain.vocabulary import Role
    from bench.synthetic import create_synthetic_project

    project, _ = create_synthetic_project(SLUG, turns=1, sentences_per_turn=sentences, reference_words=300,
                                          labelled=False, name="Key benchmark")
    if protocol_name != "cognibench":
        from annotator.projects.protocol_services import protocol_set

        protocol_set(project, chosen_protocol(protocol_name).document)
    user = get_user_model().objects.create_user(USERNAME, password=PASSWORD)
    Membership.objects.create(project=project, user=user, role=Role.ANNOTATOR)


def planned_walks(sentences: int, protocol) -> list[tuple[dict, list[str]]]:
    """(path, keys) per sentence: the protocol's complete paths in turn, each answer typed with its key."""
    steps = protocol.describe()["steps"]
    keys_of = {(step, answer["value"]): answer["key"] for step, described in steps.items()
               for answer in described["answers"]}
    paths = protocol.paths()
    walks = []
    for n in range(sentences):
        path = paths[n % len(paths)]
        walks.append((path, [keys_of[(step, value)] for step, value in path.items()]))
    return walks


def expected_frames(walks, protocol) -> list[tuple[str, str]]:
    """What the panel should show in the frame after each key: (question, panel title)."""
    frames = []
    total = len(walks)
    for number, (path, _) in enumerate(walks, start=1):
        walked = {}
        for step, value in path.items():
            walked[step] = value
            following = protocol.next_step(walked)
            if following is not None:
                frames.append((protocol.step_question(following), f"Sentence {number} of {total}"))
            elif number < total:
                frames.append((protocol.step_question(protocol.start), f"Sentence {number + 1} of {total}"))
            else:
                frames.append(("", f"Sentence {number} of {total}"))
    return frames


def run(args) -> dict:
    from playwright.sync_api import expect, sync_playwright

    database = ROOT / "var" / "bench-keys.sqlite3"
    database.parent.mkdir(exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(str(database) + suffix).unlink(missing_ok=True)
    env = app_env(f"sqlite:///{database}")
    app_root = Path(args.app_root).resolve() if args.app_root else ROOT
    env["VAR_DIR"] = str(app_root / "var")
    for command in (["migrate", "--noinput"], ["collectstatic", "--noinput"]):
        subprocess.run([PYTHON, "manage.py", *command], cwd=app_root, env=env, check=True, capture_output=True)
    subprocess.run([PYTHON, __file__, "--setup", "--sentences", str(args.sentences), "--protocol", args.protocol],
                   cwd=ROOT, env=env, check=True)
    os.environ.update({"DATABASE_URL": env["DATABASE_URL"], "DJANGO_SETTINGS_MODULE": "config.settings.development",
                       "DJANGO_ALLOW_ASYNC_UNSAFE": "true"})
    import django

    django.setup()
    protocol = chosen_protocol(args.protocol)
    walks = planned_walks(args.sentences, protocol)
    server = Gunicorn(env, workers=2)
    server.start(cwd=app_root) if args.app_root else server.start()
    posts = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                                 args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_context(base_url=server.url).new_page()
            page.set_default_timeout(120_000)
            page.goto("/accounts/login/")
            page.fill("input[name=username]", USERNAME)
            page.fill("input[name=password]", PASSWORD)
            page.locator("form [type=submit]").last.click()
            page.wait_for_load_state()
            page.goto(f"/p/{SLUG}/work/")
            page.add_init_script(MEASURE)
            page.locator("#start-button").click()
            page.wait_for_url("**/a/**")
            expect(page.locator("#panel-title")).to_have_text(f"Sentence 1 of {args.sentences}")
            cdp = page.context.new_cdp_session(page)
            cdp.send("Network.enable")
            cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": args.latency,
                                                          "downloadThroughput": -1, "uploadThroughput": -1})
            page.on("request", lambda request: posts.append(request.url) if request.method == "POST" else None)
            if args.profile:
                cdp.send("Profiler.enable")
                cdp.send("Profiler.setSamplingInterval", {"interval": 100})
                cdp.send("Profiler.start")
            started = time.monotonic()
            for _, keys in walks:
                for key in keys:
                    page.keyboard.press(key)
                    page.wait_for_timeout(args.gap)
            typed_in = time.monotonic() - started
            profile = cdp.send("Profiler.stop")["profile"] if args.profile else None
            if page.locator("#save-status").count():
                expect(page.locator("#save-status")).to_have_text("Saved", timeout=300_000)
            else:
                wait_for_database(args.sentences)
            all_saved_in = time.monotonic() - started
            frames = page.evaluate("window.__keys")
            handled = page.evaluate("window.__handled")
            browser.close()
    finally:
        server.stop()
    figures = report(args, walks, frames, handled, posts, typed_in, all_saved_in)
    if profile is not None:
        figures["profile_self_ms"] = self_times(profile, len(frames))
    return figures


def self_times(profile: dict, keys: int, top: int = 15) -> dict:
    """Self time per function (name, file:line) over the typing, in ms per key, the largest first."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    spent = {}
    for node_id, delta in zip(profile["samples"], profile["timeDeltas"]):
        frame = nodes[node_id]["callFrame"]
        name = frame["functionName"] or "(anonymous)"
        where = f"{frame['url'].rsplit('/', 1)[-1]}:{frame['lineNumber'] + 1}" if frame["url"] else ""
        key = f"{name} {where}".strip()
        spent[key] = spent.get(key, 0) + delta / 1000
    ranked = sorted(spent.items(), key=lambda item: -item[1])
    idle = spent.get("(idle)", 0.0)
    busy = sum(spent.values()) - idle
    busiest = [(name, ms) for name, ms in ranked if name != "(idle)"][:top]
    return {"busy_ms_per_key": round(busy / keys, 2), "top": {name: round(ms / keys, 3) for name, ms in busiest}}


def wait_for_database(sentences: int, quiet_for: float = 5.0, timeout: float = 300.0) -> None:
    """Until the annotation events stop changing for ``quiet_for`` seconds (the old page's requests are done)."""
    from annotator.models import AnnotationEvent

    deadline, last, since = time.monotonic() + timeout, -1, time.monotonic()
    while time.monotonic() < deadline:
        count = AnnotationEvent.objects.count()
        if count != last:
            last, since = count, time.monotonic()
        elif time.monotonic() - since >= quiet_for:
            return
        time.sleep(0.5)


def report(args, walks, frames, handled, posts, typed_in, all_saved_in) -> dict:
    from annotator.models import AnnotationEvent, SentenceAnnotation

    protocol = chosen_protocol(args.protocol)
    expected = expected_frames(walks, protocol)
    shown = [(f["question"], f["title"]) for f in frames]
    latencies = [f["ms"] for f in frames]
    labels = list(SentenceAnnotation.objects.order_by("sentence__index").values_list("label", flat=True))
    steps = sum(len(path) for path, _ in walks)
    return {
        "protocol": args.protocol, "sentences": args.sentences, "keys": len(frames), "latency_ms": args.latency, "gap_ms": args.gap,
        "machine_speed_ms": machine_speed_ms(),
        "key_to_next_frame_ms": {"p50": round(percentile(latencies, 50), 1), "p95": round(percentile(latencies, 95), 1),
                                 "max": round(max(latencies), 1)},
        "key_to_state_drawn_ms": {"p50": round(percentile(handled, 50), 1), "p95": round(percentile(handled, 95), 1)},
        "frames_showing_the_next_question": sum(1 for a, b in zip(shown, expected) if a == b),
        "typed_in_s": round(typed_in, 1), "all_saved_in_s": round(all_saved_in, 1),
        "post_requests": len(posts),
        "post_requests_per_labelled_sentence": round(len(posts) / args.sentences, 2),
        "one_post_per_step_would_be": round(steps / args.sentences, 2),
        "labels_as_typed": labels == [str(protocol.label_of(path)) for path, _ in walks],
        "answer_events": AnnotationEvent.objects.filter(action="answer").count(), "steps_typed": steps,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=40)
    parser.add_argument("--latency", type=int, default=300, help="emulated network latency, ms")
    parser.add_argument("--gap", type=int, default=20, help="ms between keys")
    parser.add_argument("--app-root", help="serve this copy of the application instead (a before/after comparison)")
    parser.add_argument("--profile", action="store_true", help="sample the page's JavaScript while typing")
    parser.add_argument("--protocol", choices=("cognibench", "large"), default="cognibench",
                        help="the project's protocol: CogniBench's, or bench/protocol_walk.py's 12 steps and 20 labels")
    parser.add_argument("--setup", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.setup:
        setup(args.sentences, args.protocol)
        return
    print(json.dumps(run(args), indent=2))


if __name__ == "__main__":
    main()
