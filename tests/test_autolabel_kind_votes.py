"""The vote and the scores of the non-choice step kinds (multiple, scale, text), pure, hand-computed."""

import pytest
from sklearn.metrics import cohen_kappa_score

from autolabel.evaluation.kind_scores import Pair, score_multiple, score_scale, score_step, score_text
from autolabel.labelling.kind_votes import vote_multiple, vote_scale, vote_step, vote_text

ERRORS = ("fabricated_fact", "misattributed_source", "wrong_citation", "outdated_law")


# -- multiple ---------------------------------------------------------------------------------------------

def test_an_answer_is_chosen_when_threshold_samples_chose_it_in_document_order():
    values = [["wrong_citation", "fabricated_fact"], ["fabricated_fact"], ["fabricated_fact", "wrong_citation"],
              ["wrong_citation", "outdated_law"], ["fabricated_fact"]]
    vote = vote_multiple(values, ERRORS, threshold=3)
    assert vote.value == ["fabricated_fact", "wrong_citation"]
    assert vote.counts == {"fabricated_fact": 4, "wrong_citation": 3, "outdated_law": 1}
    assert vote.voters == 5
    assert vote_multiple(values, ERRORS, threshold=4).value == ["fabricated_fact"]


def test_below_min_the_most_chosen_are_added_ties_in_document_order():
    values = [["outdated_law"], ["wrong_citation"], ["misattributed_source", "wrong_citation"], None, None]
    # Nothing reaches 3: min 1 takes the most chosen (wrong_citation, 2 samples).
    assert vote_multiple(values, ERRORS, threshold=3).value == ["wrong_citation"]
    # min 2: then misattributed_source and outdated_law tie at 1, document order picks misattributed_source.
    assert vote_multiple(values, ERRORS, threshold=3, minimum=2).value == ["misattributed_source", "wrong_citation"]
    # min 4 cannot be met: only three answers were chosen by anyone.
    assert vote_multiple(values, ERRORS, threshold=3, minimum=4).value is None


def test_above_max_the_most_chosen_are_kept():
    values = [list(ERRORS)] * 3 + [["outdated_law", "wrong_citation"]] * 2
    assert vote_multiple(values, ERRORS, threshold=3, maximum=2).value == ["wrong_citation", "outdated_law"]
    assert vote_multiple(values, ERRORS, threshold=3).value == list(ERRORS)


def test_no_valid_value_is_none_and_unknown_answers_are_not_counted():
    assert vote_multiple([None, None], ERRORS, threshold=1).value is None
    vote = vote_multiple([["invented_word"], ["outdated_law"]], ERRORS, threshold=1)
    assert vote.value == ["outdated_law"] and "invented_word" not in vote.counts
    assert vote_multiple([[], []], ERRORS, threshold=1, minimum=0).value == []
    with pytest.raises(ValueError):
        vote_multiple([["outdated_law"]], ERRORS, threshold=0)


# -- scale and text ---------------------------------------------------------------------------------------

def test_scale_is_the_median_lower_middle_for_an_even_count():
    assert vote_scale([5, 1, 4, None, 2]).value == 2
    assert vote_scale([1, 2, 4, 5]).value == 2
    assert vote_scale([3, 4]).value == 3
    assert vote_scale([None, None]).value is None
    assert vote_scale([True, 4]).value == 4  # a bool is not a point
    assert vote_scale([4, 4, 2]).counts == {4: 2, 2: 1}


def test_text_is_the_first_valid_reply():
    vote = vote_text([None, "The reference cites 2019, not 2021.", "Another reason."])
    assert vote.value == "The reference cites 2019, not 2021." and vote.voters == 2
    assert vote_text([None]).value is None


def test_vote_step_dispatches_by_kind():
    assert vote_step("scale", [3, 5, 4], threshold=3).value == 4
    assert vote_step("multiple", [["outdated_law"]] * 3, threshold=3, answers=ERRORS).value == ["outdated_law"]
    assert vote_step("text", ["why"], threshold=3).as_json() == {"kind": "text", "value": "why", "voters": 1,
                                                                  "counts": {}}
    with pytest.raises(ValueError):
        vote_step("choice", ["a"], threshold=1)


# -- scores -----------------------------------------------------------------------------------------------

def test_multiple_per_answer_precision_recall_f1():
    pairs = [Pair(["fabricated_fact"], ["fabricated_fact", "wrong_citation"]),
             Pair(["wrong_citation"], ["wrong_citation"]),
             Pair(["fabricated_fact", "outdated_law"], ["outdated_law"]),
             Pair(["fabricated_fact"], None),  # no prediction for the step: not counted
             Pair(None, ["fabricated_fact"]),
             Pair("fabricated_fact", ["fabricated_fact"])]  # a gold value that is no list: not a set of answers
    scores = score_multiple(pairs, ERRORS)
    assert scores["pairs"] == 3
    fabricated = scores["answers"]["fabricated_fact"]
    assert (fabricated["precision"], fabricated["recall"], fabricated["f1"]) == (1.0, 0.5, round(2 / 3, 4))
    wrong = scores["answers"]["wrong_citation"]
    assert (wrong["precision"], wrong["recall"], wrong["f1"]) == (0.5, 1.0, round(2 / 3, 4))
    never = scores["answers"]["misattributed_source"]
    assert (never["precision"], never["recall"], never["f1"]) == (None, None, None)
    # Micro: 3 correct, 4 predicted, 4 gold.
    assert scores["micro"] == {"precision": 0.75, "recall": 0.75, "f1": 0.75}
    assert scores["exact_match"] == round(1 / 3, 4)


def test_scale_mae_and_quadratic_kappa_equal_scikit_learn():
    gold = [1, 2, 3, 4, 5, 5, 3, 2]
    predicted = [1, 3, 3, 5, 4, 5, 1, 2]
    scores = score_scale([Pair(g, p) for g, p in zip(gold, predicted)] + [Pair(3, None), Pair("3", 3), Pair(True, 1)],
                         1, 5)
    assert scores["pairs"] == 8
    assert scores["mae"] == round((0 + 1 + 0 + 1 + 1 + 0 + 2 + 0) / 8, 4)
    expected = cohen_kappa_score(gold, predicted, weights="quadratic")
    assert scores["kappa"] == pytest.approx(expected, abs=1e-4)
    assert 0 < scores["kappa"] < 1
    assert scores["exact_match"] == 0.5


def test_scale_kappa_undefined_when_it_cannot_be_computed():
    assert score_scale([Pair(3, 3)], 1, 5)["kappa"] is None
    one_point = score_scale([Pair(3, 3), Pair(3, 3)], 1, 5)  # one point only: 0/0
    assert one_point["kappa"] is None and one_point["kappa_undefined"] == "undefined: the pre-labeler gave one value"
    assert score_scale([], 1, 5) == {"kind": "scale", "metric": "mean absolute error, quadratic-weighted κ",
                                     "pairs": 0, "mae": None, "kappa": None, "kappa_undefined": "",
                                     "exact_match": None}


def test_text_is_counted_not_scored():
    scores = score_text([Pair("a", "b"), Pair("a", None), Pair(None, "c")])
    assert scores == {"kind": "text", "metric": "not scored (counted)", "pairs": 1, "predicted": 2, "gold": 2}
    assert score_step("text", [])["pairs"] == 0
    with pytest.raises(ValueError):
        score_step("choice", [])
