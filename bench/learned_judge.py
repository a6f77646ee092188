"""The learned judge on CogniBench: its cross-validated figures (and the variants tried), the time to train it on
1,250 gold sentences and to predict 240,000 sentences.

    .venv/bin/python bench/learned_judge.py                      # figures of the shipped options, the timings
    .venv/bin/python bench/learned_judge.py --variants           # every variant tried, same folds
    .venv/bin/python bench/learned_judge.py --nested             # the figure of choosing a variant by inner CV
    .venv/bin/python bench/learned_judge.py --splits 6           # the spread of the figures over other group splits
    .venv/bin/python bench/learned_judge.py --data /work/shared/data/cognibench-sample
    .venv/bin/python bench/learned_judge.py --round              # a budget round: judge_train's work, then predict
    .venv/bin/python bench/learned_judge.py --data DIR --database-url sqlite:////tmp/release.sqlite3   # another copy

It imports the CogniBench files into a database of its own (var/bench-learned.sqlite3) once. The sample has
253 gold sentences: the training time on 1,250 is measured on the sample's gold sentences repeated (each copy a
turn of its own) and the prediction time on its 431 sentences repeated to 240,000, each copy with references of
its own (as many as a job's turns); both are times only, never figures (a copy in training and test would be a
leak).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The shared sample sits beside the repository (../shared), or one level up from a worktree (as tests/conftest.py).
DATA = next((base / "shared" / "data" / "cognibench-sample" for base in (ROOT.parent, ROOT.parent.parent)
             if (base / "shared" / "data" / "cognibench-sample").exists()),
            ROOT.parent / "shared" / "data" / "cognibench-sample")

VARIANTS = {
    "chosen by inner CV (shipped)": {"strategy": "choose"},
    "steps": {"strategy": "steps", "regularization": 1.0},
    "flat": {"strategy": "flat", "regularization": 1.0},
    "flat, C=0.3": {"strategy": "flat", "regularization": 0.3},
    "verdict": {"strategy": "verdict", "regularization": 1.0},
    "verdict, C=0.3": {"strategy": "verdict", "regularization": 0.3},
    "steps, dense features only": {"strategy": "steps", "use_ngrams": False},
    "steps, n-grams only": {"strategy": "steps", "use_dense": False},
    "steps, C=0.3": {"strategy": "steps", "regularization": 0.3},
    "steps, C=3": {"strategy": "steps", "regularization": 3.0},
    "steps, with cue features": {"strategy": "steps", "use_cues": True},
    "steps, no character n-grams": {"strategy": "steps", "use_characters": False},
    "steps, with the stem overlaps": {"strategy": "steps", "use_stems": True},
    "steps, aligned to the best reference sentence": {"strategy": "steps", "use_alignment": True},
    "steps, unweighted classes": {"strategy": "steps", "balanced": False},
    "steps, tuned decision": {"strategy": "steps", "tune_decision": True},
    "flat, tuned decision": {"strategy": "flat", "tune_decision": True},
}
# What the nested cross-validation chooses among (in each outer fold, by grouped CV on its training turns only).
CANDIDATES = ("steps", "flat", "steps, C=0.3", "steps, C=3", "steps, with cue features",
              "steps, no character n-grams", "steps, tuned decision",
              "steps, with the stem overlaps", "steps, aligned to the best reference sentence")


def nested(protocol, gold, folds=5, inner_folds=4):
    """The figure of choosing the options by cross-validation: in each outer fold (grouped by turn) every
    candidate is cross-validated on the training turns only, the best is fitted on them and predicts the held-out
    turns; the held-out predictions are scored together. Nothing is chosen on a turn it is then scored on."""
    import numpy as np

    from autolabel.learned.validation import _figures, _folds, cross_validate, fit_judge, score_probabilities

    labels = tuple(protocol.labels)
    _, outer = _folds(gold.turns, folds)
    probabilities = np.zeros((len(gold), len(labels)))
    chosen = []
    for train, test in outer:
        pick = lambda rows: [gold.examples[i] for i in rows]  # noqa: E731
        scores = {}
        for name in CANDIDATES:
            inner = cross_validate(protocol, pick(train), [gold.gold[i] for i in train],
                                   [gold.turns[i] for i in train], [gold.words[i] for i in train],
                                   folds=inner_folds, curve_shares=(1.0,), **VARIANTS[name])
            scores[name] = inner["cross_validated"]["macro_f1"] or 0.0
        best = max(CANDIDATES, key=lambda name: scores[name])  # ties: the first listed
        chosen.append(best)
        model = fit_judge(protocol, pick(train), [gold.gold[i] for i in train], [gold.turns[i] for i in train],
                          [gold.words[i] for i in train], **VARIANTS[best])
        probabilities[test] = model.predict_proba(pick(test))
    report = score_probabilities(protocol, labels, probabilities, gold.gold, gold.words)
    return {**_figures(protocol, report), "chosen": chosen}


# ``--splits``: the shapes whose figure is read over several group splits (the shipped one first).
SPREAD = ("chosen by inner CV (shipped)", "steps", "flat", "flat, C=0.3", "verdict", "verdict, C=0.3")


def spread(protocol, gold, splits, folds=5, shapes=SPREAD):
    """How much the cross-validated macro F1 owes to the one split the bar reads: each of ``SPREAD`` scored over
    ``splits`` group splits (``validation.group_splits``, as ``judge_train`` measures its headline: the first
    ``GroupKFold``'s own, the others ``GroupKFold(shuffle=True)`` with seeds 1, 2, ...; whole turns held out in
    every one). Nothing is chosen on them: the spread says how far a difference between two shapes, or a figure
    from a goal, is only the split."""
    from autolabel.learned.validation import cross_validate

    found = {}
    for name in shapes:
        figures = cross_validate(protocol, gold.examples, gold.gold, gold.turns, gold.words, folds=folds,
                                 splits=splits, curve_shares=(1.0,), **VARIANTS[name])["cross_validated"]["splits"]
        found[name] = {"macro_f1": [round(f, 4) for f in figures["macro_f1"]], "mean": figures["mean"],
                       "sd": figures["sd"], "views": figures["views"]}
        print("splits", name, json.dumps(found[name]), flush=True)
    return found


def pool(rows, size):
    """``size`` sentences to predict: the pool repeated, each copy reading references of its own (a job's 240,000
    sentences come in some 28,000 turns, each with its reference: what is computed once per reference is paid once
    per turn, as in a job)."""
    from autolabel.learned.features import Example

    many, copy = [], 0
    while len(many) < size:
        own = {reference: f"Copy {copy}. {reference}" for reference in {row[1] for row in rows}}
        many += [Example(text, own[reference], question, index, 8) for text, reference, question, index in rows]
        copy += 1
    return many[:size]


def budget_round(protocol, gold, many, learning_curve: bool, one_process: bool = False) -> dict:
    """A budget round: what ``judge_train`` computes (the figures over ``validation.SPLITS`` group splits, the
    learning curve only with ``learning_curve``, the fit on all the gold), then every sentence of ``many`` predicted
    in one call (in two processes, ``model.PARALLEL_ABOVE``, unless ``one_process``) and labelled by the judge's
    rule, as a job's sentences are."""
    from autolabel.learned.decision import votes_for
    from autolabel.learned.model import PARALLEL_ABOVE
    from autolabel.learned.training import DEFAULT_OPTIONS, train_figures
    from autolabel.learned.validation import SPLITS, fit_judge

    times = {}
    started, cpu = time.perf_counter(), time.process_time()
    train_figures(protocol, gold, DEFAULT_OPTIONS, splits=SPLITS, learning_curve=learning_curve)
    model = fit_judge(protocol, gold.examples, gold.gold, gold.turns, gold.words, **DEFAULT_OPTIONS)
    times["train_seconds"] = round(time.perf_counter() - started, 1)
    middle = time.perf_counter()
    probabilities = model.predict_proba(many, parallel_above=len(many) if one_process else PARALLEL_ABOVE)
    times["probabilities_seconds"] = round(time.perf_counter() - middle, 1)
    for row in probabilities:
        votes_for(row, model.labels, protocol)
    times["predict_seconds"] = round(time.perf_counter() - middle, 1)  # the probabilities and the votes
    times["round_seconds"] = round(time.perf_counter() - started, 1)
    times["cpu_seconds_this_process"] = round(time.process_time() - cpu, 1)
    return {"sentences": len(many), "learning_curve": learning_curve, "one_process": one_process, **times}


def setup(args):
    sys.path.insert(0, str(ROOT))
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.development")
    os.environ.setdefault("DEBUG", "false")
    import django

    django.setup()
    from django.core.management import call_command

    from annotator.models import Project

    call_command("migrate", verbosity=0)
    if not Project.objects.filter(slug="cb").exists():
        call_command("import_cognibench", str(args.data / "dialogues.json"), str(args.data / "labels.json"),
                     project="cb", create=True, verbosity=0)
    return Project.objects.get(slug="cb")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--variants", action="store_true", help="Cross-validate every variant tried.")
    parser.add_argument("--nested", action="store_true",
                        help="Also the nested cross-validation of choosing among the candidate variants.")
    parser.add_argument("--splits", type=int, default=0,
                        help="Also the macro F1 of the main shapes over this many group splits (the bar's first).")
    parser.add_argument("--spread", nargs="*", metavar="SHAPE",
                        help="With --splits: only these shapes (names of VARIANTS), not every one of SPREAD.")
    parser.add_argument("--database-url", default=f"sqlite:///{ROOT / 'var' / 'bench-learned.sqlite3'}",
                        help="Default: a database of its own (no pre-labelling job, so no votes to read).")
    parser.add_argument("--train-sentences", type=int, default=1250)
    parser.add_argument("--predict-sentences", type=int, default=240_000)
    parser.add_argument("--round", action="store_true",
                        help="Only a budget round: judge_train's work on the gold, then --predict-sentences predicted.")
    parser.add_argument("--learning-curve", action="store_true", help="With --round: the learning curve too.")
    parser.add_argument("--one-process", action="store_true", help="With --round: predict in this process alone.")
    args = parser.parse_args()
    project = setup(args)
    from annotator.models import Sentence

    rows = list(Sentence.objects.filter(turn__dialogue__project=project).values_list(
        "text", "turn__dialogue__reference", "turn__user_message", "index"))

    from annotator.projects.protocols import protocol_for
    from autolabel.learned.data import gold_set
    from autolabel.learned.training import DEFAULT_OPTIONS, train_figures
    from autolabel.learned.decision import votes_for
    from autolabel.learned.validation import fit_judge

    protocol = protocol_for(project)
    gold = gold_set(project)
    results = {"gold_sentences": len(gold), "turns": len(set(gold.turns))}
    if args.round:
        results["round"] = budget_round(protocol, gold, pool(rows, args.predict_sentences), args.learning_curve,
                                        args.one_process)
        results["load_average"] = os.getloadavg()
        print(json.dumps(results, indent=2))
        return
    variants = VARIANTS if args.variants else {"chosen by inner CV (shipped)": DEFAULT_OPTIONS}
    for name, options in variants.items():
        started, cpu = time.perf_counter(), time.process_time()
        figures = train_figures(protocol, gold, options, splits=1)  # --splits: the spread over several
        results[name] = {**figures["cross_validated"], "seconds": round(time.perf_counter() - started, 1),
                         "cpu_seconds": round(time.process_time() - cpu, 1)}
        if name == "chosen by inner CV (shipped)":
            results["learning_curve"] = [(p["sentences"], p["macro_f1"]) for p in figures["learning_curve"]]
        print(name, json.dumps(results[name]), flush=True)

    if args.nested:
        started, cpu = time.perf_counter(), time.process_time()
        results["nested"] = {**nested(protocol, gold), "seconds": round(time.perf_counter() - started, 1),
                             "cpu_seconds": round(time.process_time() - cpu, 1)}
        print("nested", json.dumps(results["nested"]), flush=True)

    if args.splits:
        results["splits"] = spread(protocol, gold, args.splits, shapes=args.spread or SPREAD)

    copies = -(-args.train_sentences // len(gold))
    examples = (gold.examples * copies)[: args.train_sentences]
    labels = (gold.gold * copies)[: args.train_sentences]
    started, cpu = time.perf_counter(), time.process_time()
    # With the choosing: every candidate cross-validated on the copies' turns (each copy a turn), then the fit.
    turns = [turn + copy * 1_000_000 for copy in range(copies) for turn in gold.turns][: args.train_sentences]
    words = (gold.words * copies)[: args.train_sentences]
    model = fit_judge(protocol, examples, labels, turns, words, **DEFAULT_OPTIONS)
    results["fit_seconds"] = {"sentences": len(examples), "seconds": round(time.perf_counter() - started, 2),
                              "cpu_seconds": round(time.process_time() - cpu, 2)}
    print("fit", results["fit_seconds"], flush=True)

    many = pool(rows, args.predict_sentences)
    started, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(many), 10_000):
        for row in model.predict_proba(many[start:start + 10_000]):
            votes_for(row, model.labels, protocol)
    results["predict_seconds"] = {"sentences": len(many), "seconds": round(time.perf_counter() - started, 1),
                                  "cpu_seconds": round(time.process_time() - cpu, 1)}
    print("predict", results["predict_seconds"], flush=True)
    results["load_average"] = os.getloadavg()
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
