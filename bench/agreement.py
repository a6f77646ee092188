"""Agreement over 234,000 sentences x 2 annotators: time and peak memory.

    .venv/bin/python bench/agreement.py [--sentences N] [--protocol cognibench|large]

``--protocol large``: bench/protocol_walk.py's protocol of 12 steps and 20 labels (labels drawn with
geometrically falling frequencies) instead of CogniBench's built-in one.

Builds the label value counts with numpy from one rating per (sentence,
annotator), then computes everything the reports page shows from them: alpha
and percent agreement over the labels and every protocol step, the confusion
matrix between the annotators and Cohen's kappa. Peak memory is the process's
maximum resident set size (includes the Python interpreter and numpy).
"""

import argparse
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.development")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402

from annotator.domain import agreement
from annotator.domain.protocol.document import default_protocol


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sentences", type=int, default=234_000)
    parser.add_argument("--disagreement", type=float, default=0.08)
    parser.add_argument("--compare-package", action="store_true",
                        help="also time krippendorff.alpha(value_counts=...) itself and trace its peak allocation")
    parser.add_argument("--protocol", choices=("cognibench", "large"), default="cognibench")
    args = parser.parse_args()
    n = args.sentences
    if args.protocol == "large":
        from annotator.domain.protocol.document import load_protocol
        from bench.protocol_walk import large_document

        scheme = agreement.scheme_of(load_protocol(large_document()))
        weights = 0.8 ** np.arange(len(scheme.labels))
    else:
        scheme = agreement.scheme_of(default_protocol())  # the built-in CogniBench document
        # Mostly faithful, like CogniBench.
        weights = np.array([0.04, 0.62, 0.08, 0.05, 0.07, 0.09, 0.05])
    n_labels = len(scheme.labels)
    rng = np.random.default_rng(2026)
    first = rng.choice(n_labels, size=n, p=weights / weights.sum())
    second = np.where(rng.random(n) < args.disagreement, rng.choice(n_labels, size=n), first)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    started = time.perf_counter()
    units = np.concatenate([np.arange(n), np.arange(n)])
    counts = agreement.value_counts(units, np.concatenate([first, second]), n_labels, n)
    result = agreement.label_and_step_measures(counts, scheme)
    table = agreement.confusion_matrix(first, second, n_labels)
    kappa = agreement.cohen_kappa(table)
    elapsed = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"sentences: {n:,} x 2 annotators ({len(scheme.labels)} labels)")
    for name, m in result.items():
        print(f"  {name:<13} alpha={m.alpha if m.alpha is None else round(m.alpha, 4)!s:<8} "
              f"percent={round(m.percent, 4)!s:<8} units={m.units:,}")
    print(f"  Cohen's kappa={kappa:.4f}")
    print(f"time: {elapsed:.3f} s (one value-count row per sentence)")

    # What the selector does: identical sentences counted once, with a weight.
    started = time.perf_counter()
    rows, weights = agreement.distinct_rows(counts)
    weighted = {"label": agreement.measures(rows, weights=weights)}
    for step in scheme.steps:
        weighted[step] = agreement.measures(agreement.step_counts(rows, step, scheme), weights=weights)
    elapsed_weighted = time.perf_counter() - started
    assert all(abs((weighted[k].alpha or 0) - (result[k].alpha or 0)) < 1e-9 for k in result)
    print(f"time: {elapsed_weighted:.3f} s (from the same counts: the {len(rows)} distinct rows with weights, as the selector does; same alphas)")
    print(f"peak RSS: {peak:.0f} MB (before computing: {rss_before:.0f} MB, with Django loaded)")
    print(f"machine: {os.cpu_count()} CPUs, load average {' / '.join(f'{x:.1f}' for x in os.getloadavg())} (1/5/15 min)")
    if args.compare_package:
        import tracemalloc

        import krippendorff

        tracemalloc.start()
        started = time.perf_counter()
        theirs = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
        elapsed = time.perf_counter() - started
        _, traced = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"krippendorff.alpha(value_counts=...) alone: alpha={theirs:.4f} (ours {result['label'].alpha:.4f}), "
              f"{elapsed:.3f} s, {traced / 1e6:.0f} MB allocated at its peak (units x values x values arrays)")


if __name__ == "__main__":
    main()
