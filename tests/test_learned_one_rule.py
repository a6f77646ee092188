"""The learned judge's one decision rule (issue 47 item 7): hallucinated when the hallucinated labels hold at least
half the probability, then the most probable label of that side; the figures, the exported predictions and the
judge's jobs all label through it."""

import numpy as np

from autolabel.evaluation.scores import decision
from autolabel.learned.decision import SAMPLES, THRESHOLD, judge_decision, votes_for
from autolabel.learned.validation import score_probabilities
from tests.test_learned_rules import LABELS, PROTOCOL


def _row(**shares):
    row = np.zeros(len(LABELS))
    for label, share in shares.items():
        row[LABELS.index(label)] = share
    return row


def _voted(row):
    votes = votes_for(row, LABELS, PROTOCOL)
    assert len(votes) == SAMPLES
    return decision(votes, THRESHOLD, PROTOCOL)


def test_a_hallucinated_mass_under_one_half_that_rounds_to_half_the_votes_is_not_hallucinated():
    # 0.49 of hallucinated probability: 9.8 of 20 votes, rounded to 10 it read "hallucinated"; the rule says no.
    row = _row(invented=0.245, speculative=0.245, faithful=0.26, reliable=0.25)
    rule = judge_decision(row, LABELS, PROTOCOL)
    assert not rule.hallucinated and rule.label == "faithful" and rule.confidence == 0.26
    assert abs(rule.hallucinated_probability - 0.49) < 1e-12
    voted = _voted(row)
    assert (voted.hallucinated, voted.label) == (False, "faithful")
    # The figures read the same label: a gold-faithful sentence is no false alarm.
    report = score_probabilities(PROTOCOL, LABELS, np.asarray([row]), ["faithful"], [10])
    assert report["any_hallucination"]["predicted_words"] == 0


def test_half_the_probability_exactly_is_hallucinated_and_the_most_probable_label_of_that_side_is_taken():
    # Invented is the most probable hallucinated label by a hair that rounding to twentieths erased (5 votes each),
    # and the tie-break order (invented first) would have given it anyway; here speculative leads by the hair.
    row = _row(invented=0.24, speculative=0.26, faithful=0.5)
    rule = judge_decision(row, LABELS, PROTOCOL)
    assert rule.hallucinated and rule.label == "speculative"
    assert (_voted(row).hallucinated, _voted(row).label) == (True, "speculative")
    # Equal probabilities: the protocol's order (hallucinated labels first, document order).
    tie = _row(invented=0.25, speculative=0.25, faithful=0.5)
    assert judge_decision(tie, LABELS, PROTOCOL).label == "invented" == _voted(tie).label


def test_the_figures_path_and_the_job_path_give_the_rules_label_for_any_probabilities():
    rng = np.random.default_rng(47)
    rows = np.vstack([rng.dirichlet(np.full(len(LABELS), alpha), size=400) for alpha in (0.3, 1.0, 5.0)])
    rows = np.vstack([rows, np.round(rows * 40) / 40])  # many rows on the twentieths' edges
    rows = rows / rows.sum(axis=1, keepdims=True)
    for row in rows:
        rule = judge_decision(row, LABELS, PROTOCOL)
        voted = _voted(row)
        assert (voted.hallucinated, voted.label) == (rule.hallucinated, rule.label), row
        report = score_probabilities(PROTOCOL, LABELS, np.asarray([row]), [rule.label], [3])
        assert report["any_hallucination"]["predicted_words"] == (3 if rule.hallucinated else 0)
        assert report["factual"]["predicted_words"] == (3 if rule.label == "invented" else 0)


def test_the_verdict_shape_learns_hallucinated_or_not_from_all_gold_then_each_sides_label_from_its_own():
    from autolabel.learned.model import judge_for
    from tests.test_learned_rules import toy_corpus

    examples, gold, _ = toy_corpus()
    model = judge_for(PROTOCOL, strategy="verdict").fit(examples, gold)
    assert set(model.classifiers) == {"verdict", "hallucinated", "not"}
    # The label within the hallucinated side learned from the hallucinated gold alone.
    assert set(model.classifiers["hallucinated"].classes_) == {"invented", "speculative"}
    probabilities = model.predict_proba(examples)
    assert np.allclose(probabilities.sum(axis=1), 1)
    matrix = model.features.transform(examples)
    verdict = model.classifiers["verdict"]
    first = verdict.predict_proba(matrix)[:, list(verdict.classes_).index("hallucinated")]
    for row, mass in zip(probabilities, first):  # the rule's verdict is the first classifier's
        assert abs(judge_decision(row, LABELS, PROTOCOL).hallucinated_probability - mass) < 1e-9
    assert [judge_decision(row, LABELS, PROTOCOL).label for row in probabilities] == gold  # separable toy gold
