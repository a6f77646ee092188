"""The learned judge's prediction made faster without changing what it predicts (issue 49 item 5): the regular
expressions rewritten to search faster find what the first ones found, so a stored model reads the same feature
values; many sentences are predicted in two processes with the figures of one."""

import re

import numpy as np
import pytest

from annotator.domain.protocol.document import default_protocol
from autolabel.learned import dense
from autolabel.learned.dense import _find, dense_matrix
from autolabel.learned.features import UNSPACED_CLASS, Example
from autolabel.learned.model import judge_for
from tests.test_learned_rules import REFERENCE, toy_corpus

PROTOCOL = default_protocol()
LABELS = tuple(PROTOCOL.labels)
# The expressions as the first feature version read them (``FEATURE_VERSION`` 2): what a stored model learned from.
FIRST = {
    "_NAME": re.compile(r"(?<![.!?]\s)(?<!\x00)\b[A-Z][a-zA-Z\-]+|\x00"),
    "_TOKEN_OR_END": re.compile(f"[{UNSPACED_CLASS}]|[^\\W{UNSPACED_CLASS}]+|[.!?。！？\n\x00]"),
}
TEXTS = [
    "In 1856 the engineer Kowalski measured it at 2,900 kilometres, not 2850. Vienna and Budapest stand on it!",
    "It is long. Kowalski measured 2,850 kilometres with Petrov-Vodkin? Yes. Anna said so.\nBerlin too",
    "他用iPhone拍照。多瑙河是欧洲第二长的河流！它流经十个国家？Tokyo東京タワー",
    "東京は日本の首都です。ソウルと서울특별시 are names; Ünter den Linden, Éva and Straße ÉTÉ été",
    "", " ", "...!!!???", "—–-,;:()[]{}«»“”", "。！？、", "x", "A", "a.B", "3.14.15,92 1,000,000 v2x3 ١٢٣ ４５",
    "Mr. Smith met O'Brien-Jones at 5 p.m.! Dr. Who? McDonald's; iPhone 15 Pro", "\tTabs\tand\r\nCRLF Lines\x0bV",
    "Ａｂｃ full-width Ｗｏｒｌｄ and émigré Zoë, naïve Øresund", "🙂 emoji Faces 👍 Thumbs", "x\x00Hidden Separator",
]


@pytest.mark.parametrize("name", sorted(FIRST))
def test_the_faster_expressions_find_what_the_first_ones_found(name):
    for lower in (False, True):
        texts = [text.lower() for text in TEXTS] if lower else TEXTS
        first, now = _find(FIRST[name], texts), _find(getattr(dense, name), texts)
        assert first[0] == now[0]
        assert np.array_equal(first[2], now[2]) and np.array_equal(first[3], now[3])
        for text in texts:  # alone, as a one-sentence batch
            assert FIRST[name].findall(text) == getattr(dense, name).findall(text)


def test_the_dense_features_are_those_the_first_expressions_gave(monkeypatch):
    references = [REFERENCE, "多瑙河是欧洲第二长的河流。它流经十个国家。", "", "Kowalski and Petrov met in 1,856."]
    examples = [Example(text, references[i % len(references)], TEXTS[-i - 1], i % 3, 3) for i, text in enumerate(TEXTS)]
    now = dense_matrix(examples, LABELS)
    for name, pattern in FIRST.items():
        monkeypatch.setattr(dense, name, pattern)
    assert np.array_equal(dense_matrix(examples, LABELS), now)


def test_many_sentences_are_predicted_in_two_processes_with_the_figures_of_one():
    examples, gold, _ = toy_corpus()
    model = judge_for(PROTOCOL).fit(examples, gold)
    unseen = [Example(text, REFERENCE, "How long is it?", i % 4, 4) for i, text in enumerate(TEXTS * 2)]
    one = model.predict_proba(unseen)
    chunked = model.predict_proba(unseen, chunk=7, parallel_above=len(unseen) + 1)  # chunks, one process
    two = model.predict_proba(unseen, chunk=7, parallel_above=10)  # the same chunks in two processes
    assert one.shape == (len(unseen), len(LABELS))
    assert np.array_equal(chunked, one) and np.array_equal(two, one)
