"""Sentence splitting: offline Punkt, measured against CogniBench's own segmentation."""

import json
import re

import pytest

from annotator.domain.segmentation import split_sentences
from tests.conftest import SHARED_DATA

COGNIBENCH_DIALOGUES = SHARED_DATA / "cognibench-sample" / "dialogues.json"


def _no_space(text):
    return re.sub(r"\s+", "", text)


def cognibench_reference_sentences(record):
    """CogniBench's sentences: ``current_turn_processed`` cut at its ``<>`` / ``<irrelevant>`` markers."""
    parts = re.split(r"<>|<irrelevant>", record["current_turn_processed"])
    return [part.strip() for part in parts if part.strip()]


def assistant_response(record):
    turn = record["current_turn"]
    return turn[turn.index("<assistant>") + len("<assistant>"):].strip()


def test_reproduces_at_least_97_5_percent_of_cognibench_sentences():
    records = json.loads(COGNIBENCH_DIALOGUES.read_text())
    total = reproduced = 0
    for record in records:
        response = assistant_response(record)
        # CogniBench's processed text drops line breaks (and some spaces), so a
        # sentence is reproduced when our span has the same characters, spaces aside.
        ours = {_no_space(span.text) for span in split_sentences(response)}
        for sentence in cognibench_reference_sentences(record):
            total += 1
            reproduced += _no_space(sentence) in ours
    assert total > 400
    assert reproduced / total >= 0.975, f"{reproduced}/{total} = {reproduced / total:.4f}"


def test_spans_are_offsets_into_the_text():
    text = "Dr. Smith visited the U.S. in May.  The trip was long!\n\nHe left in 1988. It rained. Did it?"
    spans = split_sentences(text)
    assert [s.text for s in spans] == [
        "Dr. Smith visited the U.S. in May.",
        "The trip was long!",
        "He left in 1988. It rained.",
        "Did it?",
    ]
    for span in spans:
        assert text[span.start:span.end] == span.text


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", []),
        ("   ", []),
        ("No final period", ["No final period"]),
        ("An initial: Maurice T. Moore taught law. Then he left.", ["An initial: Maurice T. Moore taught law.", "Then he left."]),
        ("Items:\n\n1. Apples are red. 2. Pears are green.", ["Items:\n\n1. Apples are red.", "2. Pears are green."]),
        ("It ended in 1984.\n\nThe next era began.", ["It ended in 1984.", "The next era began."]),
    ],
)
def test_edge_cases(text, expected):
    assert [s.text for s in split_sentences(text)] == expected


def test_works_without_nltk_data(monkeypatch):
    import nltk

    def refuse(*args, **kwargs):
        raise AssertionError("nltk tried to load downloaded data")

    monkeypatch.setattr(nltk.data, "load", refuse)
    monkeypatch.setattr(nltk.data, "find", refuse)
    split_sentences.__globals__["_tokenizer"].cache_clear()
    assert [s.text for s in split_sentences("One. Two.")] == ["One.", "Two."]
