"""The learned judge's alignment option: each sentence against the reference sentence that matches it best."""

import numpy as np

from autolabel.learned.dense import dense_matrix
from autolabel.learned.features import ALIGNED, STEMMED, Example, dense_names
from autolabel.learned.model import judge_for
from tests.test_learned_rules import LABELS, PROTOCOL, REFERENCE, toy_corpus

NAMES = dense_names(LABELS)


def aligned(examples):
    matrix = dense_matrix(examples, LABELS)
    return [{name: matrix[row, NAMES.index(name)] for name in ALIGNED + ("numbers_absent",)}
            for row in range(len(examples))]


def test_a_number_of_another_reference_sentence_is_absent_from_the_aligned_one_though_the_reference_holds_it():
    # 2850 is in the reference, but in the sentence about the river's length, not in the one about the cities.
    moved, copied = aligned([Example("Vienna and Budapest stand on its 2850 banks.", REFERENCE),
                             Example("It flows for 2850 kilometres through ten countries.", REFERENCE)])
    assert moved["numbers_absent"] == 0 and moved["aligned_numbers_absent_share"] == 1
    assert copied["aligned_numbers_absent_share"] == 0


def test_a_copied_sentence_aligns_closely_and_clearly_a_mixed_one_does_not():
    copied, mixed = aligned([Example("It flows for 2850 kilometres through ten countries.", REFERENCE),
                             Example("Budapest flows through Germany for kilometres.", REFERENCE)])
    assert copied["aligned_jaccard"] == 1 and copied["aligned_content_absent"] == 0
    # "flows", "kilometres" in one reference sentence, "germany" and "budapest" in two others: a weak lead.
    assert mixed["aligned_jaccard"] < 1 and mixed["aligned_gap"] < copied["aligned_gap"]
    assert mixed["aligned_content_absent"] > 0


def test_a_sentence_aligns_only_within_its_own_reference_whatever_the_batch():
    # The first reference ends without a full stop: its last sentence must not run into the next reference.
    first = Example("Vienna stands on the Danube.", "Vienna stands on the Danube")
    alone = aligned([first])[0]
    batch = aligned([first, Example("Vienna stands on the Danube.", "Rome stands on the Tiber. Paris on the Seine"),
                     Example("Cats sleep.", "")])
    assert batch[0] == alone and alone["aligned_jaccard"] == 1
    assert batch[1]["aligned_jaccard"] < 1 and batch[2]["aligned_jaccard"] == 0


def test_the_alignment_is_off_unless_asked_comes_last_and_a_judge_reads_it_when_asked():
    assert NAMES[-len(ALIGNED):] == list(ALIGNED) and NAMES[-len(ALIGNED) - len(STEMMED):-len(ALIGNED)] == list(STEMMED)
    unread = dense_matrix([Example("It flows for 2850 kilometres.", REFERENCE)], LABELS, aligned=False)
    assert not unread[0, -len(ALIGNED):].any()  # a model that does not read them does not pay for them
    assert not {NAMES[i] for i in judge_for(PROTOCOL).features.dense_columns} & set(ALIGNED)
    examples, gold, _ = toy_corpus()
    model = judge_for(PROTOCOL, use_alignment=True).fit(examples, gold)
    assert {NAMES[i] for i in model.features.dense_columns} >= set(ALIGNED)
    probabilities = model.predict_proba([Example("The engineer Ivanov measured 4000 kilometres in 1750.", REFERENCE,
                                                 position=2, sentences=4)])
    assert np.allclose(probabilities.sum(axis=1), 1) and LABELS[probabilities.argmax()] == "invented"
