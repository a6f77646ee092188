"""The vote and the word-weighted evaluation, with hand-computed examples (pure, no database)."""

import pytest

from annotator.domain.protocol.document import default_protocol
from autolabel.evaluation.scores import Item, confusion, detection_scores, evaluate
from autolabel.labelling.voting import decide

COGNIBENCH = default_protocol()


def v(label, hallucinated=None, kind=None):
    if hallucinated is None and label is not None:
        hallucinated = label in {"invented", "misleading", "speculative"}
    if kind is None and label is not None:
        kind = {"faithful": "factual", "invented": "factual", "irrelevant": None}.get(label, "cognitive")
    return {"label": label, "hallucinated": hallucinated, "kind": kind}


ABSTAIN = {"label": None, "hallucinated": None, "kind": None}


def test_threshold_decides_hallucination_and_abstentions_are_counted():
    votes = [v("invented"), v("invented"), v("faithful"), v("faithful"), ABSTAIN]
    at2 = decide(votes, threshold=2)
    assert (at2.hallucinated, at2.label, at2.hallucinated_votes, at2.faithful_votes, at2.abstentions) == (
        True, "invented", 2, 2, 1)
    at3 = decide(votes, threshold=3)
    assert (at3.hallucinated, at3.label) == (False, "faithful")
    assert at3.label_votes == {"invented": 2, "faithful": 2}


def test_never_a_label_no_sample_gave():
    # Three samples say "hallucinated cognitive" but stage 2 failed for all of them.
    votes = [v(None, True, "cognitive")] * 3 + [v("faithful"), v("faithful")]
    decision = decide(votes, threshold=3)
    assert decision.hallucinated is True
    assert decision.label == ""
    assert decision.kind == "cognitive"
    all_abstain = decide([ABSTAIN] * 5, threshold=2)
    assert (all_abstain.label, all_abstain.hallucinated, all_abstain.abstentions) == ("", False, 5)


def test_majority_label_among_agreeing_samples_with_ties_to_the_hallucination():
    votes = [v("misleading"), v("speculative"), v("speculative"), v("reliable"), v("unequivocal")]
    assert decide(votes, threshold=3).label == "speculative"
    # At threshold 4 it is not hallucinated: reliable and unequivocal tie, the first in order wins.
    assert decide(votes, threshold=4).label == "reliable"
    assert decide([v("invented"), v("misleading")], threshold=1).label == "invented"
    with pytest.raises(ValueError):
        decide(votes, threshold=0)


def test_word_weighted_scores_hand_computed():
    # Four sentences, 5 samples each.
    items = [
        # gold invented, 10 words, 3 samples say invented -> detected at t<=3
        Item(10, "invented", [v("invented")] * 3 + [v("faithful")] * 2),
        # gold faithful, 4 words, 2 samples say invented -> a false alarm at t<=2
        Item(4, "faithful", [v("invented")] * 2 + [v("faithful")] * 3),
        # gold speculative, 6 words, 5 samples say speculative
        Item(6, "speculative", [v("speculative")] * 5),
        # gold misleading, 8 words, 1 sample says misleading, 4 reliable -> missed at t>=2
        Item(8, "misleading", [v("misleading")] + [v("reliable")] * 4),
    ]
    at2 = detection_scores(COGNIBENCH, items, 2)
    # Overall at 2: predicted = 10 + 4 + 6 = 20 words, correct = 16, gold = 10 + 6 + 8 = 24.
    assert at2["overall"]["precision"] == pytest.approx(0.8)
    assert at2["overall"]["recall"] == pytest.approx(round(16 / 24, 4))
    assert at2["overall"]["f1"] == pytest.approx(round(2 * 0.8 * 0.6667 / (0.8 + 0.6667), 4))
    # Factual at 2: predicted 14 words, correct 10, gold 10.
    assert at2["factual"]["precision"] == pytest.approx(round(10 / 14, 4))
    assert at2["factual"]["recall"] == 1.0
    # Cognitive at 2: predicted 6, correct 6, gold 14.
    assert (at2["cognitive"]["precision"], at2["cognitive"]["recall"]) == (1.0, round(6 / 14, 4))
    at3 = detection_scores(COGNIBENCH, items, 3)
    # Overall at 3: the false alarm is gone: predicted 16, correct 16.
    assert at3["overall"]["precision"] == 1.0 and at3["overall"]["recall"] == pytest.approx(round(16 / 24, 4))
    at1 = detection_scores(COGNIBENCH, items, 1)
    assert at1["overall"]["recall"] == 1.0 and at1["overall"]["precision"] == pytest.approx(round(24 / 28, 4))
    report = evaluate(COGNIBENCH, items, samples=5, threshold=3)
    assert sorted(report["thresholds"]) == [1, 2, 3, 4, 5] and report["words"] == 28
    # Nothing predicted at 5 except the speculative sentence.
    assert report["thresholds"][5]["overall"]["predicted_words"] == 6


def test_no_prediction_gives_undefined_precision_not_a_crash():
    scores = detection_scores(COGNIBENCH, [Item(5, "faithful", [v("faithful")] * 5)], 3)
    assert scores["overall"]["precision"] is None and scores["overall"]["recall"] is None


def test_cognitive_confusion_matrix_hand_computed():
    items = [
        Item(3, "speculative", [v("speculative")] * 5),
        Item(3, "speculative", [v("reliable")] * 5),
        Item(3, "reliable", [v("reliable")] * 4 + [v("speculative")]),
        Item(3, "unequivocal", [v("faithful")] * 5),
        Item(3, "misleading", [v(None, True, "cognitive")] * 5),
        Item(3, "invented", [v("invented")] * 5),  # not a cognitive gold: not in the matrix
    ]
    report = confusion(COGNIBENCH, items, threshold=3)["cognitive"]
    assert report["total"] == 5 and report["correct"] == 2
    assert report["accuracy"] == 0.4
    assert report["matrix"]["speculative"]["reliable"] == 1
    assert report["matrix"]["unequivocal"]["not cognitive"] == 1
    assert report["matrix"]["misleading"]["no label"] == 1
    assert report["accuracy_when_cognitive"] == round(2 / 3, 4)
