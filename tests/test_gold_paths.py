"""The rule of a gold's path (annotator/domain/gold_paths.py), on plain values: what a gold path may hold, and what
an older version's walk keeps under a new one."""

import pytest

from annotator.domain.gold_paths import carried_walk, gold_path_problem
from annotator.domain.protocol.document import load_protocol, load_shipped

HALLUDETECT = load_shipped("halludetect")
WALK = {"supported": "no", "error_types": ["fabricated"], "severity": 4, "justification": "No such case."}


def two_walks() -> object:
    """A protocol where "bad" is reached by two walks (q: x or y), both through a scale and a text."""
    return load_protocol({
        "id": "two", "version": 1, "name": "Two", "modes": ["sequential"], "start": "q",
        "steps": [
            {"id": "q", "question": "Which?", "answers": [{"value": "x", "label": "X", "next": "points"},
                                                            {"value": "y", "label": "Y", "next": "points"},
                                                            {"value": "ok", "label": "Fine", "yields": "good"}]},
            {"id": "points", "kind": "scale", "question": "How bad?", "min": 1, "max": 3, "next": "why"},
            {"id": "why", "kind": "text", "question": "Why?", "yields": "bad"}],
        "labels": [{"id": "good", "name": "Good"}, {"id": "bad", "name": "Bad"}]})


@pytest.mark.parametrize("path", [WALK, {k: v for k, v in WALK.items() if k != "justification"},
                                  {"supported": "no"}, {}, {"error_types": ["fabricated"], "justification": "x"}])
def test_a_walk_and_any_part_of_it_are_gold_paths_of_its_label(path):
    assert gold_path_problem(HALLUDETECT, "unsupported", path) is None


@pytest.mark.parametrize("path, problem", [
    ({**WALK, "supported": "yes"}, "the path yields 'supported', not the label 'unsupported'"),
    ({"supported": "no", "severity": 6}, "step 'severity' takes"),
    ({"severity": "4"}, "step 'severity' takes"),
    ({"supported": "no", "extra": 1}, "unknown protocol step 'extra'"),
    ([], "must be an object of step: answer"),
])
def test_anything_else_is_refused_saying_why(path, problem):
    assert problem in gold_path_problem(HALLUDETECT, "unsupported", path)


def test_a_label_reached_by_two_walks_takes_either_walk_but_not_a_mix_of_a_label_elsewhere():
    protocol = two_walks()
    assert gold_path_problem(protocol, "bad", {"q": "y", "points": 2}) is None
    assert gold_path_problem(protocol, "good", {"points": 2}) == "no walk that yields 'good' answers step 'points' with 2"


def test_a_walk_the_new_version_reads_as_the_label_carries_whole():
    assert carried_walk(HALLUDETECT, "unsupported", WALK) == WALK


def test_an_answer_the_new_version_does_not_take_is_dropped_and_the_one_walk_completes_the_rest():
    """A scale point where the new version asks a choice: the point goes; one walk to the label is left, so its
    choice answers complete the path."""
    protocol = two_walks()
    assert carried_walk(protocol, "bad", {"q": "x", "points": 7, "why": "Made up."}) == {"q": "x", "why": "Made up."}
    assert carried_walk(protocol, "bad", {"q": "gone", "points": 2}) == {"points": 2}  # x and y tie: neither chosen
    assert carried_walk(protocol, "good", {"q": "x", "points": 2}) == {"q": "ok"}  # the label's one walk
