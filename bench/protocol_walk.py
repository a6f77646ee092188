"""A 12-step, 20-label protocol against CogniBench's: loading, describe() and the walk, in Python and in Chromium.

    .venv/bin/python bench/protocol_walk.py [--rounds 200] [--no-browser]

Three protocols are measured the same way:

- ``python (before)``: CogniBench as the Python module it was before protocol documents (the frozen copy in
  tests/cognibench_reference.py, which the tests compare the document with);
- ``cognibench``: the built-in document (annotator/protocols/cognibench.json) through ``Protocol``;
- ``large``: a generated document of 12 steps and 20 labels (a spine of yes/no steps, the first with three
  answers and the last with eight), each label on one path of up to 12 answers.

Per protocol: ``load_protocol`` (schema + semantic checks + canonical form), ``describe()`` uncached with the
page's ``node_extras`` (what the annotation page embeds), and the walk the write path does per key: from the
empty path, for every complete path, ``next_step`` then ``answer`` for each answer, and at the end ``validate``
and ``label_of`` (µs per key). In Chromium (Debian's, headless), static/js/protocol_walk.js walks every path of
the described protocol the same way (nextStep + answer per key, labelOf at the end), µs per key.

Prints one JSON object (docs/benchmarks.md keeps the figures).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CHROMIUM = "/usr/bin/chromium"


def large_document() -> dict:
    """12 steps, 20 labels: s1 (3 answers), s2..s11 (yes -> next step, no -> a label), s12 (8 answers)."""
    steps, labels = [], []

    def label(n):
        labels.append({"id": f"l{n:02d}", "name": f"Label {n}", "definition": f"The {n}th outcome.",
                       "key": "123456789abdfghimopq"[n - 1]})
        return f"l{n:02d}"

    steps.append({"id": "s01", "question": "Step 1?", "definition": "", "answers": [
        {"value": "go", "label": "Go on", "next": "s02"},
        {"value": "a", "label": "A", "yields": label(1)}, {"value": "b", "label": "B", "yields": label(2)}]})
    for n in range(2, 12):
        steps.append({"id": f"s{n:02d}", "question": f"Step {n}?", "definition": "", "answers": [
            {"value": "yes", "label": "Yes", "yn": "y", "next": f"s{n + 1:02d}"},
            {"value": "no", "label": "No", "yn": "n", "yields": label(len(labels) + 1)}]})
    steps.append({"id": "s12", "question": "Step 12?", "definition": "", "answers": [
        {"value": f"v{k}", "label": f"Value {k}", "yields": label(len(labels) + 1)} for k in range(1, 9)]})
    return {"id": "large", "version": 1, "name": "Twelve steps", "start": "s01", "steps": steps, "labels": labels,
            "groups": {"hallucination": [lab["id"] for lab in labels[10:]]}}


def best_of(rounds: int, action) -> float:
    """The median of ``rounds`` timings of ``action`` (seconds)."""
    timings = []
    for _ in range(rounds):
        start = time.perf_counter()
        action()
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)


def walk_all(next_step, answer, validate, label_of, paths) -> int:
    keys = 0
    for path in paths:
        walked = {}
        for step, value in path.items():
            assert next_step(walked) == step
            walked = answer(walked, step, value)
            keys += 1
        validate(walked)
        assert label_of(walked) is not None
    return keys


def python_figures(rounds: int) -> dict:
    from annotator.domain.protocol.document import COGNIBENCH, load_protocol
    from tests import cognibench_reference as before

    figures = {}
    large = load_protocol(large_document())
    subjects = {
        "python (before)": (before, lambda: before.describe(node_extras=lambda p: {"evidence": before.evidence_required(p)}), None),
        "cognibench": (COGNIBENCH, lambda: COGNIBENCH.describe(lambda p: {"evidence": COGNIBENCH.evidence_required(p)}),
                       COGNIBENCH.document),
        "large": (large, lambda: large.describe(lambda p: {"evidence": large.evidence_required(p)}), large.document),
    }
    for name, (walker, describe, document) in subjects.items():
        paths = walker.paths()
        keys = walk_all(walker.next_step, walker.answer, walker.validate, walker.label_of, paths)
        walk = best_of(rounds, lambda: walk_all(walker.next_step, walker.answer, walker.validate, walker.label_of, paths))
        figures[name] = {
            "steps": len(walker.steps) if walker is not before else len(before.Step),
            "labels": len({walker.label_of(p) for p in paths}), "paths": len(paths),
            "keys_per_walk": keys,
            "load_ms": round(best_of(max(rounds // 10, 5), lambda: load_protocol(document)) * 1000, 3) if document else None,
            "describe_ms": round(best_of(rounds, describe) * 1000, 3),
            "describe_bytes": len(json.dumps(describe())),
            "walk_us_per_key": round(walk / keys * 1e6, 2),
        }
    return figures


BROWSER_WALK = """
(description) => {
  const protocol = new window.AnnotationProtocol(description);
  const paths = [];
  (function collect(node, path) {
    if (!node.step) { paths.push(path); return; }
    Object.keys(node.then).forEach((value) => collect(node.then[value], {...path, [node.step]: value}));
  })(description.tree, {});
  let keys = 0;
  const rounds = 200;
  const start = performance.now();
  for (let round = 0; round < rounds; round += 1) {
    for (const path of paths) {
      let walked = {};
      for (const step of Object.keys(path)) {
        if (protocol.nextStep(walked) !== step) { throw new Error("walk differs at " + step); }
        walked = protocol.answer(walked, step, path[step]);
        keys += 1;
      }
      if (!protocol.labelOf(walked)) { throw new Error("no label"); }
    }
  }
  return {keys_per_walk: keys / rounds, us_per_key: (performance.now() - start) * 1000 / keys};
}
"""


def browser_figures() -> dict:
    from playwright.sync_api import sync_playwright

    from annotator.domain.protocol.document import COGNIBENCH, load_protocol

    descriptions = {"cognibench": COGNIBENCH.describe(), "large": load_protocol(large_document()).describe()}
    script = (ROOT / "static" / "js" / "protocol_walk.js").read_text()
    figures = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        page = browser.new_page()
        page.set_content("<!doctype html><title>walk</title>")
        page.add_script_tag(content=script)
        for name, description in descriptions.items():
            runs = [page.evaluate(BROWSER_WALK, description) for _ in range(5)]
            figures[name] = {"keys_per_walk": runs[0]["keys_per_walk"],
                             "us_per_key": round(statistics.median(r["us_per_key"] for r in runs), 3)}
        browser.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.development")
    import django

    django.setup()
    result = {"python": python_figures(args.rounds)}
    if not args.no_browser:
        result["chromium"] = browser_figures()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
