"""Step kinds (issue 42): multiple, scale and text steps in a protocol document, its walk and its description."""

import copy
import hashlib
import json

import pytest

from annotator.domain.protocol.canonical import canonical
from annotator.domain.protocol.document import (
    PROTOCOLS_DIR, ProtocolDocumentError, ProtocolError, load_protocol, load_shipped, shipped_names,
)
from annotator.domain.protocol.kinds import KINDS, holds

HALLU = load_shipped("halludetect")


def hallu_document():
    return json.loads((PROTOCOLS_DIR / "halludetect.json").read_text())


def problems(document):
    with pytest.raises(ProtocolDocumentError) as refused:
        load_protocol(document)
    return refused.value.problems


def walked(*answers):
    path = {}
    for step, value in answers:
        path = HALLU.answer(path, step, value)
    return path


FULL = (("supported", "no"), ("error_types", ["wrong_citation", "fabricated"]), ("severity", 4),
        ("justification", "The cited case does not exist."))


def test_the_example_has_one_step_of_each_kind_and_its_kind_steps_in_order():
    assert [HALLU.step_kind(step) for step in HALLU.steps] == ["choice", "multiple", "scale", "text"]
    assert HALLU.kind_steps() == ("error_types", "severity", "justification")
    severity = HALLU.step("severity")
    assert (severity.kind, severity.min, severity.max, severity.anchors, severity.next) == (
        "scale", 1, 5, ((1, "cosmetic"), (5, "outcome-changing")), "justification")
    text = HALLU.step("justification")
    assert (text.max_length, text.optional, text.yields) == (2000, False, "unsupported")
    assert HALLU.step("error_types").min == 1 and HALLU.step("error_types").max == 5
    assert set(KINDS) == {"choice", "multiple", "scale", "text"}


def test_a_walk_takes_each_kinds_value_and_stores_a_multiple_steps_answers_in_answer_order():
    path = walked(*FULL[:2])
    assert path == {"supported": "no", "error_types": ["fabricated", "wrong_citation"]}
    assert HALLU.next_step(path) == "severity" and HALLU.label_of(path) is None
    path = walked(*FULL[:3])
    assert path["severity"] == 4 and HALLU.next_step(path) == "justification" and HALLU.label_of(path) is None
    path = walked(*FULL)
    assert HALLU.label_of(path) == "unsupported" and HALLU.next_step(path) is None
    HALLU.validate(path)
    assert HALLU.undo(path) == walked(*FULL[:3])
    assert HALLU.divergence(path, {**path, "severity": 2}) == "severity"
    assert HALLU.steps_of(path) == list(HALLU.steps)
    # changing an earlier answer drops the later ones, whatever their kind
    assert HALLU.answer(path, "error_types", ["outdated_law"]) == {"supported": "no", "error_types": ["outdated_law"]}


@pytest.mark.parametrize("step, value, words", [
    ("error_types", [], "1 to 5 of its answers, not 0"),
    ("error_types", ["fabricated", "fabricated"], "picked twice"),
    ("error_types", ["invented"], "no answer 'invented'"),
    ("error_types", "fabricated", "a list of its answers"),
    ("severity", 0, "from 1 to 5, not 0"),
    ("severity", 6, "from 1 to 5"),
    ("severity", True, "from 1 to 5, not True"),
    ("severity", "4", "from 1 to 5"),
    ("severity", 4.0, "from 1 to 5"),
    ("justification", "   ", "needs an answer"),
    ("justification", "x" * 2001, "at most 2,000 characters"),
    ("justification", "a\x00b", "NUL"),
    ("justification", 3, "takes a text"),
])
def test_a_value_the_kind_refuses_is_a_protocol_error_naming_the_step(step, value, words):
    before = {"supported": "no", "error_types": ["fabricated"], "severity": 3}
    with pytest.raises(ProtocolError) as refused:
        HALLU.answer(before, step, value)
    assert f"step {step!r}" in str(refused.value) and words in str(refused.value)


def test_a_stored_path_must_hold_each_value_in_its_stored_form():
    complete = walked(*FULL)
    for bad in ({**complete, "severity": True}, {**complete, "severity": "4"},
                {**complete, "error_types": ["wrong_citation", "fabricated"]}):
        assert HALLU.label_of(bad) is None
        with pytest.raises(ProtocolError):
            HALLU.validate(bad)
    assert not holds(HALLU.step("severity"), True) and holds(HALLU.step("severity"), 1)
    with pytest.raises(ProtocolError, match=r"step 'error_types' stores its answer as \['fabricated', 'wrong_citation'\]"):
        HALLU.validate({**complete, "error_types": ["wrong_citation", "fabricated"]})


def test_an_optional_text_step_is_answered_with_an_empty_string():
    document = hallu_document()
    document["steps"][3]["optional"] = True
    protocol = load_protocol(document)
    path = {"supported": "no", "error_types": ["fabricated"], "severity": 1}
    assert protocol.label_of(path) is None
    assert protocol.label_of(protocol.answer(path, "justification", "")) == "unsupported"


def test_shapes_hold_choice_answers_only():
    assert HALLU.paths() == [{"supported": "yes"}, {"supported": "no"}]
    assert HALLU.path_for_label("unsupported") == {"supported": "no"}
    assert HALLU.step_domains() == {"supported": ("yes", "no")}
    assert HALLU.evidence_labels == frozenset({"supported"})


def test_describe_gives_each_step_its_kind_and_fields_and_a_kind_node_one_after():
    described = HALLU.describe()
    steps = described["steps"]
    assert steps["supported"]["kind"] == "choice" and [a["key"] for a in steps["supported"]["answers"]] == ["1", "2"]
    assert steps["error_types"]["kind"] == "multiple" and (steps["error_types"]["min"], steps["error_types"]["max"]) == (1, 5)
    assert steps["severity"]["anchors"] == [[1, "cosmetic"], [5, "outcome-changing"]]
    assert steps["severity"]["points"] == [["1", 1], ["2", 2], ["3", 3], ["4", 4], ["5", 5]]
    assert (steps["justification"]["max_length"], steps["justification"]["optional"]) == (2000, False)
    assert described["tree"] == {"step": "supported", "then": {
        "yes": {"label": "supported"},
        "no": {"step": "error_types", "kind": "multiple", "after": {"step": "severity", "kind": "scale", "after": {
            "step": "justification", "kind": "text", "after": {"label": "unsupported"}}}}}}
    json.dumps(described)  # the page embeds it


def test_the_canonical_form_omits_choice_and_writes_each_kinds_defaults_out():
    document = hallu_document()
    del document["steps"][1]["min"]
    form = canonical(document)
    assert "kind" not in form["steps"][0]
    assert form["steps"][1]["min"] == 1 and form["steps"][1]["max"] == 5 and form["steps"][1]["kind"] == "multiple"
    assert form["steps"][3]["optional"] is False
    del document["steps"][3]["max_length"]
    assert canonical(document)["steps"][3]["max_length"] == 5000
    assert load_protocol(HALLU.document) == HALLU and canonical(HALLU.document) == HALLU.document


# Measured on main before step kinds: each shipped document's checksum and the sha256 of its canonical bytes as
# protocol_show prints them. Step kinds must change neither (issue 42: "unchanged byte for byte").
BEFORE_KINDS = {
    "cognibench": ("7f6f0690aa28decf56d6c7f77e8ce153f950b9ee34666a20d0d57baa46b25ba5", "e419989d5899886a5b700614616e7f5ddf1c6d2127cc3b64ba7d62968b092693"),
    "cognibench_clinical": ("055c6d25ef510886d1525121f402385af99bd75dbce371244ab7c758bfff98ed", "06c546d9d455426d40893f12ced31320d4d7b9d83c0dc0db54c92318acdcef74"),
    "face4rag": ("f1b7ed8edf1f87ca29b046c19d0ac797dad9b6b3fdb1225e5bf7ca1d59a9abde", "8b5caca9c25aac64baeb3796d8471b8961f61b48ddae0195ad0fd9fb7314b775"),
}
# A document leaving every default out (as a project's stored older version may), and its checksum before kinds.
MINIMAL = {"id": "tiny", "version": 3, "name": "Tiny", "start": "ok",
           "steps": [{"id": "ok", "question": "Fine?", "answers": [
               {"value": "yes", "label": "Yes", "yields": "fine"}, {"value": "no", "label": "No", "next": "why"}]},
                     {"id": "why", "question": "Why not?", "answers": [
               {"value": "made_up", "label": "Made up", "yields": "invented", "evidence": True},
               {"value": "wrong", "label": "Wrong", "yn": "n", "key": "5", "yields": "wrong"}]}],
           "labels": [{"id": "fine", "name": "Fine"}, {"id": "invented", "name": "Invented", "requires_evidence": True},
                      {"id": "wrong", "name": "Wrong", "colour": "#123456"}],
           "groups": {"hallucination": ["invented", "wrong"], "evaluation": {"views": [
               {"id": "any", "name": "Any", "positive": ["invented", "wrong"], "scope": ["fine", "invented", "wrong"]}]}}}
MINIMAL_BEFORE_KINDS = "f3b5c9e4dcb35ffbb7e0d4072fe2e5390213647e8d9060e415b56976ec4aff91"


def test_every_shipped_document_but_the_kinds_example_is_measured_here():
    assert set(shipped_names()) == {*BEFORE_KINDS, "halludetect"}


@pytest.mark.parametrize("name", sorted(BEFORE_KINDS))
def test_every_shipped_document_keeps_its_canonical_bytes_and_checksum(name):
    document = json.loads((PROTOCOLS_DIR / f"{name}.json").read_text())
    printed = json.dumps(canonical(document), indent=2, ensure_ascii=False).encode()
    assert (load_shipped(name).checksum, hashlib.sha256(printed).hexdigest()) == BEFORE_KINDS[name]
    protocol = load_shipped(name)
    assert all("kind" not in step for step in protocol.document["steps"]) and protocol.kind_steps() == ()
    assert protocol.step_domains() == {step: protocol.step(step).values for step in protocol.steps}
    for path in protocol.paths():  # without kinds a shape is a complete path
        assert protocol.label_of(path) is not None


def test_a_document_leaving_every_default_out_keeps_its_checksum():
    assert load_protocol(MINIMAL).checksum == MINIMAL_BEFORE_KINDS
    assert load_protocol({**MINIMAL, "steps": [{**step, "kind": "choice"} for step in MINIMAL["steps"]]}).checksum == \
        MINIMAL_BEFORE_KINDS  # "kind": "choice" written out is the default: the same protocol


def test_a_scale_with_min_not_below_max_is_refused_naming_the_step():
    document = hallu_document()
    document["steps"][2]["min"] = 5
    document["steps"][2]["max"] = 3
    assert problems(document) == [("/steps/2", "a scale's min (5) must be below its max (3)")]


@pytest.mark.parametrize("change, where, words", [
    (lambda d: d["steps"][2].update(min=1, max=10), "/steps/2", "10 points; at most 9"),
    (lambda d: d["steps"][2]["anchors"].update({"7": "x"}), "/steps/2/anchors/7", "from 1 to 5"),
    (lambda d: d["steps"][1].update(max=6), "/steps/1/max", "exceeds the step's 5 answers"),
    (lambda d: d["steps"][1].update(min=4, max=3), "/steps/1/min", "above max 3"),
    (lambda d: d["steps"][1]["answers"][0].update(next="severity"), "/steps/1/answers/0/next", "do not branch"),
    (lambda d: d["steps"][1].pop("next"), "/steps/1", "exactly one of 'next'"),
    (lambda d: d["steps"][3].update(next="severity"), "/steps/3", "exactly one of 'next'"),
    (lambda d: d["steps"][2].update(next="nowhere"), "/steps/2/next", "unknown step 'nowhere'"),
    (lambda d: d["steps"][3].update(yields="nothing"), "/steps/3/yields", "unknown label 'nothing'"),
    (lambda d: d["steps"][2].update(max_length=10), "/steps/2/max_length", "a scale step has no 'max_length'"),
    (lambda d: d["steps"][0].update(min=1), "/steps/0/min", "a choice step has no 'min'"),
    (lambda d: d["steps"][0].update(next="severity"), "/steps/0/next", "a choice step's answers lead on (put it on an answer)"),
    (lambda d: d["steps"][3].update(max_length=5001), "/steps/3/max_length", ""),
    (lambda d: d["steps"][2].pop("max"), "/steps/2", "max"),
    (lambda d: d["steps"][1].update(kind="ranking"), "/steps/1/kind", ""),
    (lambda d: d["steps"][2].update(next="supported"), "/steps/2/next", "a cycle"),
])
def test_every_kind_problem_is_named_by_its_path(change, where, words):
    document = hallu_document()
    change(document)
    found = problems(document)
    assert any(at == where and words in message for at, message in found), found


def test_independent_mode_counts_the_shapes_reaching_a_label_not_the_kind_values():
    document = copy.deepcopy(hallu_document())
    document["modes"] = ["sequential", "independent"]
    protocol = load_protocol(document)  # each label on exactly one shape: independent mode holds
    assert protocol.path_for_label("supported") == {"supported": "yes"}
    document["steps"][0]["answers"].append({"value": "partly", "label": "Partly", "next": "error_types"})
    assert ("/labels/1", "label 'unsupported' is reached by 2 paths; independent mode needs exactly one (give each "
            "path its own label, or drop 'independent' from modes)") in problems(document)


def test_a_shape_leads_to_its_label_past_the_kind_steps():
    assert [HALLU.label_of_shape(shape) for shape in HALLU.paths()] == ["supported", "unsupported"]
    assert HALLU.label_of({"supported": "no"}) is None and HALLU.label_of_shape({}) is None
    assert HALLU.label_of_shape(walked(*FULL)) == "unsupported"


def test_many_kind_steps_in_a_row_add_no_path_shape():
    answers = [{"value": f"a{n}", "label": f"A{n}"} for n in range(1, 10)]
    chain = [{"id": f"m{n}", "kind": "multiple", "question": "Which?", "min": 0, "answers": answers,
              "next": f"m{n + 1}"} for n in range(40)]
    chain[-1] = {**chain[-1], "yields": "bad"}
    del chain[-1]["next"]
    document = {"id": "wide", "version": 1, "name": "Wide", "start": "ok", "modes": ["sequential"],
                "steps": [{"id": "ok", "question": "OK?", "answers": [{"value": "yes", "label": "Yes", "yields": "good"},
                                                                    {"value": "no", "label": "No", "next": "m0"}]}, *chain],
                "labels": [{"id": "good", "name": "Good"}, {"id": "bad", "name": "Bad"}]}
    protocol = load_protocol(document)  # 2 shapes, not 512 ** 40 combinations of picks
    assert protocol.paths() == [{"ok": "yes"}, {"ok": "no"}] and len(protocol.kind_steps()) == 40
    path = {"ok": "no"}
    for n in range(40):
        path = protocol.answer(path, f"m{n}", [] if n % 2 else ["a9", "a1"])
    assert protocol.label_of(path) == "bad" and path["m0"] == ["a1", "a9"]
