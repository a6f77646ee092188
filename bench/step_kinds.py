"""Step kinds at scale (issue 42): agreement per kind, the pre-labeler's vote per kind, and the walk with kind values.

    .venv/bin/python bench/step_kinds.py [--sentences N]

On the shipped HalluDetect example (a choice, then a multiple, a scale and a text step), with N sentences
(default 234,000, the size of the reports' agreement bench) rated by two annotators:
- agreement of each kind step as the reports compute it (``agreement_kinds.step_agreement``): the multiple step's
  α over the MASI distance plus one binary α per answer, the scale's ordinal α, the text counted;
- the vote of each kind step over 5 samples a sentence (``kind_votes.vote_step``), as a pre-label job does;
- ``Protocol.answer`` over every step of every sentence's walk (what the save route does on every key).
Ratings are drawn at random (seeded) with a share of disagreements; times are wall and CPU of this process.
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

from annotator.domain import agreement_kinds  # noqa: E402
from annotator.domain.protocol.document import load_shipped  # noqa: E402
from autolabel.labelling import kind_votes  # noqa: E402

SAMPLES = 5


def timed(name, function, results):
    wall, cpu = time.perf_counter(), time.process_time()
    value = function()
    results[name] = {"seconds": round(time.perf_counter() - wall, 2), "cpu_seconds": round(time.process_time() - cpu, 2)}
    return value


def drawn_paths(protocol, count, disagreement, rng):
    """Two annotators' walks of ``count`` sentences: supported, or unsupported with error types, a severity and a
    justification; the second annotator differs on a share of them."""
    answers = [answer.value for answer in protocol.step("error_types").answers]

    def walk(choice_mask, severity, words):
        if not choice_mask.any():
            return {"supported": "yes"}
        chosen = [value for value, on in zip(answers, choice_mask) if on]
        return {"supported": "no", "error_types": chosen, "severity": int(severity), "justification": words}

    masks = rng.random((count, len(answers))) < 0.3
    severities = rng.integers(1, 6, size=count)
    first = [walk(masks[n], severities[n], f"reason {n}") for n in range(count)]
    flip = rng.random(count) < disagreement
    other_masks = np.where(flip[:, None], rng.random((count, len(answers))) < 0.3, masks)
    other_severities = np.where(flip, np.clip(severities + rng.integers(-1, 2, size=count), 1, 5), severities)
    second = [walk(other_masks[n], other_severities[n], f"why {n}") for n in range(count)]
    return first, second


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sentences", type=int, default=234_000)
    parser.add_argument("--disagreement", type=float, default=0.1)
    args = parser.parse_args()
    protocol = load_shipped("halludetect")
    rng = np.random.default_rng(2026)
    first, second = drawn_paths(protocol, args.sentences, args.disagreement, rng)
    pairs = list(zip(first, second))
    results = {}

    for step_id in protocol.kind_steps():
        step = protocol.step(step_id)
        units = agreement_kinds.path_units(pairs, step_id)
        measured = timed(f"agreement {step_id} ({step.kind})", lambda: agreement_kinds.step_agreement(step, units), results)
        alpha = "none" if measured.alpha is None else f"{measured.alpha:.4f}"
        results[f"agreement {step_id} ({step.kind})"]["figure"] = (
            f"{measured.metric} {alpha} over {measured.units:,} units"
            + (f", {len(measured.per_answer)} per-answer α" if measured.per_answer else ""))

    error_types = protocol.step("error_types")
    answers = [answer.value for answer in error_types.answers]
    samples = [[walk.get("error_types", []) for walk in (first[n], second[n], first[n], second[n], first[n])]
               for n in range(args.sentences)]
    timed("vote error_types (multiple, 5 samples)", lambda: [
        kind_votes.vote_step("multiple", values, threshold=3, answers=answers, minimum=error_types.min,
                             maximum=error_types.max) for values in samples], results)
    points = rng.integers(1, 6, size=(args.sentences, SAMPLES)).tolist()
    timed("vote severity (scale, 5 samples)", lambda: [kind_votes.vote_step("scale", values, threshold=3)
                                                       for values in points], results)

    def walk_every_key():
        for path in first:
            walked = {}
            for step_id, value in path.items():
                walked = protocol.answer(walked, step_id, value)
    timed("Protocol.answer, every step of every walk", walk_every_key, results)

    print(f"HalluDetect example, {args.sentences:,} sentences x 2 annotators, {args.disagreement:.0%} redrawn")
    for name, figures in results.items():
        print(f"  {name}: {figures['seconds']} s wall, {figures['cpu_seconds']} s CPU"
              + (f"; {figures['figure']}" if "figure" in figures else ""))
    print(f"  peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
