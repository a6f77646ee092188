"""Gold by step kind (issue 42) on plain values: a multiple step agrees on equal sets, a scale on equal points,
text never decides; a disagreement on a multiple or scale step is a dispute (no database)."""

from annotator.domain import gold, gold_kinds
from annotator.domain.protocol.document import default_protocol, load_shipped

HALLU = load_shipped("halludetect")
COGNIBENCH = default_protocol()


def walk(errors=("fabricated",), severity=4, text="The statute says three years.", **extra):
    path = {"supported": "no", "error_types": list(errors), "severity": severity, "justification": text}
    path.update(extra)
    return path


def given(path):
    # The label the walk ends on (a set out of document order is not one the walk stores: the label says it).
    return gold.GivenAnswer("supported" if path["supported"] == "yes" else "unsupported", path=path)


def decide(*paths):
    return gold.decide_turn(HALLU, [1], {1: [given(p) for p in paths]}, annotators=len(paths))


def test_equal_sets_and_points_agree_whatever_the_order_and_the_texts():
    first = walk(["fabricated", "wrong_citation"], 4, "No such case.")
    second = walk(["wrong_citation", "fabricated"], 4, "The cited case does not exist.")
    decision = decide(first, second)
    assert decision.disputed == [] and len(decision.agreed) == 1
    agreed = decision.agreed[0]
    assert agreed.label == "unsupported"
    # The gold's walk: the shared choices and values; no text, since none of the differing texts is the gold's.
    assert agreed.path == {"supported": "no", "error_types": ["fabricated", "wrong_citation"], "severity": 4}


def test_the_same_text_is_kept_in_the_gold_walk():
    decision = decide(walk(text="Same."), walk(text="Same."))
    assert decision.agreed[0].path["justification"] == "Same."
    assert HALLU.label_of(decision.agreed[0].path) == "unsupported"


def test_a_different_set_is_a_dispute():
    assert decide(walk(["fabricated"]), walk(["fabricated", "outdated_law"])).disputed == [1]


def test_a_different_point_is_a_dispute():
    assert decide(walk(severity=4), walk(severity=5)).disputed == [1]
    assert decide(walk(severity=4), walk(severity=4), walk(severity=2)).disputed == [1]


def test_a_step_one_annotator_answered_and_another_did_not_is_a_dispute():
    partial = {"supported": "no", "error_types": ["fabricated"]}
    assert gold_kinds.disputed_steps(HALLU, [walk(), partial]) == ["severity"]


def test_a_choice_disagreement_stays_a_dispute_and_agreement_on_a_choice_label_needs_no_kind_step():
    assert decide({"supported": "yes"}, walk()).disputed == [1]
    agreed = decide({"supported": "yes"}, {"supported": "yes"}).agreed[0]
    assert (agreed.label, agreed.path) == ("supported", {"supported": "yes"})


def test_a_kind_disagreement_is_disputed_even_on_final_imported_gold():
    # Imported gold never hides a disagreement: a scale the annotators answered differently reaches the queue.
    decision = gold.decide_turn(HALLU, [1], {1: [given(walk(severity=1)), given(walk(severity=5))]}, annotators=2,
                                imported={1: "unsupported"})
    assert decision.disputed == [1]


def test_same_answer_compares_sets_and_typed_points():
    assert gold_kinds.same_answer("multiple", [["a", "b"], ["b", "a"]])
    assert not gold_kinds.same_answer("multiple", [["a"], ["a", "b"]])
    assert not gold_kinds.same_answer("multiple", [["a"], "a"])
    assert gold_kinds.same_answer("scale", [3, 3])
    assert not gold_kinds.same_answer("scale", [1, True])


def test_agreement_holds_until_an_annotator_changes_a_value():
    path = {"supported": "no", "error_types": ["fabricated"], "severity": 4}
    labels = ["unsupported", "unsupported"]
    assert gold_kinds.agreement_holds(HALLU, "unsupported", path, [walk(text="a"), walk(text="b")], labels)
    assert not gold_kinds.agreement_holds(HALLU, "unsupported", path, [walk(), walk(severity=3)], labels)
    assert not gold_kinds.agreement_holds(HALLU, "unsupported", path, [walk(), walk()], ["unsupported", "supported"])


def test_a_review_keeps_the_reviewers_own_walk_with_its_text():
    reviewed = gold.decide_reviewed_turn(HALLU, [1], {1: given(walk(text="Mine."))})
    assert reviewed[0].path == walk(text="Mine.")


def test_a_protocol_without_kind_steps_keeps_todays_rule():
    faithful = COGNIBENCH.path_for_label("faithful")
    other = dict(faithful)  # whatever the walks hold, the label decides and the gold's walk is the label's
    decision = gold.decide_turn(COGNIBENCH, [1], {1: [gold.GivenAnswer("faithful", path=other),
                                                      gold.GivenAnswer("faithful")]}, annotators=2)
    assert decision.agreed[0].path == faithful
    assert gold_kinds.agreement_holds(COGNIBENCH, "faithful", faithful, [{}, {}], ["faithful", "faithful"])

