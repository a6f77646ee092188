"""The estimators of the faithfulness report on synthetic data with a known truth and a biased judge.

Each scenario is repeated 200 times (seeded): the corrected 95 % interval must cover the truth in at least
90 % of them, the pre-labeler's own estimate must miss it, and the corrected interval must be narrower than
the gold-only one because the judge, although biased, is informative.
"""

import numpy as np
import pytest

from autolabel.faithfulness.estimators import estimate_ratio

REPETITIONS = 200
TRUTH = 0.25


def biased_judge(rng, hallucinated, sentences):
    """Finds 80 % of the hallucinated sentences and flags 25 % of the others: it overestimates the rate."""
    return rng.binomial(hallucinated, 0.8) + rng.binomial(sentences - hallucinated, 0.25)


def independent_sentences(rng, turns=2000, calibration=200):
    """One sentence per turn, each hallucinated with probability TRUTH."""
    sentences = np.ones(turns, dtype=int)
    gold = rng.binomial(1, TRUTH, turns)
    return gold, sentences, calibration


def clustered_turns(rng, turns=2000, calibration=150):
    """3 to 15 sentences per turn; each turn has its own rate (Beta(1, 3), mean TRUTH), so the sentences of a
    turn are correlated and gold comes in whole turns."""
    sentences = rng.integers(3, 16, turns)
    gold = rng.binomial(sentences, rng.beta(1, 3, turns))
    return gold, sentences, calibration


def run(scenario, seed):
    rng = np.random.default_rng(seed)
    results = []
    for _ in range(REPETITIONS):
        gold, sentences, n = scenario(rng)
        predicted = biased_judge(rng, gold, sentences)
        calibrated = np.zeros(len(gold), dtype=bool)
        calibrated[rng.choice(len(gold), n, replace=False)] = True
        results.append(estimate_ratio(predicted, sentences, calibrated, gold[calibrated], sentences[calibrated]))
    return results


def covers(interval, value):
    return interval[0] <= value <= interval[1]


@pytest.mark.parametrize("scenario", [independent_sentences, clustered_turns])
def test_the_corrected_interval_covers_the_truth_that_the_biased_judge_misses(scenario):
    results = run(scenario, seed=18)

    coverage = sum(covers(r.corrected_ci95, TRUTH) for r in results) / REPETITIONS
    assert coverage >= 0.90, coverage
    # The judge says about 0.3875 (0.8 × 0.25 + 0.25 × 0.75): outside nearly every corrected interval.
    assert np.mean([r.auto for r in results]) == pytest.approx(0.3875, abs=0.01)
    assert all(r.auto - TRUTH > 0.1 for r in results)
    assert sum(covers(r.corrected_ci95, r.auto) for r in results) / REPETITIONS < 0.05
    # Informative judge: the pre-labels of the 1,800+ unchecked turns narrow the interval.
    widths = [(r.corrected_ci95[1] - r.corrected_ci95[0], r.gold_only_ci95[1] - r.gold_only_ci95[0]) for r in results]
    assert np.median([c / g for c, g in widths]) < 0.95
    assert all(0 < r.power <= 1 for r in results)


def test_clustered_gold_needs_the_turn_clustered_variance():
    """Treating the sentences of the calibration turns as independent would cover the truth far less often:
    the intervals account for clustering by turn."""
    rng = np.random.default_rng(7)
    naive_covered = 0
    for _ in range(REPETITIONS):
        gold, sentences, n = clustered_turns(rng)
        chosen = rng.choice(len(gold), n, replace=False)
        rate = gold[chosen].sum() / sentences[chosen].sum()
        half = 1.96 * np.sqrt(rate * (1 - rate) / sentences[chosen].sum())
        naive_covered += rate - half <= TRUTH <= rate + half
    clustered = run(clustered_turns, seed=7)
    clustered_covered = sum(covers(r.gold_only_ci95, TRUTH) for r in clustered)
    assert naive_covered / REPETITIONS < 0.80 and clustered_covered / REPETITIONS >= 0.90


def test_hand_computed_small_case():
    # Four turns of four sentences; gold on the first two (drawn at random).
    predicted, sentences = [2, 1, 3, 3], [4, 4, 4, 4]
    calibrated = [True, True, False, False]
    gold, gold_sentences = [1, 1], [4, 4]

    plain = estimate_ratio(predicted, sentences, calibrated, gold, gold_sentences, tune=False)

    assert plain.auto == 9 / 16
    assert plain.gold_only == 2 / 8
    # Gold only: residuals 1 - 0.25·4 = 0 and 0, variance 0: a zero-width interval.
    assert plain.gold_only_ci95 == (0.25, 0.25)
    # PPI: mean of all pre-labels 9/4, plus the mean error where gold exists ((1-2) + (1-1)) / 2 = -0.5, over 4.
    assert plain.corrected == pytest.approx((9 / 4 - 0.5) / 4)
    # Rectifier (c = 1/2): (y - f/2) - R(4 - 2) = -0.875, -0.375: variance 0.125 / 2; the unchecked part has
    # no spread (3 - 0.4375·4 twice). Var(R) = 0.0625 / 4² → sd 0.0625.
    assert plain.corrected_ci95 == pytest.approx((0.4375 - 1.959964 * 0.0625, 0.4375 + 1.959964 * 0.0625))
    assert plain.power == 1

    # Tuned: on the calibration turns the gold does not move with the pre-labels (slope 0), so PPI++ ignores
    # them and the corrected estimate is the gold-only one.
    tuned = estimate_ratio(predicted, sentences, calibrated, gold, gold_sentences)
    assert (tuned.power, tuned.corrected, tuned.corrected_ci95) == (0, 0.25, (0.25, 0.25))


def test_too_little_gold_gives_no_interval_and_a_full_gold_sample_is_the_gold():
    one = estimate_ratio([1, 2, 0], [3, 3, 3], [True, False, False], [2], [3])
    assert (one.auto, one.gold_only, one.gold_only_ci95, one.corrected, one.corrected_ci95) == (1 / 3, None, None, None, None)
    empty = estimate_ratio([0, 0, 0], [0, 0, 0], [True, True, False], [0, 0], [0, 0])
    assert (empty.auto, empty.gold_only, empty.corrected) == (None, None, None)
    everything = estimate_ratio([3, 0, 1], [3, 3, 3], [True, True, True], [1, 0, 2], [3, 3, 3])
    assert everything.corrected == everything.gold_only == 1 / 3
    assert everything.corrected_ci95 == pytest.approx(everything.gold_only_ci95)
