"""The agreement module against published worked examples (no database)."""

import math

import krippendorff
import numpy as np
import pytest

from annotator.domain import agreement
from annotator.domain.protocol.document import default_protocol
from annotator.domain.vocabulary import Label, Step

NAN = math.nan

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section E:
# 4 observers x 12 units, values 1-5, with missing values.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]

# Same paper, section C: two observers, nominal values, no missing data.
BEN = ["a", "a", "b", "b", "d", "c", "c", "c", "e", "d", "d", "a"]
GERRY = ["b", "a", "b", "b", "b", "c", "c", "c", "e", "d", "d", "d"]


@pytest.mark.parametrize(
    "level, expected",
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_2011_four_coders_with_missing_values(level, expected):
    counts = agreement.value_counts_from_reliability_data(KRIPPENDORFF_2011, domain=[1, 2, 3, 4, 5])
    assert round(agreement.alpha(counts, level=level, domain=[1, 2, 3, 4, 5]), 3) == expected


def test_krippendorff_2011_two_coders_nominal():
    counts = agreement.value_counts_from_reliability_data([BEN, GERRY], domain=list("abcde"))
    assert round(agreement.alpha(counts), 3) == 0.692
    # 9 of the 12 units agree (units 1, 5 and 12 differ).
    assert agreement.percent_agreement(counts) == pytest.approx(9 / 12)


@pytest.mark.parametrize("level", agreement.LEVELS)
def test_alpha_matches_the_package_alpha_on_random_data_with_gaps(level):
    rng = np.random.default_rng(7)
    data = rng.integers(1, 6, size=(3, 200)).astype(float)
    data[rng.random(data.shape) < 0.2] = np.nan
    counts = agreement.value_counts_from_reliability_data(data.tolist(), domain=[1.0, 2.0, 3.0, 4.0, 5.0])
    ours = agreement.alpha(counts, level=level, domain=[1, 2, 3, 4, 5])
    theirs = krippendorff.alpha(reliability_data=data, level_of_measurement=level, value_domain=[1, 2, 3, 4, 5])
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_cohen_kappa_textbook_table():
    assert agreement.cohen_kappa([[20, 5], [10, 15]]) == pytest.approx(0.40)


def test_cohen_kappa_undefined_when_both_coders_use_one_value():
    assert agreement.cohen_kappa([[30, 0], [0, 0]]) is None
    assert agreement.cohen_kappa([[0, 0], [0, 0]]) is None


def test_alpha_undefined_without_pairable_units_or_variation():
    one_coder_each = agreement.value_counts_from_reliability_data([[1, NAN], [NAN, 2]], domain=[1, 2])
    assert agreement.alpha(one_coder_each) is None
    assert agreement.percent_agreement(one_coder_each) is None
    everyone_says_one = agreement.value_counts_from_reliability_data([[1, 1, 1], [1, 1, 1]], domain=[1, 2])
    assert agreement.alpha(everyone_says_one) is None
    assert agreement.percent_agreement(everyone_says_one) == 1.0


def test_unknown_level_is_refused():
    counts = agreement.value_counts_from_reliability_data([BEN, GERRY], domain=list("abcde"))
    with pytest.raises(ValueError, match="level of measurement"):
        agreement.alpha(counts, level="cardinal")


def test_value_counts_from_pairs_equals_the_ratings_it_summarises():
    pairs = [(0, 0, 3), (0, 1, 2), (2, 2, 1)]
    counts = agreement.value_counts_from_pairs(pairs, n_values=3)
    assert counts.tolist() == [[2, 0, 0]] * 3 + [[1, 1, 0]] * 2 + [[0, 0, 2]]


def test_confusion_matrix_and_accuracy():
    first = np.array([0, 0, 1, 1, -1])
    second = np.array([0, 1, 1, 1, 0])
    table = agreement.confusion_matrix(first, second, 2)
    assert table.tolist() == [[1, 1], [0, 2]]
    assert agreement.accuracy(table) == pytest.approx(0.75)
    assert agreement.accuracy(np.zeros((2, 2))) is None


COGNIBENCH = agreement.scheme_of(default_protocol())


def labels_to_counts(first, second):
    index = COGNIBENCH.label_index
    n = len(first)
    units = np.concatenate([np.arange(n), np.arange(n)])
    values = np.array([index[x] for x in first] + [index[x] for x in second])
    return agreement.value_counts(units, values, len(COGNIBENCH.labels), n)


def test_per_step_agreement_follows_the_protocol():
    F, I, R, S, U, M, X = (Label.FAITHFUL, Label.INVENTED, Label.RELIABLE, Label.SPECULATIVE,
                           Label.UNEQUIVOCAL, Label.MISLEADING, Label.IRRELEVANT)
    first = [F, F, I, R, S, X, U, M]
    second = [F, I, I, U, S, F, R, R]
    result = agreement.label_and_step_measures(labels_to_counts(first, second), COGNIBENCH)
    assert result["label"].percent == pytest.approx(3 / 8)
    assert result["label"].units == 8
    # Relevance: all pairs but (X, F) agree.
    assert result[Step.RELEVANCE].percent == pytest.approx(7 / 8)
    # Kind among the 7 both called relevant: all agree (F/I factual, cognitive ones cognitive).
    assert result[Step.KIND].units == 7
    assert result[Step.KIND].percent == 1.0
    # Faithfulness only among the three both called factual: (F,F) (F,I) (I,I).
    assert result[Step.FAITHFULNESS].units == 3
    assert result[Step.FAITHFULNESS].percent == pytest.approx(2 / 3)
    # Rational: the four cognitive pairs (R,U) (S,S) (U,R) (M,R): one disagreement.
    assert result[Step.RATIONAL].units == 4
    assert result[Step.RATIONAL].percent == pytest.approx(3 / 4)
    # Grounded: pairs where both said rational: (R,U) (S,S) (U,R): all agree (S says no, R/U yes).
    assert result[Step.GROUNDED].units == 3
    assert result[Step.GROUNDED].percent == 1.0
    # Unequivocal: (R,U) (U,R): both disagree.
    assert result[Step.UNEQUIVOCAL].units == 2
    assert result[Step.UNEQUIVOCAL].percent == 0.0
    assert result[Step.UNEQUIVOCAL].alpha < 0


def test_weighted_distinct_rows_equal_the_repeated_units():
    rng = np.random.default_rng(3)
    data = rng.integers(0, 4, size=(3, 300)).astype(float)
    data[rng.random(data.shape) < 0.25] = np.nan
    counts = agreement.value_counts_from_reliability_data(data.tolist(), domain=[0.0, 1.0, 2.0, 3.0])
    rows, weights = agreement.distinct_rows(counts)
    assert len(rows) < len(counts) and weights.sum() == len(counts)
    assert sorted(map(tuple, rows.tolist())) == sorted(map(tuple, np.unique(counts, axis=0).tolist()))
    for level in agreement.LEVELS:
        assert agreement.alpha(rows, level, weights=weights) == pytest.approx(agreement.alpha(counts, level), abs=1e-12)
    assert agreement.percent_agreement(rows, weights) == pytest.approx(agreement.percent_agreement(counts))
    assert agreement.pairable_units(rows, weights) == agreement.pairable_units(counts)


def test_a_variable_measured_on_fewer_than_two_units_is_not_a_figure():
    """One unit (two coders disagreeing on the grounded step of one sentence) gives n/a, not a kappa of 0.000."""
    import numpy as np

    from annotator.domain.agreement import variable_measures

    LABELS, LABEL_INDEX = COGNIBENCH.labels, COGNIBENCH.label_index
    table = np.zeros((len(LABELS), len(LABELS)), dtype=np.int64)
    table[LABEL_INDEX["speculative"], LABEL_INDEX["reliable"]] = 1  # grounded: no vs yes, on one sentence
    for _ in range(3):
        table[LABEL_INDEX["faithful"], LABEL_INDEX["faithful"]] += 1
    result = variable_measures(COGNIBENCH, {(1, 2): table})
    assert result["grounded"] == {"alpha": None, "percent": None, "units": 1, "kappa": None, "left_out": 0}
    assert result["label"]["units"] == 4 and result["label"]["percent"] == 0.75
