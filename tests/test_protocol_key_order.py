"""A path read back from PostgreSQL's jsonb comes with its keys sorted; the protocol must not care."""

import pytest

from annotator.domain.protocol import ProtocolError, answer, label_of, ordered, path_for_label, validate
from annotator.domain.vocabulary import Label


@pytest.mark.parametrize("label", list(Label))
def test_any_key_order_is_the_same_path(label):
    path = path_for_label(label)
    shuffled = dict(sorted(path.items()))  # what jsonb gives back: keys sorted
    validate(shuffled)
    assert label_of(shuffled) == label
    assert list(ordered(shuffled)) == list(path)


def test_answer_on_a_reordered_path():
    path = {"rational": "yes", "kind": "cognitive", "relevance": "relevant"}
    assert answer(path, "grounded", "no") == {"relevance": "relevant", "kind": "cognitive", "rational": "yes",
                                               "grounded": "no"}
    with pytest.raises(ProtocolError):
        validate({"grounded": "yes", "relevance": "relevant"})
