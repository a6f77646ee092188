"""Two jobs on the same gold: F1 per view of the protocol (and its macro) with bootstrap 95 % intervals, and
their paired difference (pure).

Both jobs are scored on the same sentences (those both predicted and that have
gold), each at its own threshold, with the word-weighted counting of
``evaluation``. The uncertainty comes from which turns happened to be labelled:
the bootstrap draws the turns with replacement (a turn's sentences stay
together, since they share a reference, a question and often a mistake), sums
each job's word counts over the drawn turns and computes the F1s again. The same
draw serves both jobs, so the difference B - A is paired: the turns that are hard
for one job are hard for the other, and only their disagreement is left in the
interval. An interval of the difference that excludes 0 says the new version is
better (or worse) on turns like these, not just different; one that includes 0
says the data cannot tell.

``intervals`` draws one system's turns the same way: the interval of its own F1s (the learned judge's
cross-validated figures carry it).

The interval is the 2.5th and 97.5th percentiles of the resampled values
(percentile bootstrap), seeded so a page and a command give the same figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from autolabel.evaluation.protocol_views import scoring
from autolabel.evaluation.scores import Item, exact_f1, item_flags, vote_key

RESAMPLES = 2000
SEED = 20261125
_CHUNK = 200  # resamples drawn at a time: memory stays resamples-per-chunk x turns


def turn_counts(protocol, turns: Sequence[Sequence[Item]], threshold: int) -> np.ndarray:
    """Per turn and view of the protocol: (correct, predicted, gold) words, shape (turns, views, 3).

    Each distinct (gold, votes) pattern is decided once; the words are then summed per turn by numpy.
    """
    views = len(scoring(protocol).views)
    patterns: dict[tuple, int] = {}
    pattern_flags: list[list[float]] = []
    turn_index, words, pattern_index = [], [], []
    for t, items in enumerate(turns):
        for item in items:
            key = (item.gold, vote_key(item.votes))
            if key not in patterns:
                patterns[key] = len(pattern_flags)
                flags = item_flags(protocol, item, threshold).values()
                pattern_flags.append([float(x) for gold, predicted in flags for x in (gold and predicted, predicted, gold)])
            turn_index.append(t)
            words.append(item.words)
            pattern_index.append(patterns[key])
    columns = views * 3
    if not pattern_flags:
        return np.zeros((len(turns), views, 3))
    weighted = np.asarray(pattern_flags)[pattern_index] * np.asarray(words, dtype=np.float64)[:, np.newaxis]
    counts = np.stack([np.bincount(turn_index, weights=weighted[:, c], minlength=len(turns)) for c in range(columns)],
                      axis=1)
    return counts.reshape(len(turns), views, 3)


def _f1(correct, predicted, gold):
    """F1 of summed counts, vectorised; the conventions of ``evaluation.f1_from_counts`` (nan: undefined)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        f1 = np.where(gold > 0, 2 * correct / (predicted + gold), np.nan)
    return f1


def _f1_by_view(sums: np.ndarray, macro: Sequence[int]) -> np.ndarray:
    """(..., views, 3) summed counts -> (..., views [+ 1]) F1s, the last the macro of the views at ``macro``'s
    positions (none when the protocol has no macro)."""
    f1 = _f1(sums[..., 0], sums[..., 1], sums[..., 2])
    if not macro:
        return f1
    mean = f1[..., list(macro)].sum(axis=-1) / len(macro)
    return np.concatenate([f1, mean[..., np.newaxis]], axis=-1)


def _interval(values: np.ndarray) -> list[float | None]:
    kept = values[~np.isnan(values)]
    if not len(kept):
        return [None, None]
    low, high = np.percentile(kept, [2.5, 97.5])
    return [round(float(low), 4), round(float(high), 4)]


def _point(read, sums: np.ndarray) -> dict[str, float | None]:
    """F1 per view of the full data, through ``evaluation``'s own function, unrounded (rounded when reported)."""
    scores = {view: exact_f1(*(int(x) for x in sums[v])) for v, view in enumerate(read.view_ids)}
    if read.macro_id:
        macro = [scores[view] for view in read.macro_views]
        scores[read.macro_id] = None if any(f1 is None for f1 in macro) else sum(macro) / len(macro)
    return scores


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def compare(
    protocol, turns_a: Sequence[Sequence[Item]], threshold_a: int, turns_b: Sequence[Sequence[Item]],
    threshold_b: int, resamples: int = RESAMPLES, seed: int = SEED,
) -> dict:
    """F1 per view of the protocol (then its macro) of A and B with 95 % intervals, and B - A with its
    interval; turns paired by position.

    ``turns_a[i]`` and ``turns_b[i]`` must hold the same sentences (the same gold), each with that job's votes.
    """
    if len(turns_a) != len(turns_b):
        raise ValueError("both jobs must be scored on the same turns")
    read = scoring(protocol)
    compared = read.compared
    macro = [read.view_ids.index(view) for view in read.macro_views]
    a, b = turn_counts(protocol, turns_a, threshold_a), turn_counts(protocol, turns_b, threshold_b)
    n_turns = len(turns_a)
    point_a, point_b = _point(read, a.sum(axis=0)), _point(read, b.sum(axis=0))
    draws_a, draws_b = _resampled([a, b], macro, resamples, seed)
    views = {}
    for v, view in enumerate(compared):
        difference = None
        if point_a[view] is not None and point_b[view] is not None:
            difference = _rounded(point_b[view] - point_a[view])
        diff_draws = draws_b[:, v] - draws_a[:, v]
        views[view] = {
            "a": {"f1": _rounded(point_a[view]), "ci": _interval(draws_a[:, v])},
            "b": {"f1": _rounded(point_b[view]), "ci": _interval(draws_b[:, v])},
            "difference": {"f1": difference, "ci": _interval(diff_draws),
                           "share_b_better": _share_positive(diff_draws)},
        }
    return {
        "turns": n_turns,
        "sentences": sum(len(turn) for turn in turns_a),
        "words": int(sum(item.words for turn in turns_a for item in turn)),
        "resamples": resamples,
        "seed": seed,
        "views": views,
    }


def _resampled(counts: Sequence[np.ndarray], macro: Sequence[int], resamples: int, seed: int) -> list[np.ndarray]:
    """Per system's (turns, views, 3) counts, the F1s (views, then the macro) of ``resamples`` draws of the turns
    with replacement, shape (resamples, views [+ 1]); the same draws for every system (paired)."""
    n_turns, n_views = counts[0].shape[0], counts[0].shape[1]
    draws: list[list[np.ndarray]] = [[] for _ in counts]
    if n_turns:
        rng = np.random.default_rng(seed)
        flats = [system.reshape(n_turns, -1) for system in counts]
        for start in range(0, resamples, _CHUNK):
            size = min(_CHUNK, resamples - start)
            # How often each turn is drawn in each resample (n_turns draws with replacement), by one bincount.
            drawn = rng.integers(0, n_turns, size=(size, n_turns)) + (np.arange(size) * n_turns)[:, np.newaxis]
            weights = np.bincount(drawn.ravel(), minlength=size * n_turns).reshape(size, n_turns).astype(np.float64)
            for found, flat in zip(draws, flats):
                found.append(_f1_by_view((weights @ flat).reshape(size, n_views, 3), macro))
    empty = np.zeros((0, n_views + (1 if macro else 0)))
    return [np.concatenate(found) if found else empty for found in draws]


def intervals(protocol, turns: Sequence[Sequence[Item]], threshold: int, resamples: int = RESAMPLES,
              seed: int = SEED) -> dict[str, list[float | None]]:
    """One system's 95 % interval of F1 per view (then of its macro) over the turns, drawn as ``compare`` draws
    them: view id (or the macro's id) -> [low, high]."""
    read = scoring(protocol)
    macro = [read.view_ids.index(view) for view in read.macro_views]
    (draws,) = _resampled([turn_counts(protocol, turns, threshold)], macro, resamples, seed)
    return {view: _interval(draws[:, v]) for v, view in enumerate(read.compared)}


def _share_positive(values: np.ndarray) -> float | None:
    kept = values[~np.isnan(values)]
    return round(float((kept > 0).mean()), 4) if len(kept) else None


def paired_turns(
    gold_and_words: Mapping[int, tuple[int, int, str]], votes_a: Mapping[int, list], votes_b: Mapping[int, list],
) -> tuple[list[list[Item]], list[list[Item]]]:
    """The sentences both jobs predicted, grouped by turn: (turns of A's items, turns of B's items).

    ``gold_and_words`` maps a sentence id to (turn id, words, gold label); ``votes_*`` map a sentence id to that
    job's sample votes.
    """
    by_turn: dict[int, list[int]] = {}
    for sentence_id in sorted(set(votes_a) & set(votes_b) & set(gold_and_words)):
        by_turn.setdefault(gold_and_words[sentence_id][0], []).append(sentence_id)
    turns_a, turns_b = [], []
    for turn_id in sorted(by_turn):
        ids = by_turn[turn_id]
        turns_a.append([Item(gold_and_words[i][1], gold_and_words[i][2], votes_a[i]) for i in ids])
        turns_b.append([Item(gold_and_words[i][1], gold_and_words[i][2], votes_b[i]) for i in ids])
    return turns_a, turns_b

