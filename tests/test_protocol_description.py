"""The protocol as data (protocol.describe) says what protocol.py says, for every path."""

from annotator.domain import protocol
from annotator.domain.definitions import LABEL_DEFINITIONS, STEP_DEFINITIONS
from annotator.domain.vocabulary import STEP_ANSWERS, YES_NO_KEYS, Label, Step


def walk_description(tree, answers):
    """Follow ``answers`` through the description; the path taken and the node reached after each answer."""
    node, path, seen = tree, {}, []
    for value in answers:
        path = {**path, node["step"]: value}
        node = node["then"][value]
        seen.append((dict(path), node))
    return seen


def test_the_description_gives_the_next_step_and_label_of_protocol_py_on_every_path():
    description = protocol.describe()
    complete = protocol.paths()
    assert sorted(protocol.label_of(path) for path in complete) == sorted(Label)
    for path in complete:
        for walked, node in walk_description(description["tree"], list(path.values())):
            assert node.get("step") == (protocol.next_step(walked) and str(protocol.next_step(walked)))
            assert node.get("label") == (protocol.label_of(walked) and str(protocol.label_of(walked)))
            assert set(node.get("then", {})) == ({str(a) for a in STEP_ANSWERS[protocol.next_step(walked)]}
                                                 if protocol.next_step(walked) else set())


def test_the_tree_has_exactly_the_paths_of_the_protocol():
    found = []

    def leaves(node, path):
        if "label" in node:
            found.append(path)
            return
        for value, child in node["then"].items():
            leaves(child, {**path, node["step"]: value})

    leaves(protocol.describe()["tree"], {})
    assert found == protocol.paths()
    for path in found:
        protocol.validate(path)


def test_questions_answers_keys_and_labels_come_from_the_vocabulary():
    description = protocol.describe()
    for step in Step:
        described = description["steps"][step]
        assert described["question"] == step.label and described["definition"] == STEP_DEFINITIONS[step]
        assert [(a["value"], a["key"], a["yn"]) for a in described["answers"]] == [
            (value, str(n), YES_NO_KEYS.get(value, "")) for n, value in enumerate(STEP_ANSWERS[step], start=1)]
    assert [(x["value"], x["key"], x["definition"], x["path"]) for x in description["labels"]] == [
        (label, str(n), LABEL_DEFINITIONS[label], protocol.path_for_label(label)) for n, label in enumerate(Label, start=1)]


def test_node_extras_mark_each_node_with_what_its_path_needs():
    description = protocol.describe(node_extras=lambda path: {"depth": len(path)})
    assert description["tree"]["depth"] == 0
    assert description["tree"]["then"]["relevant"]["then"]["factual"]["then"]["faithful"] == {"label": "faithful", "depth": 3}


def test_y_and_1_give_the_same_kind_of_answer_at_every_step():
    """Issue 26, item 8: 1 meant "Relevant" ("no" to "Is the sentence irrelevant?") at the first step but "Yes"
    afterwards. Now every yes/no question is worded so that y is its first answer, the one key 1 gives."""
    for step in Step:
        answers = protocol.describe()["steps"][step]["answers"]
        with_y = [a["key"] for a in answers if a["yn"] == "y"]
        assert with_y in ([], ["1"]), (step, answers)
    assert Step.RELEVANCE.label == "Is the sentence relevant?"
