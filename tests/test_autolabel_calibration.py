"""The paper's scores, calibration, the pre-labeler as a rater and the bootstrap comparison, by hand (pure)."""

import math

import krippendorff
import numpy as np
import pytest

from annotator.domain.agreement import cohen_kappa
from annotator.domain.protocol import path_for_label
from autolabel.evaluation.calibration import bin_index, calibration
from autolabel.evaluation.comparison import compare, intervals
from autolabel.evaluation.scores import Item, baseline_scores, detection_scores, evaluate
from autolabel.evaluation.rater_agreement import RatedSentence, rater_agreement
from annotator.domain.protocol.document import default_protocol

COGNIBENCH = default_protocol()

HALLUCINATED = {"invented", "misleading", "speculative"}
ABSTAIN = {"label": None, "hallucinated": None, "kind": None}


def v(label):
    kind = {"faithful": "factual", "invented": "factual", "irrelevant": None}.get(label, "cognitive")
    return {"label": label, "hallucinated": label in HALLUCINATED, "kind": kind}


# --- 1. the paper's scores ------------------------------------------------------------------------------

FOUR = [
    Item(10, "invented", [v("invented")] * 3 + [v("faithful")] * 2),
    Item(4, "faithful", [v("invented")] * 2 + [v("faithful")] * 3),
    Item(6, "speculative", [v("speculative")] * 5),
    Item(8, "misleading", [v("misleading")] + [v("reliable")] * 4),
]


def test_cognibench_overall_is_the_mean_of_factual_and_cognitive_f1_not_the_pooled_f1():
    at2 = detection_scores(COGNIBENCH, FOUR, 2)
    # Factual: predicted 14 words, 10 right, gold 10 -> P 0.7143, R 1, F1 0.8333.
    # Cognitive: predicted 6, right 6, gold 14 -> P 1, R 0.4286, F1 0.6.
    assert at2["factual"]["f1"] == pytest.approx(0.8333, abs=1e-4)
    assert at2["cognitive"]["f1"] == pytest.approx(0.6, abs=1e-4)
    assert at2["cognibench_overall"]["f1"] == pytest.approx((0.8333 + 0.6) / 2, abs=1e-4)
    # Pooled over all hallucinated words: predicted 20, right 16, gold 24 -> P 0.8, R 0.6667, F1 0.7273.
    assert at2["any_hallucination"]["f1"] == pytest.approx(0.7273, abs=1e-4)
    assert at2["overall"] is at2["any_hallucination"]  # the old name, kept for API clients


def test_trivial_baselines_by_the_same_counting():
    baselines = baseline_scores(COGNIBENCH, FOUR)
    every, none = baselines["flag_every_sentence"], baselines["flag_none"]
    # Every sentence flagged: 28 words predicted in each view.
    assert every["any_hallucination"]["precision"] == pytest.approx(round(24 / 28, 4))
    assert every["any_hallucination"]["recall"] == 1.0
    assert every["factual"]["f1"] == pytest.approx(2 * (10 / 28) / (10 / 28 + 1), abs=1e-4)
    assert every["cognitive"]["f1"] == pytest.approx(2 * 0.5 / 1.5, abs=1e-4)
    assert every["cognibench_overall"]["f1"] == pytest.approx((0.5263 + 0.6667) / 2, abs=1e-4)
    # Nothing flagged: precision undefined, recall 0, F1 0 by convention.
    for view in ("any_hallucination", "factual", "cognitive"):
        assert (none[view]["precision"], none[view]["recall"], none[view]["f1"]) == (None, 0.0, 0.0)
    assert none["cognibench_overall"]["f1"] == 0.0
    assert evaluate(COGNIBENCH, FOUR, samples=5, threshold=3)["baselines"] == baselines


def test_macro_is_undefined_when_a_view_has_no_gold():
    scores = detection_scores(COGNIBENCH, [Item(5, "invented", [v("invented")] * 5)], 3)
    assert scores["factual"]["f1"] == 1.0 and scores["cognitive"]["f1"] is None
    assert scores["cognibench_overall"]["f1"] is None


# --- 2. calibration -------------------------------------------------------------------------------------

CALIBRATION_ITEMS = [
    # hallucinated 4/5 -> binary confidence 0.8, right; label invented 0.8, right
    Item(1, "invented", [v("invented")] * 4 + [v("faithful")]),
    # hallucinated 3/5 -> confidence 0.6, wrong; label invented 0.6, wrong
    Item(1, "faithful", [v("invented")] * 3 + [v("faithful")] * 2),
    # not hallucinated 5/5 -> confidence 1.0, right; faithful 1.0, right
    Item(1, "faithful", [v("faithful")] * 5),
    # one sample abstains: 2 of 4 say hallucinated (< 3) -> not, confidence 0.5, wrong; reliable 0.5, wrong
    Item(1, "speculative", [v("speculative")] * 2 + [v("reliable")] * 2 + [ABSTAIN]),
    # not hallucinated 4/5 -> confidence 0.8, right; faithful 0.8, right
    Item(1, "faithful", [v("faithful")] * 4 + [v("invented")]),
    # every sample abstained: no forecast
    Item(1, "faithful", [ABSTAIN] * 5),
]


def test_calibration_hand_computed():
    report = calibration(COGNIBENCH, CALIBRATION_ITEMS, threshold=3)
    assert report["abstained"] == 1
    binary, label = report["binary"], report["label"]
    assert binary["n"] == label["n"] == 5
    counts = {row["low"]: (row["count"], row["confidence"], row["accuracy"]) for row in binary["bins"] if row["count"]}
    assert counts == {0.5: (1, 0.5, 0.0), 0.6: (1, 0.6, 0.0), 0.8: (2, 0.8, 1.0), 0.9: (1, 1.0, 1.0)}
    # ECE = (2 x |1 - 0.8| + |0 - 0.6| + |1 - 1| + |0 - 0.5|) / 5 = 1.5 / 5
    assert binary["ece"] == pytest.approx(0.3)
    # Brier = ((0.8-1)^2 + (0.6-0)^2 + 0 + (0.5-1)^2 + (0.2-0)^2) / 5 = 0.69 / 5
    assert binary["brier"] == pytest.approx(0.138)
    assert binary["accuracy"] == pytest.approx(0.6)
    # Seven-way: the same confidences and outcomes, so the same ECE; Brier sums over the labels:
    # 0.2^2+0.2^2, 0.6^2+0.6^2, 0, 0.5^2+0.5^2, 0.2^2+0.2^2 -> (0.08 + 0.72 + 0 + 0.5 + 0.08) / 5
    assert label["ece"] == pytest.approx(0.3)
    assert label["brier"] == pytest.approx(0.276)


def test_bins_are_equal_width_with_the_last_closed():
    assert [bin_index(x) for x in (0.0, 0.0999, 0.1, 0.3, 3 / 10, 0.2999, 0.95, 1.0)] == [0, 0, 1, 3, 3, 2, 9, 9]


def test_a_vote_without_a_label_has_zero_label_confidence_and_is_wrong():
    cognitive_no_label = {"label": None, "hallucinated": True, "kind": "cognitive"}
    report = calibration(COGNIBENCH, [Item(1, "speculative", [cognitive_no_label] * 5)], threshold=3)
    assert report["binary"]["accuracy"] == 1.0 and report["binary"]["brier"] == 0.0
    assert report["label"]["bins"][0]["count"] == 1 and report["label"]["accuracy"] == 0.0
    assert report["label"]["brier"] == 1.0  # only the gold label's (0 - 1)^2


# --- the pre-labeler as a rater -------------------------------------------------------------------------

NAN = math.nan
# Krippendorff (2011), section E: 4 observers x 12 units, values 1-5, nominal alpha 0.743.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]
AS_LABEL = {1: "faithful", 2: "invented", 3: "misleading", 4: "speculative", 5: "reliable"}


def _label(value):
    return None if isinstance(value, float) and math.isnan(value) else AS_LABEL[value]


def krippendorff_sentences():
    """Observer 1 as the pre-labeler, observers 2-4 as the annotators."""
    pre, *humans = KRIPPENDORFF_2011
    return [
        RatedSentence(gold=None, prelabel=_label(pre[u]),
                      humans={f"h{i}": _label(row[u]) for i, row in enumerate(humans) if _label(row[u])})
        for u in range(12)
    ]


def test_alpha_with_the_prelabeler_is_krippendorffs_published_value():
    result = rater_agreement(COGNIBENCH, krippendorff_sentences())["variables"]["label"]
    # Every pairable unit has two humans, so "humans + pre-labeler" is the published four-observer table.
    assert round(result["alpha_with_prelabeler"]["alpha"], 3) == 0.743
    humans_only = np.array(KRIPPENDORFF_2011[1:])
    assert result["alpha_humans"]["alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=humans_only, level_of_measurement="nominal"), abs=1e-12)


@pytest.mark.parametrize("step", ["relevance", "kind", "faithfulness", "rational", "grounded", "unequivocal"])
def test_per_step_alpha_and_kappa_match_the_krippendorff_package(step):
    rng = np.random.default_rng(3)
    labels = ["irrelevant", "faithful", "invented", "misleading", "speculative", "reliable", "unequivocal"]
    sentences = []
    for _ in range(300):
        given = [labels[i] for i in rng.integers(0, 7, size=4)]
        gold = given[0] if rng.random() < 0.6 else labels[rng.integers(0, 7)]
        humans = {f"h{i}": label for i, label in enumerate(given[1:]) if rng.random() > 0.2}
        sentences.append(RatedSentence(gold=gold, prelabel=given[0], humans=humans))
    result = rater_agreement(COGNIBENCH, sentences)["variables"][step]

    def answer(label):
        return (path_for_label(label).get(step) if label else None) or None

    human_rows = [[answer(s.humans.get(f"h{i}")) for s in sentences] for i in range(3)]
    pre_row = [answer(s.prelabel) for s in sentences]
    shared = [sum(row[u] is not None for row in human_rows) >= 2 for u in range(len(sentences))]
    domain = sorted({a for row in human_rows + [pre_row] for a in row if a})

    def package_alpha(rows):
        data = np.array([[domain.index(row[u]) if row[u] else np.nan for u in range(len(sentences)) if shared[u]]
                         for row in rows], dtype=float)
        return krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")

    assert result["alpha_humans"]["alpha"] == pytest.approx(package_alpha(human_rows), abs=1e-9)
    assert result["alpha_with_prelabeler"]["alpha"] == pytest.approx(package_alpha(human_rows + [pre_row]), abs=1e-9)
    # Kappa with gold, on the sentences where both paths reach the step, from the two-by-two table.
    pairs = [(answer(s.prelabel), answer(s.gold)) for s in sentences]
    pairs = [(a, b) for a, b in pairs if a and b]
    table = np.array([[sum(1 for a, b in pairs if (a, b) == (x, y)) for y in domain] for x in domain], dtype=float)
    total = table.sum()
    expected = (table.sum(1) @ table.sum(0)) / total**2
    kappa = (np.trace(table) / total - expected) / (1 - expected)
    assert result["kappa_gold"]["n"] == len(pairs)
    assert result["kappa_gold"]["kappa"] == pytest.approx(kappa, abs=1e-9)


def test_cohen_kappa_with_gold_textbook_table():
    # The textbook 2 x 2 table (20 yes-yes, 5 yes-no, 10 no-yes, 15 no-no): kappa 0.40.
    rows = ([("invented", "invented")] * 20 + [("invented", "faithful")] * 5 + [("faithful", "invented")] * 10
            + [("faithful", "faithful")] * 15)
    result = rater_agreement(COGNIBENCH, [RatedSentence(gold=g, prelabel=p, humans={"ann": g}) for p, g in rows])["variables"]
    assert result["label"]["kappa_gold"]["kappa"] == pytest.approx(0.40)
    assert result["faithfulness"]["kappa_gold"] == {"kappa": pytest.approx(0.40), "n": 50}
    assert result["faithfulness"]["kappa_annotators"]["ann"]["kappa"] == pytest.approx(0.40)
    # Every path says "relevant" and "factual": no variation, kappa undefined; the cognitive steps are never reached.
    assert result["relevance"]["kappa_gold"]["kappa"] is None
    assert result["rational"]["kappa_gold"] == {"kappa": None, "n": 0}
    assert result["label"]["alpha_humans"] == {"alpha": None, "n": 0}  # one human per sentence: nothing pairable


# --- comparing two jobs ---------------------------------------------------------------------------------

def _turns(seed, right_share, n_turns=40):
    rng = np.random.default_rng(seed)
    turns = []
    for _ in range(n_turns):
        turn = []
        for _ in range(5):
            gold = rng.choice(["faithful", "invented", "speculative", "reliable"])
            said = gold if rng.random() < right_share else rng.choice(["faithful", "invented", "speculative"])
            turn.append(Item(int(rng.integers(3, 20)), str(gold), [v(str(said))] * 5))
        turns.append(turn)
    return turns


def _same_gold_other_votes(turns, seed, right_share):
    rng = np.random.default_rng(seed)
    return [[Item(item.words, item.gold, [v(item.gold if rng.random() < right_share else "faithful")] * 5)
             for item in turn] for turn in turns]


def test_bootstrap_is_reproducible_and_its_interval_holds_the_point_estimate():
    a = _turns(1, 0.6)
    b = _same_gold_other_votes(a, 2, 0.9)
    first, again = compare(COGNIBENCH, a, 3, b, 3, seed=11), compare(COGNIBENCH, a, 3, b, 3, seed=11)
    assert first == again
    assert compare(COGNIBENCH, a, 3, b, 3, seed=12)["views"]["factual"]["a"]["ci"] != first["views"]["factual"]["a"]["ci"]
    assert (first["turns"], first["sentences"], first["resamples"]) == (40, 200, 2000)
    flat_a = [item for turn in a for item in turn]
    for view in ("any_hallucination", "factual", "cognitive", "cognibench_overall"):
        for side in ("a", "b"):
            low, high = first["views"][view][side]["ci"]
            assert low <= first["views"][view][side]["f1"] <= high
        assert first["views"][view]["a"]["f1"] == detection_scores(COGNIBENCH, flat_a, 3)[view]["f1"]
    difference = first["views"]["any_hallucination"]["difference"]
    # B is right 90 % of the time against A's 60 %: the paired interval lies above zero.
    assert difference["f1"] > 0 and difference["ci"][0] > 0 and difference["share_b_better"] > 0.97


def test_one_systems_intervals_are_the_comparisons_own_for_that_side():
    a = _turns(3, 0.7)
    b = _same_gold_other_votes(a, 4, 0.5)
    own, compared = intervals(COGNIBENCH, a, 3, seed=11), compare(COGNIBENCH, a, 3, b, 3, seed=11)
    assert set(own) == {"any_hallucination", "factual", "cognitive", "cognibench_overall"}
    assert own == {view: compared["views"][view]["a"]["ci"] for view in own}
    assert own["factual"][0] < own["factual"][1]  # 40 turns of mixed votes: the figure moves with the turns drawn
    assert intervals(COGNIBENCH, [], 3) == {view: [None, None] for view in own}


def test_a_job_compared_with_itself_differs_by_exactly_zero():
    a = _turns(5, 0.7)
    report = compare(COGNIBENCH, a, 3, a, 3, resamples=300)
    for view in report["views"].values():
        assert view["difference"]["f1"] == 0 and view["difference"]["ci"] == [0.0, 0.0]
        assert view["a"] == view["b"]


def test_comparison_of_nothing_is_empty_not_an_error():
    report = compare(COGNIBENCH, [], 3, [], 3)
    assert report["turns"] == 0 and report["views"]["factual"]["a"] == {"f1": None, "ci": [None, None]}
    with pytest.raises(ValueError):
        compare(COGNIBENCH, [[FOUR[0]]], 3, [], 3)


def test_nothing_to_measure_gives_empty_figures_not_errors():
    report = calibration(COGNIBENCH, [], threshold=3)
    assert report["binary"]["n"] == 0 and report["binary"]["ece"] is None and report["label"]["brier"] is None
    assert all(row["count"] == 0 for row in report["binary"]["bins"])
    rater = rater_agreement(COGNIBENCH, [])
    assert rater["annotators"] == [] and rater["variables"]["label"]["kappa_gold"] == {"kappa": None, "n": 0}
    assert rater["variables"]["kind"]["alpha_with_prelabeler"] == {"alpha": None, "n": 0}


def test_a_prediction_without_a_label_counts_on_the_steps_its_stage_one_answered():
    # Cognitive at stage 1, no stage-2 label: it answered "relevant" and "cognitive", nothing further.
    sentences = [RatedSentence(gold="speculative", prelabel="", prelabel_kind="cognitive"),
                 RatedSentence(gold="faithful", prelabel="", prelabel_kind="cognitive"),
                 RatedSentence(gold="faithful", prelabel="faithful", prelabel_kind="factual")]
    result = rater_agreement(COGNIBENCH, sentences)["variables"]
    assert result["label"]["kappa_gold"]["n"] == 1
    assert result["relevance"]["kappa_gold"]["n"] == 3 and result["kind"]["kappa_gold"]["n"] == 3
    # Kind, pre-labeler (rows) against gold (columns): factual/factual 1, cognitive/factual 1, cognitive/cognitive 1.
    assert result["kind"]["kappa_gold"]["kappa"] == pytest.approx(cohen_kappa([[1, 0], [1, 1]]))
    assert result["rational"]["kappa_gold"]["n"] == 0 and result["faithfulness"]["kappa_gold"]["n"] == 1

