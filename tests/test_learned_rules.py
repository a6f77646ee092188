"""The learned judge's pure parts: its features, its model, votes from probabilities, cross-validation by turn."""

import numpy as np
import pytest

from annotator.domain.protocol.document import default_protocol
from autolabel.learned.dense import dense_features
from autolabel.learned.features import Example, dense_names, tokens
from autolabel.learned.model import JudgeModel, judge_for
from autolabel.learned.decision import SAMPLES, votes_for
from autolabel.learned.validation import CANDIDATES, _folds, _out_of_fold, _shared_out_of_fold, cross_validate

PROTOCOL = default_protocol()
LABELS = tuple(PROTOCOL.labels)
REFERENCE = ("The Danube rises in the Black Forest of Germany. It flows for 2850 kilometres through ten countries. "
             "Vienna and Budapest stand on its banks.")


def features(text, reference=REFERENCE, **kwargs):
    return dict(zip(dense_names(LABELS), dense_features(Example(text, reference, **kwargs), LABELS)))


def test_tokens_are_words_in_spaced_scripts_and_characters_where_there_are_no_spaces():
    assert tokens("The Danube, 2850 km!") == ["the", "danube", "2850", "km"]
    assert tokens("他用iPhone拍照") == ["他", "用", "iphone", "拍", "照"]


def test_a_sentence_copied_from_the_reference_overlaps_it_and_invents_nothing():
    copied = features("It flows for 2850 kilometres through ten countries.")
    assert copied["word_overlap"] == 1.0 and copied["best_sentence_overlap"] == 1.0
    assert copied["numbers"] == 1 and copied["numbers_absent"] == 0 and copied["names_absent"] == 0


def test_numbers_names_and_dates_absent_from_the_reference_are_counted():
    invented = features("In 1856 the engineer Kowalski measured it at 2900 kilometres, not 2850.")
    assert invented["numbers"] == 3 and invented["numbers_absent"] == 2
    assert invented["names_absent"] == 1  # Kowalski; "In" opens the sentence and is no name
    assert invented["dates_absent"] == 1
    assert invented["negation"] == 1 and invented["negation_mismatch"] == 1  # the reference negates nothing
    assert invented["word_overlap"] < 0.7


def test_position_and_the_votes_of_a_pre_label_job_are_read():
    votes = [{"label": "invented", "hallucinated": True, "kind": "factual"}] * 3 + [
        {"label": "faithful", "hallucinated": False, "kind": "factual"}, {"label": None, "hallucinated": None}]
    row = features("Vienna stands on its banks.", position=2, sentences=3, votes=votes)
    assert row["last"] == 1 and row["first"] == 0 and row["relative_position"] == 1.0
    assert row["has_votes"] == 1 and row["votes_hallucinated"] == 0.75  # the abstaining sample has no say
    assert row["votes_invented"] == 0.75 and row["votes_faithful"] == 0.25
    assert features("Vienna stands on its banks.")["has_votes"] == 0


def test_votes_share_the_samples_by_probability_and_carry_the_protocols_verdict_and_family():
    probabilities = np.zeros(len(LABELS))
    probabilities[LABELS.index("speculative")] = 0.62
    probabilities[LABELS.index("faithful")] = 0.33
    probabilities[LABELS.index("irrelevant")] = 0.05
    votes = votes_for(probabilities, LABELS, PROTOCOL)
    assert len(votes) == SAMPLES
    counts = {label: sum(v["label"] == label for v in votes) for label in LABELS}
    assert (counts["speculative"], counts["faithful"], counts["irrelevant"]) == (12, 7, 1)  # largest remainder
    speculative = next(v for v in votes if v["label"] == "speculative")
    assert speculative == {"label": "speculative", "hallucinated": True, "kind": "cognitive"}


def toy_corpus(turns=8):
    """Sentences whose label shows in what they share with the reference: copied (faithful), a changed number
    and a name the reference lacks (invented), a greeting (irrelevant), a hedged judgement (speculative)."""
    examples, gold, groups = [], [], []
    for turn in range(turns):
        rows = [
            ("Sure, happy to help!", "irrelevant"),
            ("It flows for 2850 kilometres through ten countries.", "faithful"),
            (f"The engineer Petrov{turn} measured {3100 + turn} kilometres in {1800 + turn}.", "invented"),
            ("Therefore it is probably the most important river, which may matter for trade.", "speculative"),
        ]
        for position, (text, label) in enumerate(rows):
            examples.append(Example(text, REFERENCE, "Tell me about the Danube.", position, len(rows)))
            gold.append(label)
            groups.append(turn)
    return examples, gold, groups


@pytest.mark.parametrize("strategy", ["steps", "flat"])
def test_the_judge_learns_a_separable_corpus_and_gives_a_distribution_over_the_protocols_labels(strategy):
    examples, gold, _ = toy_corpus()
    model = judge_for(PROTOCOL, strategy=strategy).fit(examples, gold)
    unseen = [Example("The engineer Ivanov measured 4000 kilometres in 1750.", REFERENCE, position=2, sentences=4),
              Example("Sure, happy to help!", REFERENCE, position=0, sentences=4)]
    probabilities = model.predict_proba(unseen)
    assert probabilities.shape == (2, len(LABELS)) and np.allclose(probabilities.sum(axis=1), 1)
    assert [LABELS[i] for i in probabilities.argmax(axis=1)] == ["invented", "irrelevant"]
    assert probabilities[:, LABELS.index("misleading")].max() < 0.5  # a label never seen in gold


def test_an_unknown_strategy_and_no_gold_are_refused():
    with pytest.raises(ValueError, match="strategy"):
        JudgeModel(LABELS, [], strategy="forest")
    with pytest.raises(ValueError, match="no gold"):
        judge_for(PROTOCOL).fit([], [])


def test_folds_never_split_a_turn_between_training_and_test():
    groups = [turn for turn in range(7) for _ in range(turn % 3 + 1)]
    splits, folds = _folds(groups, 5)
    assert splits == 5
    for train, test in folds:
        assert not {groups[i] for i in train} & {groups[i] for i in test}
    assert sorted(i for _, test in folds for i in test) == list(range(len(groups)))
    with pytest.raises(ValueError, match="two turns"):
        _folds([4, 4, 4], 5)


def test_cross_validation_scores_out_of_fold_predictions_by_the_evaluations_views_and_draws_a_learning_curve():
    examples, gold, groups = toy_corpus()
    words = [len(e.text.split()) for e in examples]
    measured = cross_validate(PROTOCOL, examples, gold, groups, words, folds=4, curve_shares=(0.25, 0.5, 1.0))
    cross = measured["cross_validated"]
    assert (cross["folds"], cross["sentences"], cross["turns"]) == (4, 32, 8)
    assert set(cross["views"]) == {"any_hallucination", "factual", "cognitive"}
    assert cross["macro_f1"] == round((cross["views"]["factual"] + cross["views"]["cognitive"]) / 2, 4)
    assert cross["macro_f1"] > 0.9  # the toy corpus is separable by its features
    curve = measured["learning_curve"]
    assert [point["share"] for point in curve] == [0.25, 0.5, 1.0]
    assert [point["sentences"] for point in curve] == [8, 12, 24]  # of the 24 training sentences of each fold


def test_a_chinese_sentence_is_read_by_its_characters():
    reference = "多瑙河是欧洲第二长的河流。它流经十个国家。"
    copied = features("它流经十个国家。", reference=reference)
    changed = features("它流经二十个城市。", reference=reference)
    assert copied["word_overlap"] == 1.0 and copied["triple_overlap"] == 1.0
    assert changed["word_overlap"] < 0.8 and changed["words_not_in_reference"] > 0


def test_the_learning_curve_chart_draws_a_dot_per_measured_point():
    from autolabel.learned.chart import learning_curve_chart

    svg = learning_curve_chart("Learning curve <b>", [{"sentences": 40, "macro_f1": 0.31},
                                                       {"sentences": 120, "macro_f1": 0.42},
                                                       {"sentences": 200, "macro_f1": None}])
    assert svg.count("<circle") == 2 and "<polyline" in svg
    assert "120 gold sentences: macro F1 0.420" in svg and "&lt;b&gt;" in svg and "<b>" not in svg


def test_choosing_takes_the_candidate_the_inner_cross_validation_favours_and_says_what_each_read(monkeypatch):
    from autolabel.learned import validation

    examples, gold, groups = toy_corpus()
    words = [len(e.text.split()) for e in examples]
    # Listed first, a shape that can learn nothing (its weights round to nothing in a float): the tie rule alone
    # would take it.
    monkeypatch.setattr(validation, "CANDIDATES", ({"strategy": "flat", "regularization": 1e-30},
                                                   {"strategy": "steps", "regularization": 1.0}))
    chosen, tried = validation.choose_options(PROTOCOL, examples, gold, groups, words, strategy="choose",
                                              use_cues=True)
    assert chosen == {"use_cues": True, "strategy": "steps", "regularization": 1.0}  # the other options kept
    assert [(t["strategy"], t["regularization"]) for t in tried] == [("flat", 1e-30), ("steps", 1.0)]
    assert tried[1]["macro_f1"] > 0.9 > tried[0]["macro_f1"]
    model = validation.fit_judge(PROTOCOL, examples, gold, groups, words, strategy="choose")
    assert (model.strategy, model.chosen, model.candidates) == ("steps", {"strategy": "steps", "regularization": 1.0},
                                                                tried)
    # Gold in one turn cannot be cross-validated: the first candidate, unmeasured.
    assert validation.choose_options(PROTOCOL, examples[:4], gold[:4], [0] * 4, words[:4], strategy="choose") == (
        {"strategy": "flat", "regularization": 1e-30}, [])


def test_the_choosing_with_shared_features_predicts_as_each_candidate_fitted_alone():
    examples, gold, groups = toy_corpus()
    # Noise that the candidates disagree on: some turns' invented sentences are called faithful.
    gold = ["faithful" if label == "invented" and group % 3 == 0 else label for label, group in zip(gold, groups)]
    _, folds = _folds(groups, 4)
    trials = [dict(candidate) for candidate in CANDIDATES]
    shared = _shared_out_of_fold(PROTOCOL, examples, gold, folds, trials)
    words = [1] * len(examples)
    for trial, probabilities in zip(trials, shared):
        alone = _out_of_fold(PROTOCOL, examples, gold, groups, words, folds, **trial)
        # liblinear's dual solver stops within its tolerance: the same fit agrees to about 1e-6, not to the bit.
        assert np.allclose(probabilities, alone, atol=1e-4)
    assert not np.allclose(shared[0], shared[1], atol=1e-2)  # the shapes differ: the comparison above is not vacuous
