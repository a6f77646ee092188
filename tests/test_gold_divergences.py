"""The steps an adjudication card marks where the walks differ (annotator/gold/selectors.py diverged_steps, issue 50
item 12): the first where they part and every later step two sides answered differently, never a text's words."""

from annotator.domain.protocol.document import load_shipped
from annotator.gold.selectors import diverged_steps

HALLU = load_shipped("halludetect")


def walk(types, severity, text):
    return {"supported": "no", "error_types": types, "severity": severity, "justification": text}


def test_walks_that_differ_on_the_types_and_the_severity_are_marked_at_both_not_at_their_texts():
    first, second = walk(["fabricated"], 2, "A wrong year."), walk(["fabricated", "wrong_citation"], 5, "Out of time.")
    assert diverged_steps(HALLU, [first, second]) == ["error_types", "severity"]


def test_a_later_step_only_one_side_reached_is_not_marked_and_agreeing_walks_mark_nothing():
    parted = {"supported": "yes"}
    assert diverged_steps(HALLU, [parted, walk(["fabricated"], 2, "x")]) == ["supported"]
    assert diverged_steps(HALLU, [walk(["fabricated"], 2, "x"), walk(["fabricated"], 2, "x")]) == []


def test_with_three_sides_a_step_two_of_them_answered_differently_is_marked():
    sides = [walk(["fabricated"], 2, "a"), walk(["fabricated"], 2, "b"), walk(["fabricated"], 4, "c")]
    assert diverged_steps(HALLU, sides) == ["severity"]


def test_only_the_texts_differ_the_first_divergence_is_still_named():
    # Not a dispute gold makes (text never decides), but the card still names where the walks part.
    assert diverged_steps(HALLU, [walk(["fabricated"], 2, "a"), walk(["fabricated"], 2, "b")]) == ["justification"]
