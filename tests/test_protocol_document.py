"""The built-in CogniBench document walks exactly as the Python protocol did (tests/cognibench_reference.py),
and a loaded protocol is immutable, round-trips its document and exposes the groups the studio reads."""

import itertools
import json

import pytest

from annotator.domain import protocol as module
from annotator.domain.protocol.document import (
    COGNIBENCH, Protocol, ProtocolDocumentError, ProtocolError, load_protocol, load_shipped, shipped_names,
)

from . import cognibench_reference as before


def prefixes():
    """Every valid path and every prefix of one, once each (the empty path included)."""
    seen, found = set(), []
    for path in before.paths():
        items = list(path.items())
        for n in range(len(items) + 1):
            prefix = dict(items[:n])
            key = tuple(prefix.items())
            if key not in seen:
                seen.add(key)
                found.append(prefix)
    return found


INVALID = [
    {"kind": "factual"}, {"relevance": "irrelevant", "kind": "factual"}, {"relevance": "bogus"},
    {"relevance": "relevant", "kind": "factual", "faithfulness": "yes"},
    {"relevance": "relevant", "kind": "cognitive", "rational": "no", "grounded": "yes"},
    {"relevance": "relevant", "colour": "blue"}, {"relevance": "relevant", "kind": "cognitive", "grounded": "yes"},
]


def outcome(call):
    try:
        return ("ok", call())
    except ValueError as error:  # ProtocolError, or the old Label()/Step() ValueError
        return ("error", str(error))


def test_the_walk_equals_the_python_protocol_on_every_path_and_prefix():
    for path in prefixes():
        assert COGNIBENCH.next_step(path) == before.next_step(path), path
        assert COGNIBENCH.label_of(path) == before.label_of(path), path
        assert COGNIBENCH.steps_of(path) == before.steps_of(path), path
        assert COGNIBENCH.undo(path) == before.undo(path), path
        assert list(COGNIBENCH.ordered(dict(reversed(path.items()))).items()) == list(
            before.ordered(dict(reversed(path.items()))).items())
        assert outcome(lambda: COGNIBENCH.validate(path)) == outcome(lambda: before.validate(path))
        assert COGNIBENCH.evidence_required(path) == before.evidence_required(path), path
        for step, value in itertools.product([*before.Step, "colour"], [*before.Answer, "blue"]):
            assert outcome(lambda: COGNIBENCH.answer(path, step, value)) == outcome(
                lambda: before.answer(path, step, value)), (path, step, value)


def test_validate_refuses_the_same_invalid_paths_with_the_same_messages():
    for path in INVALID:
        assert outcome(lambda: COGNIBENCH.validate(path)) == outcome(lambda: before.validate(path))
        assert outcome(lambda: COGNIBENCH.validate(path))[0] == "error"


def test_divergence_paths_and_path_for_label_equal_the_python_protocol():
    every = prefixes()
    for first, second in itertools.product(every, every):
        assert COGNIBENCH.divergence(first, second) == before.divergence(first, second)
    assert COGNIBENCH.paths() == before.paths()
    for label in before.Label:
        assert COGNIBENCH.path_for_label(label) == before.path_for_label(label)
    with pytest.raises(ProtocolError):
        COGNIBENCH.path_for_label("nonsense")


def test_describe_holds_everything_the_python_protocol_described():
    def evidence(path):
        return {"evidence": before.evidence_required(path)}

    for extras, old_extras in [(None, None), (lambda p: {"evidence": COGNIBENCH.evidence_required(p)}, evidence)]:
        new, old = COGNIBENCH.describe(extras), before.describe(old_extras)
        assert new["tree"] == old["tree"]
        assert list(new["steps"]) == list(old["steps"])
        for step, described in old["steps"].items():
            assert {k: new["steps"][step][k] for k in described} == described
        assert [{k: label[k] for k in old["labels"][0]} for label in new["labels"]] == old["labels"]
    assert json.dumps(COGNIBENCH.describe())  # the page embeds it as JSON


def test_the_module_functions_still_answer_with_the_vocabulary_enums():
    assert module.next_step({}).value == "relevance"
    assert module.label_of({"relevance": "irrelevant"}).label == "Irrelevant"
    assert module.divergence({"relevance": "relevant"}, {"relevance": "irrelevant"}).value == "relevance"
    assert [s.value for s in module.steps_of({"relevance": "relevant", "kind": "factual"})] == ["relevance", "kind"]


def test_cognibench_groups_are_todays_sets():
    assert COGNIBENCH.hallucination_labels == {"invented", "misleading", "speculative"}
    assert {f.id: set(f.labels) for f in COGNIBENCH.families} == {
        "factual": {"faithful", "invented"}, "cognitive": {"misleading", "speculative", "reliable", "unequivocal"}}
    views = {v.id: v for v in COGNIBENCH.evaluation_views}
    # Every view over every label: CogniBench's Table 3 counts a detection whatever the sentence's gold kind
    # (issue 39, item 1; docs/autolabel.md, Definitions).
    assert views["factual"].positive == {"invented"} and set(views["factual"].scope) == set(COGNIBENCH.labels)
    assert views["cognitive"].positive == {"misleading", "speculative"}
    assert set(views["cognitive"].scope) == set(COGNIBENCH.labels)
    assert views["any_hallucination"].positive == COGNIBENCH.hallucination_labels
    assert COGNIBENCH.macro.id == "cognibench_overall" and COGNIBENCH.macro.views == ("factual", "cognitive")
    assert COGNIBENCH.agreement_steps == tuple(before.Step.values)
    assert COGNIBENCH.stage_two_steps == ("rational", "grounded", "unequivocal")
    assert COGNIBENCH.stage_two_labels == {"misleading", "speculative", "reliable", "unequivocal"}
    assert COGNIBENCH.severity_labels == {"invented", "misleading", "speculative"}
    assert COGNIBENCH.error_type_labels == {"invented", "misleading"}
    assert COGNIBENCH.evidence_labels == {"faithful", "reliable", "unequivocal"}
    assert COGNIBENCH.step_domains() == {s.value: tuple(a.value for a in before.STEP_ANSWERS[s]) for s in before.Step}
    assert COGNIBENCH.step("relevance").answers[0].yn == "y"  # y, like 1, is "Relevant" (issue 26, item 8)
    assert COGNIBENCH.label("invented").colour == "#c62828"


def test_the_document_round_trips_and_the_protocol_is_immutable():
    assert load_protocol(COGNIBENCH.document) == COGNIBENCH
    assert load_protocol(COGNIBENCH.document).document == COGNIBENCH.document
    copy = COGNIBENCH.document
    copy["steps"][0]["question"] = "changed"
    assert COGNIBENCH.step("relevance").question == "Is the sentence relevant?"
    with pytest.raises(AttributeError):
        COGNIBENCH.start = "kind"
    described = COGNIBENCH.describe()
    described["tree"]["step"] = "kind"
    assert COGNIBENCH.describe()["tree"]["step"] == "relevance"


def test_defaults_are_written_out_so_a_minimal_document_loads_back_to_itself():
    minimal = {"id": "yesno", "version": 1, "name": "Supported?", "start": "supported",
               "steps": [{"id": "supported", "question": "Does the reference support it?", "answers": [
                   {"value": "yes", "label": "Yes", "yields": "supported"},
                   {"value": "no", "label": "No", "yields": "unsupported"}]}],
               "labels": [{"id": "supported", "name": "Supported"}, {"id": "unsupported", "name": "Unsupported"}]}
    loaded = load_protocol(minimal)
    assert isinstance(loaded, Protocol)
    assert load_protocol(loaded.document).document == loaded.document
    assert loaded.step("supported").answers[1].key == "2" and loaded.label("unsupported").key == "2"
    assert loaded.agreement_steps == ("supported",) and loaded.modes == ("sequential", "independent")


def test_every_shipped_document_loads():
    assert "cognibench" in shipped_names()
    for name in shipped_names():
        assert load_shipped(name).id == name


def test_a_label_reached_by_several_paths_has_no_single_path_in_sequential_only_mode():
    document = {"id": "two", "version": 1, "name": "Two ways", "start": "a", "modes": ["sequential"],
                "steps": [{"id": "a", "question": "A?", "answers": [
                              {"value": "yes", "label": "Yes", "next": "b"}, {"value": "no", "label": "No", "yields": "bad"}]},
                          {"id": "b", "question": "B?", "answers": [
                              {"value": "yes", "label": "Yes", "yields": "good"}, {"value": "no", "label": "No", "yields": "bad"}]}],
                "labels": [{"id": "good", "name": "Good"}, {"id": "bad", "name": "Bad"}]}
    protocol = load_protocol(document)
    assert protocol.path_for_label("bad") is None
    assert protocol.path_for_label("good") == {"a": "yes", "b": "yes"}
    with pytest.raises(ProtocolDocumentError) as refused:
        load_protocol({**document, "modes": ["sequential", "independent"]})
    assert refused.value.problems == [("/labels/1", "label 'bad' is reached by 2 paths; independent mode needs exactly "
                                       "one (give each path its own label, or drop 'independent' from modes)")]
