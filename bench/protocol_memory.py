"""Memory per protocol version: a worker's RSS over N new versions of a large protocol document (issue 38, item 7).

    .venv/bin/python bench/protocol_memory.py [--versions 21] [--chars 4000000]

For each new version, what a worker computes the first time a screen shows it, through the cached functions
the pages call: the loaded protocol (``projects.protocols.protocol_of_version``), its reading
(``protocol.groups.reading``), the annotation screen's description (``work.page._description_json``), the label
styles (``gold_tags.label_styles``), the pre-labeler's stages and the evaluation's scoring. Each mode runs in a
fresh process, its RSS (``VmRSS``) read after a garbage collection, before the first version and after each.

- ``bounded``: the caches as they are (``annotator/domain/protocol/cache.py``: the last CACHED_PROTOCOLS
  documents per cache);
- ``unbounded``: the same caches given no bound (size 10**9), which is what the plain dicts before did.

The documents are the 12-step, 20-label protocol of bench/protocol_walk.py, each label given examples up to
``--chars`` characters in all (4,000,000: the issue's 4 MB documents, over PROTOCOL_MAX_CHARS: the functions
are called directly, as a worker would for versions stored before the limit; ``--chars 500000`` is the most a
route now accepts). Prints one JSON object (docs/benchmarks.md keeps the figures).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
EXAMPLE_CHARS = 20_000  # the schema's longest text
CACHES = [("annotator.projects.protocols", "_loaded"), ("annotator.domain.protocol.groups", "_BY_CHECKSUM"),
          ("annotator.work.page", "_DESCRIPTIONS"), ("annotator.templatetags.gold_tags", "_STYLES"),
          ("autolabel.labelling.stages", "_CACHE"), ("autolabel.evaluation.protocol_views", "_BY_CHECKSUM")]


def rss_mb() -> float:
    gc.collect()
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def document(number: int, chars: int) -> dict:
    from bench.protocol_walk import large_document

    found = large_document()
    found["name"] = f"Twelve steps, version {number}"
    per_label = max(1, chars // len(found["labels"]))
    for position, label in enumerate(found["labels"]):
        examples, left = [], per_label
        while left > 0 and len(examples) < 20:
            size = min(EXAMPLE_CHARS, left)
            text = f"v{number} l{position} e{len(examples)} " + "An example sentence of the label. " * (size // 34 + 1)
            examples.append(text[:size])
            left -= size
        label["examples"] = examples
    return found


def run_mode(mode: str, versions: int, chars: int) -> dict:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.development")
    django.setup()
    import importlib

    from annotator.domain.protocol.groups import reading
    from annotator.projects.protocols import protocol_of_version
    from annotator.templatetags.gold_tags import label_styles
    from annotator.work.page import _description_json
    from autolabel.evaluation.protocol_views import scoring
    from autolabel.labelling.stages import stages_of

    if mode == "unbounded":
        for module, name in CACHES:
            getattr(importlib.import_module(module), name).size = 10 ** 9
    # The stored rows' text, written before the first reading; each version is read from it as a row is (fresh
    # objects that only the caches keep once the request is done).
    stored = [json.dumps(document(n, chars), separators=(",", ":")) for n in range(1, versions + 1)]
    start = rss_mb()
    series, started = [], time.perf_counter()
    for number, text in enumerate(stored, start=1):
        row = SimpleNamespace(pk=number, checksum="", document=json.loads(text))
        protocol = protocol_of_version(row)
        reading(protocol)
        _description_json(SimpleNamespace(protocol_version_id=number, protocol_version=row))
        label_styles(protocol)
        stages_of(protocol)
        scoring(protocol)
        del row, protocol
        series.append(round(rss_mb() - start, 1))
    return {"mode": mode, "versions": versions, "document_chars": len(stored[0]), "rss_start_mb": round(start, 1),
            "growth_mb": series[-1], "growth_per_version_mb": series, "seconds": round(time.perf_counter() - started, 1),
            "cached": {f"{module}.{name}": len(getattr(importlib.import_module(module), name)) for module, name in CACHES}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", type=int, default=21)
    parser.add_argument("--chars", type=int, default=4_000_000)
    parser.add_argument("--mode", choices=["bounded", "unbounded"], help=argparse.SUPPRESS)  # one child process
    options = parser.parse_args()
    if options.mode:
        print(json.dumps(run_mode(options.mode, options.versions, options.chars)))
        return
    results = []
    for mode in ("unbounded", "bounded"):
        done = subprocess.run([sys.executable, __file__, "--mode", mode, "--versions", str(options.versions),
                               "--chars", str(options.chars)], capture_output=True, text=True, check=True, cwd=ROOT)
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "results": results}, indent=1))


if __name__ == "__main__":
    main()
