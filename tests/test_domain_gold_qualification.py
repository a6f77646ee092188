"""The pure rules of gold by agreement and qualification scoring, on plain values (no database)."""

from annotator.domain import gold, protocol
from annotator.domain.qualification import Answered, GoldSentence, score_attempt
from annotator.domain.protocol.document import default_protocol
from annotator.domain.vocabulary import Label

COGNIBENCH = default_protocol()

F, S, I = Label.FAITHFUL.value, Label.SPECULATIVE.value, Label.INVENTED.value


def test_a_turn_is_compared_once_all_its_annotators_and_at_least_two_have_submitted():
    assert not gold.turn_is_complete(1, overlap=2)
    assert gold.turn_is_complete(2, overlap=2)
    assert not gold.turn_is_complete(2, overlap=3)
    assert not gold.turn_is_complete(1, overlap=1)  # one annotator never makes gold by agreement
    assert gold.turn_is_complete(2, overlap=1)


def test_agreement_gives_gold_with_the_labels_path_and_a_disagreement_a_dispute():
    answers = {
        1: [gold.GivenAnswer(F, 2, "x"), gold.GivenAnswer(F, 2, "x")],
        2: [gold.GivenAnswer(S, 3), gold.GivenAnswer(I, 3)],
        3: [gold.GivenAnswer(I, 4, "a"), gold.GivenAnswer(I, 5, "a")],
        4: [gold.GivenAnswer(F)],  # one of the two answered: not agreement
    }
    decision = gold.decide_turn(COGNIBENCH, [1, 2, 3, 4], answers, annotators=2)
    assert [a.sentence_id for a in decision.agreed] == [1, 3]
    assert decision.disputed == [2, 4]
    first, third = decision.agreed
    assert (first.label, first.path, first.severity, first.error_type) == (F, protocol.path_for_label(F), 2, "x")
    assert (third.severity, third.error_type) == (None, "a")  # severities differ: none carried over
    assert first.reason == "2 annotators agreed"


def test_sentences_with_gold_or_an_open_dispute_are_left_alone():
    answers = {1: [gold.GivenAnswer(F), gold.GivenAnswer(F)], 2: [gold.GivenAnswer(F), gold.GivenAnswer(S)]}
    decision = gold.decide_turn(COGNIBENCH, [1, 2], answers, annotators=2, settled={1, 2})
    assert decision.agreed == [] and decision.disputed == []


def _sentence(id, label, path=None):
    return GoldSentence(id=id, turn_id=10, turn_name="d1 turn 0", index=id, text=f"s{id}", gold_label=label,
                        gold_path=path or {}, gold_reason="because")


def test_an_attempt_is_scored_by_sentence_accuracy_against_the_pass_mark():
    sentences = [_sentence(1, F), _sentence(2, S), _sentence(3, I), _sentence(4, F)]
    answers = {1: Answered(F, protocol.path_for_label(F)), 2: Answered(S, protocol.path_for_label(S)),
               3: Answered(F, protocol.path_for_label(F))}  # 4 not answered
    score = score_attempt(COGNIBENCH, sentences, answers, pass_mark=0.5)
    assert (score.correct, score.total, score.passed) == (2, 4, True)
    assert not score_attempt(COGNIBENCH, sentences, answers, pass_mark=0.75).passed
    wrong = score.details[2]
    assert (wrong["label"], wrong["gold_label"], wrong["correct"]) == (F, I, False)
    assert wrong["diverged_at"] == "faithfulness"  # both factual; they parted at faithful / invented
    assert score.details[3]["label"] == "" and score.details[3]["path"] == {}
    assert score.details[0]["diverged_at"] == "" and score.details[0]["gold_reason"] == "because"


def test_an_empty_set_passes_and_a_stored_gold_path_is_used_as_given():
    assert score_attempt(COGNIBENCH, [], {}, pass_mark=1.0).passed
    path = protocol.path_for_label(S)
    assert score_attempt(COGNIBENCH, [_sentence(1, S, path)], {}, 1.0).details[0]["gold_path"] == path
