"""The learned judge reads a batch of sentences at once: the batch gives what each sentence alone gives, the hashed
n-grams keep their meaning from one batch (or process) to the next, and a stored model predicts as it did."""

import io

import joblib
import numpy as np

from annotator.domain.protocol.document import default_protocol
from autolabel.learned.dense import dense_features, dense_matrix
from autolabel.learned.features import Example, dense_names, tokens
from autolabel.learned.hashed import HashedTfidf
from autolabel.learned.model import judge_for
from autolabel.learned.text_arrays import TextBatch
from tests.test_learned_rules import REFERENCE, toy_corpus

PROTOCOL = default_protocol()
LABELS = tuple(PROTOCOL.labels)
TEXTS = ["The Danube, 2850 km!", "他用iPhone拍照。", "", "Straße und Fluss: ÉTÉ été", "x", "  two  spaces  "]


def batch_tokens(batch, index):
    chosen = batch.token_text == index
    return [batch.joined[start:end].lower() for start, end in zip(batch.token_start[chosen], batch.token_end[chosen])]


def test_a_batch_finds_the_tokens_of_each_of_its_texts():
    batch = TextBatch(TEXTS)
    assert [batch_tokens(batch, i) for i in range(len(TEXTS))] == [tokens(text) for text in TEXTS]


def test_a_texts_ngrams_are_the_same_alone_or_anywhere_in_a_batch():
    alone = TextBatch(["Vienna stands on its banks"])
    among = TextBatch(["Sure!", "Vienna stands on its banks", "他用iPhone拍照"])
    for kind in ("characters", "words"):
        vectorizer = HashedTfidf(kind, min_df=1)
        vectorizer.fit_transform(TextBatch(["Vienna stands on its banks", "Budapest stands there too"]))
        assert np.allclose(vectorizer.transform(alone).toarray()[0], vectorizer.transform(among).toarray()[1])


def test_character_ngrams_stay_within_words_padded_by_a_space():
    hashes, _ = TextBatch(["ab cd"]).character_ngrams()
    words = TextBatch(["ab", "cd"]).character_ngrams()[0]
    assert len(hashes) == 12  # " a" "ab" "b " " ab" "ab " " ab " and the same of "cd": no "b c"
    assert set(hashes) == set(words)


def test_a_batch_gives_each_sentence_the_features_it_has_alone():
    other = "多瑙河是欧洲第二长的河流。它流经十个国家。"
    examples = [
        Example("It flows for 2850 kilometres through ten countries.", REFERENCE, "How long is it?", 1, 3),
        Example("它流经二十个城市。", other, "", 0, 2),
        Example("In 1856 the engineer Kowalski measured it at 2,900 kilometres, not 2850.", REFERENCE, "", 2, 3),
        Example("Vienna and Budapest stand on its banks.", other, "Which cities?", 1, 2),  # words of the other one
        Example("", REFERENCE),
    ]
    together = dense_matrix(examples, LABELS)
    assert together.shape == (len(examples), len(dense_names(LABELS)))
    for row, example in zip(together, examples):
        assert np.allclose(row, dense_features(example, LABELS))
    reads = dict(zip(dense_names(LABELS), together[3]))
    assert reads["word_overlap"] == 0 and reads["names_absent"] == 1  # Budapest: its reference is the Chinese one


def test_a_capital_after_a_full_stop_is_no_name_and_numbers_are_read_without_their_commas():
    row = dict(zip(dense_names(LABELS), dense_features(
        Example("It is long. Kowalski measured 2,850 kilometres with Petrov.", REFERENCE), LABELS)))
    assert row["names"] == 1 and row["names_absent"] == 1  # Petrov; Kowalski opens a sentence
    assert row["numbers"] == 1 and row["numbers_absent"] == 0  # 2,850 is the reference's 2850


def test_a_separator_character_inside_a_text_reads_as_a_space():
    row = dict(zip(dense_names(LABELS), dense_features(Example("Vienna\x00and Budapest stand on its banks.", REFERENCE), LABELS)))
    assert row["word_overlap"] == 1.0


def test_a_stored_model_predicts_what_it_predicted():
    examples, gold, _ = toy_corpus()
    model = judge_for(PROTOCOL).fit(examples, gold)
    unseen = [Example("The engineer Ivanov measured 4000 kilometres in 1750.", REFERENCE, position=2, sentences=4),
              Example("Sure, happy to help!", REFERENCE, position=0, sentences=4)]
    before = model.predict_proba(unseen)
    buffer = io.BytesIO()
    joblib.dump(model, buffer)
    buffer.seek(0)
    assert np.allclose(joblib.load(buffer).predict_proba(unseen), before)
