"""The sequential protocol: which question comes next and which label a path yields."""

import pytest

from annotator.domain import protocol
from annotator.domain.protocol import ProtocolError
from annotator.domain.vocabulary import Label, Step


def walk(*answers):
    path = {}
    for value in answers:
        step = protocol.next_step(path)
        assert step is not None, f"path already complete before {value}"
        path = protocol.answer(path, step, value)
    return path


@pytest.mark.parametrize(
    "answers, label",
    [
        (["irrelevant"], Label.IRRELEVANT),
        (["relevant", "factual", "faithful"], Label.FAITHFUL),
        (["relevant", "factual", "invented"], Label.INVENTED),
        (["relevant", "cognitive", "no"], Label.MISLEADING),
        (["relevant", "cognitive", "yes", "no"], Label.SPECULATIVE),
        (["relevant", "cognitive", "yes", "yes", "no"], Label.RELIABLE),
        (["relevant", "cognitive", "yes", "yes", "yes"], Label.UNEQUIVOCAL),
    ],
)
def test_every_walk_yields_its_label_and_round_trips(answers, label):
    path = walk(*answers)
    assert protocol.next_step(path) is None
    assert protocol.label_of(path) == label
    assert protocol.path_for_label(label) == path


def test_questions_come_in_protocol_order():
    assert protocol.next_step({}) == Step.RELEVANCE
    assert protocol.next_step(walk("relevant")) == Step.KIND
    assert protocol.next_step(walk("relevant", "factual")) == Step.FAITHFULNESS
    assert protocol.next_step(walk("relevant", "cognitive")) == Step.RATIONAL
    assert protocol.next_step(walk("relevant", "cognitive", "yes")) == Step.GROUNDED
    assert protocol.next_step(walk("relevant", "cognitive", "yes", "yes")) == Step.UNEQUIVOCAL


def test_incomplete_path_has_no_label():
    assert protocol.label_of(walk("relevant", "cognitive", "yes")) is None


def test_changing_an_earlier_answer_clears_the_later_ones():
    path = walk("relevant", "cognitive", "yes", "yes")
    changed = protocol.answer(path, Step.KIND, "factual")
    assert changed == {"relevance": "relevant", "kind": "factual"}
    assert protocol.next_step(changed) == Step.FAITHFULNESS


def test_answering_the_same_value_again_still_truncates_only_after_it():
    path = walk("relevant", "cognitive", "yes", "no")
    assert protocol.answer(path, Step.RATIONAL, "yes") == {"relevance": "relevant", "kind": "cognitive", "rational": "yes"}


def test_a_step_that_is_not_asked_yet_is_refused():
    with pytest.raises(ProtocolError, match="not asked"):
        protocol.answer({}, Step.GROUNDED, "yes")
    with pytest.raises(ProtocolError, match="not asked"):
        protocol.answer(walk("relevant", "factual"), Step.RATIONAL, "yes")


def test_wrong_value_and_unknown_step_are_refused():
    with pytest.raises(ProtocolError, match="takes"):
        protocol.answer({}, Step.RELEVANCE, "yes")
    with pytest.raises(ProtocolError, match="unknown"):
        protocol.answer({}, "colour", "blue")


def test_validate_rejects_paths_the_walk_cannot_produce():
    with pytest.raises(ProtocolError):
        protocol.validate({"kind": "factual"})
    with pytest.raises(ProtocolError):
        protocol.validate({"relevance": "irrelevant", "kind": "factual"})
    protocol.validate(walk("relevant", "cognitive", "no"))


def test_undo_removes_the_last_answer():
    assert protocol.undo(walk("relevant", "factual", "invented")) == walk("relevant", "factual")
    assert protocol.undo({}) == {}


def test_divergence_names_the_first_differing_step():
    a = protocol.path_for_label(Label.RELIABLE)
    b = protocol.path_for_label(Label.SPECULATIVE)
    assert protocol.divergence(a, b) == Step.GROUNDED
    assert protocol.divergence(a, a) is None
    assert protocol.divergence(protocol.path_for_label(Label.FAITHFUL), a) == Step.KIND
