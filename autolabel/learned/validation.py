"""The learned judge measured honestly, pure: k-fold cross-validation grouped by turn and a learning curve.

A turn's sentences share a reference, a question and often a mistake, so they are never split between training
and test: ``GroupKFold`` by turn. Each sentence is predicted once, by the model of the fold that held it out;
the out-of-fold predictions are scored together by the evaluation's own counting (``evaluation.scores``: P/R/F1
weighted by words per view of the protocol, the macro), exactly as a job's predictions are. Nothing is tuned on
the test folds: the options are fixed before the folds are drawn, and what ``strategy="choose"`` chooses is chosen
again inside each fold, on its training turns only (``choose_options``).

The learning curve trains, in every fold, on a growing share of the training turns (drawn with a fixed seed)
and scores the same out-of-fold predictions: macro F1 against the gold sentences used.

A prediction is labelled by the judge's one rule (``decision``: hallucinated when the hallucinated labels hold at
least half the probability, then the most probable label of that side), given to the evaluation's counting as the
votes a job of the judge writes (``decision.votes_for``), which vote that label.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from autolabel.evaluation.protocol_views import scoring
from autolabel.evaluation.scores import Item, detection_scores
from autolabel.learned.decision import THRESHOLD, judge_decision, votes_for
from autolabel.learned.features import Example

# NumPy is imported in the functions that measure a judge: the URLconf reads this module (training, the views),
# and a web worker that serves pages needs no NumPy (issue 49).
if TYPE_CHECKING:
    import numpy as np

FOLDS = 5
# The group splits a judge is measured on (its headline figure is their mean and sd; ``judge_train --splits``): a
# figure of one split moves by about ±0.02 with which turns fall together (docs/autolabel.md), and each split
# beyond the first costs one more cross-validation (the learning curve is drawn on the first alone).
SPLITS = 3
# The decision rule (``tune_decision``): per macro view, the weight of its positive labels' probabilities, chosen
# among these by grouped cross-validation on the training turns only (``INNER_FOLDS``) to maximise that view's F1.
# Argmax of balanced classifiers' probabilities still under-predicts a rare positive; a weight of 2 is a threshold
# of about 1/3 instead of 1/2 on that view's labels.
DECISION_WEIGHTS = (0.5, 0.7, 1.0, 1.4, 2.0, 3.0, 4.0, 6.0)
INNER_FOLDS = 4
# ``strategy="choose"``: the model shapes a judge is chosen among, by grouped cross-validation on its own training
# turns (``choose_options``), fixed here before any fold is drawn. The walk's steps learn a small project's rare
# labels through the steps before them; one classifier over the labels uses more gold better (on CogniBench's
# release, 1,248 sentences: 0.415 against 0.488 macro, docs/autolabel.md), and a stronger regularization of it;
# the verdict then the label within its side learns the hallucinated labels' split from the hallucinated gold alone
# (on the CogniBench sample: 0.456 ± 0.049 over six group splits, against 0.40–0.41 for the others; issue 47).
# Ties: the first listed.
CANDIDATES = ({"strategy": "steps", "regularization": 1.0}, {"strategy": "flat", "regularization": 1.0},
              {"strategy": "flat", "regularization": 0.3}, {"strategy": "verdict", "regularization": 1.0})
CHOOSE = "choose"
CURVE_SHARES = (0.2, 0.4, 0.6, 0.8, 1.0)
SEED = 20261128


def _figures(protocol, report: dict) -> dict:
    read = scoring(protocol)
    return {"macro_f1": report[read.macro_id]["f1"] if read.macro_id else None,
            "views": {view: report[view]["f1"] for view in read.view_ids}}


def _items(protocol, labels: Sequence[str], probabilities: np.ndarray, gold: Sequence[str],
           words: Sequence[int]) -> list[Item]:
    return [Item(w, g, votes_for(p, labels, protocol)) for p, g, w in zip(probabilities, gold, words)]


def score_probabilities(protocol, labels: Sequence[str], probabilities: np.ndarray, gold: Sequence[str],
                        words: Sequence[int]) -> dict:
    """The evaluation's report of predictions given as probabilities, labelled by the judge's rule (``decision``)."""
    return detection_scores(protocol, _items(protocol, labels, probabilities, gold, words), THRESHOLD)


def turn_intervals(protocol, labels: Sequence[str], probabilities: np.ndarray, gold: Sequence[str],
                   words: Sequence[int], groups: Sequence[int]) -> dict:
    """The 95 % intervals of the out-of-fold figures over the turns (``evaluation.comparison.intervals``: the
    turns drawn with replacement, the predictions held): how much of a figure is which turns had gold. The
    training is not redone per draw, so the spread of refitting on other turns is not in it (docs/autolabel.md)."""
    from autolabel.evaluation.comparison import intervals

    by_turn: dict[int, list[Item]] = {}
    for group, item in zip(groups, _items(protocol, labels, probabilities, gold, words)):
        by_turn.setdefault(group, []).append(item)
    found = intervals(protocol, list(by_turn.values()), THRESHOLD)
    read = scoring(protocol)
    return {"macro_f1": found.get(read.macro_id) if read.macro_id else None,
            "views": {view: found[view] for view in read.view_ids}}


def _folds(groups: Sequence[int], folds: int):
    import numpy as np
    from sklearn.model_selection import GroupKFold  # here: a job's run reads the votes' rules, not the folds

    splits = min(folds, len(set(groups)))
    if splits < 2:
        raise ValueError("cross-validation needs gold in at least two turns")
    return splits, list(GroupKFold(n_splits=splits).split(np.zeros(len(groups)), groups=groups))


def _out_of_fold(protocol, examples, gold, groups, words, fold_indices, **options) -> np.ndarray:
    """Every sentence's probabilities from the model of the fold that held it out (``fit_judge`` per fold)."""
    import numpy as np
    probabilities = np.zeros((len(examples), len(protocol.labels)))
    for train, test in fold_indices:
        model = fit_judge(protocol, [examples[i] for i in train], [gold[i] for i in train],
                          [groups[i] for i in train], [words[i] for i in train], **options)
        probabilities[test] = model.predict_proba([examples[i] for i in test])
    return probabilities


def decision_weights(protocol, labels: Sequence[str], probabilities: np.ndarray, gold: Sequence[str],
                     words: Sequence[int]) -> np.ndarray:
    """Per label, the weight of its probability: per macro view (the pooled one when there is no macro), the
    weight of its positive labels that maximises that view's F1 on these predictions, the others held; two rounds
    (the views share the verdict). Ties go to the weight nearest 1."""
    import numpy as np
    from autolabel.learned.model import reweigh

    read = scoring(protocol)
    views = [view for view in read.views if view.id in (read.macro_views or (read.pooled,))]
    objective = read.macro_id or read.pooled  # the views share the verdict: a view's own F1 would rob the other
    weights = np.ones(len(labels))
    for _ in range(2):
        for view in views:
            columns = [i for i, label in enumerate(labels) if label in view.positive]
            if not columns:
                continue
            best = None
            for weight in DECISION_WEIGHTS:
                trial = weights.copy()
                trial[columns] = weight
                report = score_probabilities(protocol, labels, reweigh(probabilities, trial), gold, words)
                key = (_figure(report, objective), -abs(np.log(weight)))
                if best is None or key > best[0]:
                    best = (key, weight)
            weights[columns] = best[1]
    return weights


def _figure(report: dict, key: str) -> float:
    return float((report.get(key) or {}).get("f1") or 0.0)


def choose_options(protocol, examples: Sequence[Example], gold: Sequence[str], groups: Sequence[int],
                   words: Sequence[int], **options) -> tuple[dict, list[dict]]:
    """The options of ``strategy="choose"``: each of ``CANDIDATES`` (with the other ``options``) cross-validated
    on these sentences alone, grouped by turn (``INNER_FOLDS``), and the best macro F1 (the pooled F1 where the
    protocol has no macro) taken; ties go to the first listed. Returns (the chosen options, each candidate's
    figure). Gold in fewer turns than two folds need: the first candidate, unmeasured."""
    base = {key: value for key, value in options.items() if key not in ("strategy", "regularization")}
    if len(set(groups)) < 2:
        return {**base, **CANDIDATES[0]}, []
    _, inner = _folds(groups, INNER_FOLDS)
    read = scoring(protocol)
    objective = read.macro_id or read.pooled
    trials = [{**base, **candidate} for candidate in CANDIDATES]
    if base.get("tune_decision"):  # each candidate's decision is chosen on its own inner folds
        out_of_fold = [_out_of_fold(protocol, examples, gold, groups, words, inner, **trial) for trial in trials]
    else:
        out_of_fold = _shared_out_of_fold(protocol, examples, gold, inner, trials)
    tried, best = [], None
    for candidate, trial, probabilities in zip(CANDIDATES, trials, out_of_fold):
        figure = _figure(score_probabilities(protocol, tuple(protocol.labels), probabilities, gold, words), objective)
        tried.append({**candidate, "macro_f1": round(figure, 4)})
        if best is None or figure > best[0]:
            best = (figure, trial)
    return best[1], tried


def _shared_out_of_fold(protocol, examples, gold, fold_indices, trials: Sequence[dict]) -> list[np.ndarray]:
    """``_out_of_fold`` of judges that differ only in their model's shape and regularization, the features of each
    fold read once for all of them (the same as fitting each alone: the features do not depend on the shape)."""
    import numpy as np
    from autolabel.learned.model import judge_for

    found = [np.zeros((len(examples), len(protocol.labels))) for _ in trials]
    for train, test in fold_indices:
        features = judge_for(protocol, **trials[0]).features
        train_matrix = features.fit_transform([examples[i] for i in train])
        test_matrix = features.transform([examples[i] for i in test])
        for probabilities, trial in zip(found, trials):
            model = judge_for(protocol, **trial)
            model.features = features
            probabilities[test] = model.fit_matrix(train_matrix, [gold[i] for i in train]).matrix_proba(test_matrix)
    return found


def fit_judge(protocol, examples: Sequence[Example], gold: Sequence[str], groups: Sequence[int],
              words: Sequence[int], **options):
    """A judge fitted on these gold sentences; with ``tune_decision`` its decision weights are chosen by grouped
    cross-validation on the same sentences (never on a sentence it is later scored on), and with
    ``strategy="choose"`` its model shape likewise (``choose_options``; the model keeps ``chosen`` and the inner
    figures in ``candidates``). ``words``: each sentence's word count (the views' F1 is weighted by words)."""
    from autolabel.learned.model import judge_for

    if options.get("strategy") == CHOOSE:
        chosen, tried = choose_options(protocol, examples, gold, groups, words, **options)
        model = fit_judge(protocol, examples, gold, groups, words, **chosen)
        model.chosen, model.candidates = {key: chosen[key] for key in ("strategy", "regularization")}, tried
        return model
    model = judge_for(protocol, **options).fit(examples, gold)
    if model.tune_decision and len(set(groups)) >= 2:
        _, inner = _folds(groups, INNER_FOLDS)
        plain = {**options, "tune_decision": False}
        probabilities = _out_of_fold(protocol, examples, gold, groups, words, inner, **plain)
        model.label_weights = decision_weights(protocol, model.labels, probabilities, gold, words)
    return model


def _subset(train: np.ndarray, groups: np.ndarray, share: float, rng) -> np.ndarray:
    """A share of the training turns (at least one), all of their sentences."""
    import numpy as np
    turns = np.unique(groups[train])
    kept = rng.choice(turns, size=max(1, int(round(share * len(turns)))), replace=False)
    return train[np.isin(groups[train], kept)]


def group_splits(groups: Sequence[int], folds: int, splits: int) -> tuple[int, list[list]]:
    """The folds of ``splits`` group splits of these turns: the first ``GroupKFold``'s own (the judge's figure, its
    intervals and learning curve read it), the others ``GroupKFold(shuffle=True)`` with seeds 1, 2, ...; whole turns
    held out in every one."""
    import numpy as np
    from sklearn.model_selection import GroupKFold

    count, first = _folds(groups, folds)
    return count, [first] + [list(GroupKFold(n_splits=count, shuffle=True, random_state=seed)
                                  .split(np.zeros(len(groups)), groups=groups)) for seed in range(1, splits)]


@dataclass
class OutOfFold:
    """One group split's out-of-fold predictions: per sentence, the fold that held it out and its probabilities."""

    split: int
    fold: np.ndarray
    probabilities: np.ndarray


def _spread(values: Sequence[float | None]) -> dict:
    """Mean and sample sd of per-split figures (None when a split's figure is undefined)."""
    import numpy as np
    if any(value is None for value in values):
        return {"mean": None, "sd": None}
    return {"mean": round(float(np.mean(values)), 4),
            "sd": round(float(np.std(values, ddof=1)), 4) if len(values) > 1 else 0.0}


def split_figures(per_split: Sequence[dict]) -> dict:
    """The figures of several group splits (``_figures`` each): the headline is their mean and sd."""
    macro = [figures["macro_f1"] for figures in per_split]
    return {"count": len(per_split), "macro_f1": macro, **_spread(macro),
            "views": {view: _spread([figures["views"][view] for figures in per_split]) for view in per_split[0]["views"]}}


def cross_validate(protocol, examples: Sequence[Example], gold: Sequence[str], groups: Sequence[int],
                   words: Sequence[int], *, folds: int = FOLDS, splits: int = 1,
                   curve_shares: Sequence[float] = CURVE_SHARES, seed: int = SEED, **options) -> dict:
    """Out-of-fold figures (``cross_validated``: the first split's, with ``splits``: the figures of every split and
    their mean and sd), the learning curve (on the first split), and ``out_of_fold``: each split's predictions
    (``OutOfFold``, not JSON), for a judge built with ``options``."""
    import numpy as np
    labels = tuple(protocol.labels)
    groups_array = np.asarray(groups)
    count, split_list = group_splits(groups, folds, max(1, splits))
    fold_indices = split_list[0]
    curve = []
    full = None
    for share in sorted(set(curve_shares) | {1.0}):
        rng = np.random.default_rng(seed)
        probabilities = np.zeros((len(examples), len(labels)))
        used = []
        for train, test in fold_indices:
            chosen = train if share >= 1.0 else _subset(train, groups_array, share, rng)
            model = fit_judge(protocol, [examples[i] for i in chosen], [gold[i] for i in chosen],
                              [groups[i] for i in chosen], [words[i] for i in chosen], **options)
            probabilities[test] = model.predict_proba([examples[i] for i in test])
            used.append(len(chosen))
        report = score_probabilities(protocol, labels, probabilities, gold, words)
        figures = _figures(protocol, report)
        curve.append({"share": share, "sentences": int(round(sum(used) / len(used))), **figures})
        if share >= 1.0:
            full_probabilities = probabilities
            full = {**figures, "folds": count, "sentences": len(examples), "turns": len(set(groups)),
                    "intervals": turn_intervals(protocol, labels, probabilities, gold, words, groups)}
    predictions = [OutOfFold(0, _fold_of(fold_indices, len(examples)), full_probabilities)]
    per_split = [{key: full[key] for key in ("macro_f1", "views")}]
    for split, other in enumerate(split_list[1:], start=1):
        probabilities = _out_of_fold(protocol, examples, gold, groups, words, other, **options)
        predictions.append(OutOfFold(split, _fold_of(other, len(examples)), probabilities))
        per_split.append(_figures(protocol, score_probabilities(protocol, labels, probabilities, gold, words)))
    full["splits"] = split_figures(per_split)
    return {"cross_validated": full, "learning_curve": [point for point in curve if point["share"] in curve_shares],
            "out_of_fold": predictions}


def _fold_of(fold_indices, size: int) -> np.ndarray:
    import numpy as np
    fold = np.zeros(size, dtype=int)
    for number, (_, test) in enumerate(fold_indices):
        fold[test] = number
    return fold


def out_of_fold_rows(protocol, predictions: Sequence[OutOfFold], gold: Sequence[str], words: Sequence[int],
                     places: Sequence[dict]) -> Iterator[dict]:
    """The exported out-of-fold predictions: one row per sentence and split, its place (``data.GoldSet.places``),
    its words (the weight of the evaluation), gold, the label the judge's rule gives (``decision``) and each
    label's probability. Every figure of ``cross_validated`` is recomputed from these rows alone."""
    labels = tuple(protocol.labels)
    for prediction in predictions:
        for i, row in enumerate(prediction.probabilities):
            decided = judge_decision(row, labels, protocol)
            yield {"split": prediction.split, "fold": int(prediction.fold[i]), **places[i], "words": int(words[i]),
                   "gold": gold[i], "predicted": decided.label, "hallucinated": decided.hallucinated,
                   "probabilities": {label: round(float(p), 6) for label, p in zip(labels, row)}}
