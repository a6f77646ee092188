"""The learned judge's measured options: the decision weights chosen on training turns, the stem overlaps."""

import numpy as np

from autolabel.evaluation.scores import decision
from autolabel.learned.dense import dense_features, dense_matrix
from autolabel.learned.features import ALIGNED, CUES, STEMMED, Example, dense_names
from autolabel.learned.model import judge_for, reweigh
from autolabel.learned.decision import SAMPLES, THRESHOLD, judge_decision, votes_for
from autolabel.learned.validation import decision_weights, fit_judge, score_probabilities
from tests.test_learned_rules import LABELS, PROTOCOL, REFERENCE, toy_corpus


def test_the_stem_overlaps_find_an_inflected_word_and_come_last_so_older_models_read_the_same_columns():
    names = dense_names(LABELS)
    stemmed = names[-len(STEMMED) - len(ALIGNED):-len(ALIGNED)]  # then the alignment's (test_learned_alignment)
    assert stemmed == list(STEMMED) and names[-len(STEMMED) - len(ALIGNED) - 1] == f"votes_{LABELS[-1]}"
    row = dict(zip(names, dense_features(Example("Budapest stands on the river banks.", REFERENCE), LABELS)))
    # "stands" and "banks" are the reference's "stand" and "banks"; "river" is not in it at all.
    assert row["stem_content_overlap"] > row["content_overlap"]
    assert row["content_found_per_word"] < row["content_overlap"]  # per word, the stop words count too
    unread = dense_matrix([Example("Budapest stands on the river banks.", REFERENCE)], LABELS, stems=False)
    assert not unread[0, -len(STEMMED) - len(ALIGNED):-len(ALIGNED)].any()  # not read, not paid for
    default = judge_for(PROTOCOL).features.dense_columns
    assert [names[i] for i in default] == [name for name in names if name not in CUES + STEMMED + ALIGNED]
    assert {names[i] for i in judge_for(PROTOCOL, use_stems=True).features.dense_columns} >= set(STEMMED)


def _probabilities(rows):
    matrix = np.zeros((len(rows), len(LABELS)))
    for row, shares in enumerate(rows):
        for label, share in shares.items():
            matrix[row, LABELS.index(label)] = share
    return matrix


def test_decision_weights_raise_an_under_predicted_label_until_the_macro_is_best_and_leave_others_at_one():
    # Every invented sentence gets 0.4 invented: argmax calls it faithful; a weight of 1.4 or more flags it.
    rows = ([{"invented": 0.4, "faithful": 0.6}] * 3 + [{"invented": 0.1, "faithful": 0.9}] * 5
            + [{"speculative": 0.8, "reliable": 0.2}] * 3 + [{"speculative": 0.2, "reliable": 0.8}] * 3)
    gold = ["invented"] * 3 + ["faithful"] * 5 + ["speculative"] * 3 + ["reliable"] * 3
    words = [10] * len(gold)
    probabilities = _probabilities(rows)
    before = score_probabilities(PROTOCOL, LABELS, probabilities, gold, words)
    weights = decision_weights(PROTOCOL, LABELS, probabilities, gold, words)
    assert before["factual"]["f1"] == 0.0
    assert 1.4 <= weights[LABELS.index("invented")] < 9  # the invented sentences flagged, no faithful one
    assert weights[LABELS.index("speculative")] == 1.0 and weights[LABELS.index("faithful")] == 1.0  # ties: 1
    after = score_probabilities(PROTOCOL, LABELS, reweigh(probabilities, weights), gold, words)
    assert after["factual"]["f1"] == 1.0 and after["cognitive"]["f1"] == 1.0


def test_a_judge_with_tuned_decision_gives_weighted_probabilities_whose_votes_agree_with_its_confidence():
    examples, gold, groups = toy_corpus()
    words = [len(example.text.split()) for example in examples]
    tuned = fit_judge(PROTOCOL, examples, gold, groups, words, tune_decision=True)
    assert tuned.label_weights is not None and tuned.label_weights.shape == (len(LABELS),)
    plain = fit_judge(PROTOCOL, examples, gold, groups, words)
    assert plain.label_weights is None
    probabilities = tuned.predict_proba(examples)
    assert np.allclose(probabilities.sum(axis=1), 1)
    assert np.allclose(probabilities, reweigh(tuned.raw_proba(examples), tuned.label_weights))
    for row in probabilities:
        votes = votes_for(row, LABELS, PROTOCOL)
        decided = decision(votes, THRESHOLD, PROTOCOL)
        rule = judge_decision(row, LABELS, PROTOCOL)
        assert len(votes) == SAMPLES and rule.confidence == round(float(row[LABELS.index(rule.label)]), 4)
        if row.max() > 0.5:  # a majority label is the job's label, whatever the verdict's threshold
            assert decided.label == LABELS[int(row.argmax())]


def test_a_model_stored_before_the_decision_weights_predicts_its_raw_probabilities():
    examples, gold, _ = toy_corpus(turns=3)
    model = judge_for(PROTOCOL).fit(examples, gold)
    del model.label_weights  # as unpickled from a judge trained before the attribute existed
    assert np.allclose(model.predict_proba(examples), model.raw_proba(examples))


def test_the_classes_are_weighted_by_inverse_frequency_unless_asked_not_to():
    examples, gold, _ = toy_corpus(turns=3)
    weighted = judge_for(PROTOCOL).fit(examples, gold).classifiers
    unweighted = judge_for(PROTOCOL, balanced=False).fit(examples, gold).classifiers

    def weight(classifier):
        return getattr(classifier, "estimator", classifier).class_weight
    assert {weight(c) for c in weighted.values() if hasattr(c, "fit")} == {"balanced"}
    assert {weight(c) for c in unweighted.values() if hasattr(c, "fit")} == {None}
