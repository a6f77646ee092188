"""Every refusal of a protocol document (issue 24, item 2), each named by its path in the document."""

import copy

import pytest

from annotator.domain.protocol.document import COGNIBENCH, ProtocolDocumentError, load_protocol


def cognibench():
    return copy.deepcopy(COGNIBENCH.document)


def problems(document):
    with pytest.raises(ProtocolDocumentError) as refused:
        load_protocol(document)
    assert refused.value.problems, "refused without a problem"
    return refused.value.problems


def answer_of(document, step, value):
    step = next(s for s in document["steps"] if s["id"] == step)
    return next(a for a in step["answers"] if a["value"] == value)


def test_an_unknown_step_is_named_where_it_is_referenced():
    document = cognibench()
    answer_of(document, "kind", "cognitive")["next"] = "rationale"
    document["start"] = "relevancy"
    found = problems(document)
    assert ("/start", "unknown step 'relevancy'") in found
    assert ("/steps/1/answers/1/next", "unknown step 'rationale'") in found


def test_an_unknown_next_step_alone_is_named_and_the_rest_still_checked():
    document = cognibench()
    answer_of(document, "kind", "factual")["next"] = "faithful"
    assert problems(document) == [
        ("/steps/1/answers/0/next", "unknown step 'faithful'"),
        ("/steps/2", "step 'faithfulness' is never asked: no path from 'relevance' leads to it"),
        ("/labels/1", "label 'faithful' is reached by no path"),
        ("/labels/2", "label 'invented' is reached by no path"),
    ]


def test_an_unknown_label_is_named_where_it_is_referenced():
    document = cognibench()
    answer_of(document, "faithfulness", "invented")["yields"] = "made_up"
    found = problems(document)
    assert ("/steps/2/answers/1/yields", "unknown label 'made_up'") in found


def test_a_cycle_is_refused_at_the_answer_that_closes_it():
    document = cognibench()
    answer_of(document, "grounded", "no")["next"] = answer_of(document, "grounded", "no").pop("yields") and "rational"
    found = problems(document)
    assert found[0] == ("/steps/4/answers/1/next", "a cycle: rational → grounded → rational (a step cannot follow itself)")


def test_a_label_no_path_reaches_is_refused():
    document = cognibench()
    document["labels"].append({"id": "orphan", "name": "Orphan", "key": "8"})
    assert problems(document) == [("/labels/7", "label 'orphan' is reached by no path")]


def test_a_step_no_path_asks_is_refused():
    document = cognibench()
    document["steps"].append({"id": "severity", "question": "How bad?", "answers": [
        {"value": "mild", "label": "Mild", "yields": "invented"}, {"value": "severe", "label": "Severe", "yields": "invented"}]})
    found = problems(document)
    assert ("/steps/6", "step 'severity' is never asked: no path from 'relevance' leads to it") in found


def test_two_answers_on_one_key_are_refused():
    document = cognibench()
    answer_of(document, "kind", "cognitive")["key"] = "1"
    answer_of(document, "rational", "no")["yn"] = "y"
    found = problems(document)
    assert ("/steps/1/answers/1/key", "key '1' already answers 'factual' in step 'kind': two answers on one key") in found
    assert ("/steps/3/answers/1/yn", "key 'y' already answers 'yes' in step 'rational': two answers on one key") in found


def test_two_labels_on_one_key_are_refused():
    document = cognibench()
    document["labels"][6]["key"] = "1"
    assert problems(document) == [("/labels/6/key", "key '1' already picks label 'irrelevant': two labels on one key")]


def test_a_key_the_screen_uses_for_something_else_is_refused():
    document = cognibench()
    document["labels"][0]["key"] = "u"
    document["labels"][1]["key"] = "j"
    assert problems(document) == [
        ("/labels/0/key", "key 'u' takes the last answer back on the annotation screen: a label cannot use it"),
        ("/labels/1/key", "key 'j' moves to the next sentence on the annotation screen: a label cannot use it"),
    ]


def test_a_group_naming_an_unknown_label_or_step_is_refused():
    document = cognibench()
    document["groups"]["hallucination"].append("fabricated")
    document["groups"]["families"][0]["labels"].append("made_up")
    document["groups"]["agreement_steps"].append("colour")
    document["groups"]["severity"] = ["nonsense"]
    found = problems(document)
    assert ("/groups/hallucination/3", "unknown label 'fabricated'") in found
    assert ("/groups/families/0/labels/2", "unknown label 'made_up'") in found
    assert ("/groups/agreement_steps/6", "unknown step 'colour'") in found
    assert ("/groups/severity/0", "unknown label 'nonsense'") in found


def test_a_view_with_no_positive_label_is_refused():
    document = cognibench()
    document["groups"]["evaluation"]["views"][1]["positive"] = []
    document["groups"]["evaluation"]["macro"]["views"].append("overall")
    assert problems(document) == [
        ("/groups/evaluation/views/1/positive", "view 'factual' has no positive label: nothing to detect"),
        ("/groups/evaluation/macro/views/2", "unknown view 'overall'"),
    ]


def test_a_positive_label_outside_its_view_is_refused():
    document = cognibench()
    document["groups"]["evaluation"]["views"][1]["scope"] = ["faithful", "invented"]  # CogniBench's declare none
    document["groups"]["evaluation"]["views"][1]["positive"].append("misleading")
    assert problems(document) == [("/groups/evaluation/views/1/positive/1", "positive label 'misleading' is outside the view's scope")]


def test_more_than_nine_answers_or_fewer_than_two_are_refused():
    document = cognibench()
    document["steps"][1]["answers"] += [
        {"value": f"extra{n}", "label": f"Extra {n}", "key": "9", "yields": "faithful"} for n in range(8)]
    document["steps"][3]["answers"] = document["steps"][3]["answers"][:1]
    assert problems(document) == [("/steps/1/answers", "has 10 answers; at most 9"),
                                  ("/steps/3/answers", "has 1 answers; at least 2")]


def test_a_label_reached_by_two_paths_is_refused_in_independent_mode():
    document = cognibench()
    answer_of(document, "faithfulness", "faithful")["yields"] = "invented"
    document["labels"] = [label for label in document["labels"] if label["id"] != "faithful"]
    for group in ("families",):
        document["groups"][group][0]["labels"].remove("faithful")
    for view in document["groups"]["evaluation"]["views"]:
        view["scope"] = [label for label in view["scope"] if label != "faithful"]
    for n, label in enumerate(document["labels"]):
        label["key"] = str(n + 1)
    assert problems(document) == [("/labels/1", "label 'invented' is reached by 2 paths; independent mode needs "
                                   "exactly one (give each path its own label, or drop 'independent' from modes)")]
    document["modes"] = ["sequential"]
    assert load_protocol(document).path_for_label("invented") is None


def test_duplicate_ids_are_refused():
    document = cognibench()
    document["labels"][6]["id"] = "reliable"
    found = problems(document)
    assert ("/labels/6/id", "label id 'reliable' is already used by /labels/5") in found


def test_an_answer_with_both_or_neither_next_and_yields_is_refused():
    document = cognibench()
    answer_of(document, "relevance", "irrelevant")["next"] = "kind"
    del answer_of(document, "kind", "factual")["next"]
    found = problems(document)
    message = "an answer needs exactly one of 'next' (the step that follows) or 'yields' (the label it ends on)"
    assert ("/steps/0/answers/1", message) in found and ("/steps/1/answers/0", message) in found


def test_shape_problems_are_all_listed_with_their_paths():
    found = problems({"id": "Bad Id", "version": 0, "name": "", "start": "a", "steps": [], "labels": [{"id": "x"}],
                      "colour": "red"})
    assert found == [
        ("/", "Additional properties are not allowed ('colour' was unexpected)"),
        ("/id", "'Bad Id' does not match ^[a-z][a-z0-9_]{0,19}$ (an identifier: a lower-case letter, then letters, "
                "digits or _; at most 20)"),
        ("/labels/0", "'name' is a required property"),
        ("/name", "must not be empty"),
        ("/steps", "has 0 steps; at least 1"),
        ("/version", "0 is less than the minimum of 1"),
    ]


def test_not_an_object_is_refused():
    assert problems(["steps"]) == [("/", "a protocol document is a JSON object")]
