"""The pure rules of draws for human checks (annotator/domain/draws.py) and of gold from a single review."""

from fractions import Fraction

import pytest

from annotator.domain import draws, gold
from annotator.domain.protocol.document import default_protocol


def test_a_seeded_random_draw_is_reproducible_whatever_order_the_candidates_come_in():
    turns = list(range(100, 160))
    first = draws.random_order(turns, 10, seed=42)
    assert first == draws.random_order(list(reversed(turns)), 10, seed=42)
    assert len(first) == len(set(first)) == 10 and set(first) <= set(turns)
    assert first != draws.random_order(turns, 10, seed=43)
    assert first != sorted(first)  # the order drawn, not the id order


def test_a_random_draw_larger_than_the_pool_takes_every_turn_once():
    assert sorted(draws.random_order([3, 1, 2, 2], 10, seed=1)) == [1, 2, 3]
    assert draws.random_order([], 5, seed=1) == []


def test_new_seeds_are_short_non_negative_integers():
    seeds = {draws.new_seed() for _ in range(20)}
    assert all(0 <= seed < draws.DRAWN_SEED_BELOW for seed in seeds) and len(seeds) > 1


def test_sentence_margin_is_the_lead_of_the_voted_label_over_the_runner_up_by_samples():
    assert draws.sentence_margin({"faithful": 5}, 5) == 1
    assert draws.sentence_margin({"faithful": 3, "invented": 2}, 5) == Fraction(1, 5)
    assert draws.sentence_margin({"faithful": 2, "invented": 2, "speculative": 1}, 5) == 0
    # Two samples abstained: the voted label's lead is 3 - 0 of 5 samples.
    assert draws.sentence_margin({"invented": 3}, 5) == Fraction(3, 5)
    assert draws.sentence_margin({}, 5) == 0
    with pytest.raises(ValueError):
        draws.sentence_margin({"faithful": 1}, 0)


def test_turn_margin_is_the_smallest_of_its_sentences():
    assert draws.turn_margin([{"faithful": 5}, {"faithful": 3, "invented": 2}, {"invented": 4, "faithful": 1}], 5) \
        == Fraction(1, 5)
    assert draws.turn_margin([], 5) == 1


def test_uncertainty_order_worked_by_hand():
    # turn 7: margins 1 and 1/5 -> 1/5; turn 3: 3/5; turn 9: 0; turn 4: 1/5 (ties with 7: lower id first).
    margins = {
        7: draws.turn_margin([{"faithful": 5}, {"faithful": 3, "invented": 2}], 5),
        3: draws.turn_margin([{"invented": 4, "faithful": 1}], 5),
        9: draws.turn_margin([{"faithful": 2, "speculative": 2, "invented": 1}], 5),
        4: draws.turn_margin([{"reliable": 2, "faithful": 1}], 5),
    }
    assert draws.uncertainty_order(margins, 10) == [9, 4, 7, 3]
    assert draws.uncertainty_order(margins, 2) == [9, 4]


def test_a_single_review_decides_only_drawn_turns_under_single_review_not_yet_complete_by_agreement():
    assert gold.decided_by_review(1, 2, single_review=True)
    assert not gold.decided_by_review(0, 2, single_review=True)
    assert not gold.decided_by_review(1, 2, single_review=False)
    assert not gold.decided_by_review(2, 2, single_review=True)  # two annotators: agreement decides


def test_a_reviewed_turn_gives_each_answered_sentence_the_reviewers_label():
    answers = {1: gold.GivenAnswer("invented", 4, "contradiction"), 2: gold.GivenAnswer("faithful"),
               3: gold.GivenAnswer("speculative"), 4: gold.GivenAnswer("")}
    decided = gold.decide_reviewed_turn(default_protocol(), [1, 2, 3, 4, 5], answers, settled={2}, imported={3: "faithful"},
                                        imported_is_final=True)
    assert [(g.sentence_id, g.label, g.severity, g.error_type) for g in decided] == [(1, "invented", 4, "contradiction")]
    assert decided[0].path == {"relevance": "relevant", "kind": "factual", "faithfulness": "invented"}
    replaced = gold.decide_reviewed_turn(default_protocol(), [3], answers, imported={3: "faithful"}, imported_is_final=False)
    assert replaced[0].label == "speculative" and "imported gold was faithful" in replaced[0].reason
