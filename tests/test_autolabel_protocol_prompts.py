"""The pre-labeler on each shipped protocol document, and on one with no stage-two step (pure, no database):
prompts built from the document's steps, answers and labels, replies parsed by walking the tree, samples
read into (label, hallucinated, family), the vote's tie-break from the hallucination group, and the offline
judge answering each document's format without knowing it."""

import pytest

from annotator.domain.protocol.document import load_protocol, load_shipped
from autolabel.baseline import judge
from autolabel.labelling.parsing import parse_reply, sample_label
from autolabel.labelling.replies import CallResult, Choice
from autolabel.labelling.pipeline import JobConfig, TurnOutcome, TurnSpec, outcome_predictions, plan_requests, rows_from_result
from autolabel.labelling.prompting import (
    DEFAULT_STAGE1_TEMPLATE,
    DEFAULT_STAGE2_TEMPLATE,
    STAGE_1,
    STAGE_2,
    Example,
    build_messages,
)
from autolabel.labelling.stages import stages_of, tie_break_order
from autolabel.labelling.voting import decide

COGNIBENCH, FACE4RAG, CLINICAL = (load_shipped(name) for name in ("cognibench", "face4rag", "cognibench_clinical"))
SHIPPED = {"cognibench": COGNIBENCH, "face4rag": FACE4RAG, "cognibench_clinical": CLINICAL}


def one_stage_document():
    document = COGNIBENCH.document
    document["id"], document["name"], document["groups"]["stage_two_steps"] = "cognibench_flat", "Flat", []
    return load_protocol(document)


FLAT = one_stage_document()
REFERENCE = ("The Danube rises in the Black Forest of Germany and flows 2850 kilometres into the Black Sea. "
             "Vienna and Budapest stand on its banks.")
SENTENCES = [
    (1, "Sure!"),
    (2, "The Danube rises in the Black Forest of Germany."),
    (3, "It was named after a Roman goddess of pearls and silver fish in 1312."),
    (4, "Therefore the Danube is probably the most important trade route in the whole world."),
]


def user_text(stage, protocol, sentences=SENTENCES, examples=(), template=None):
    template = template or (DEFAULT_STAGE1_TEMPLATE if stage == STAGE_1 else DEFAULT_STAGE2_TEMPLATE)
    return build_messages(stage, template, REFERENCE, "Tell me about the Danube.", sentences, examples,
                          protocol=protocol)[1]["content"]


def format_lines(text):
    block = text[text.index("<format"):]
    return [line for line in block.splitlines() if " → " in line]


def test_cognibench_stage_one_lists_every_allowed_reply_and_where_it_ends():
    text = user_text(STAGE_1, COGNIBENCH)
    assert format_lines(text) == [
        "relevant factual faithful → faithful",
        "relevant factual invented → invented (a hallucination)",
        "relevant cognitive → asked in a second request (some of its labels are hallucinations)",
        "irrelevant → irrelevant",
    ]
    # Stage 1 asks the steps not marked for stage 2, with their wording, definitions and answers.
    for step in ("relevance", "kind", "faithfulness"):
        assert f"step {step}: {COGNIBENCH.step(step).question}" in text
    assert "step rational" not in text
    assert "  answer cognitive (Cognitive): asked in a second request" in text
    assert "label invented: Invented (a hallucination)." in text and "label misleading" not in text


def test_stage_two_asks_the_marked_steps_and_lists_the_reachable_labels():
    text = user_text(STAGE_2, COGNIBENCH, [(4, SENTENCES[3][1])])
    assert format_lines(text) == ["misleading → misleading (a hallucination)", "speculative → speculative (a hallucination)",
                                  "reliable → reliable", "unequivocal → unequivocal"]
    assert "step rational: Is it rational?" in text and "step relevance" not in text
    face4rag = user_text(STAGE_2, FACE4RAG, [(4, SENTENCES[3][1])])
    assert [line.split(" → ")[0] for line in format_lines(face4rag)] == [
        "contradiction", "entity_inversion", "conflation", "substitution",
        "overgeneralization", "causal_confusion", "condition_confusion", "inclusion"]
    assert "no knowledge (step knowledge); no logic (step fallacy)" in face4rag


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_every_path_of_the_document_is_one_allowed_reply_or_its_stage_two_entry(name):
    protocol = SHIPPED[name]
    stages = stages_of(protocol)
    allowed = {line.split(" → ")[0] for line in format_lines(user_text(STAGE_1, protocol))}
    for path in protocol.paths():
        label = protocol.label_of(path)
        words, reached = [], None
        for step, value in path.items():
            if step in protocol.stage_two_steps:
                reached = step
                break
            words.append(value)
        assert " ".join(words) in allowed
        parsed = parse_reply(f"<s1>{' '.join(words)}</s1>", STAGE_1, [1], protocol=protocol)
        assert parsed.problems == {}
        tag = parsed.tags[1]
        if reached is None:
            assert (tag.label, tag.entry) == (label, None)
        else:
            assert tag.label is None and label in stages.reachable(tag.entry)
            second = parse_reply(f"<s1>{label}</s1>", STAGE_2, [1], protocol=protocol).tags[1]
            read = sample_label(tag, second, protocol)
            assert read[:2] == (label, label in protocol.hallucination_labels)


def test_unknown_words_wrong_order_and_incomplete_walks_are_unknown_tags():
    replies = "\n".join([
        "<s1>relevant factual invented</s1>",  # clinical: the harm step is not answered
        "<s2>factual relevant faithful</s2>",  # wrong order
        "<s3>relevant factual invented maybe</s3>",  # unknown word
        "<s4>relevant factual invented no</s4>",
        "<s5>relevant factual faithful yes</s5>",  # a word after the label
    ])
    parsed = parse_reply(replies, STAGE_1, [1, 2, 3, 4, 5], protocol=CLINICAL)
    assert parsed.problems == {"unknown_tag": 4}
    assert list(parsed.tags) == [4] and parsed.tags[4].label == "invented"
    assert parse_reply("<s1>yes yes</s1>", STAGE_1, [1], protocol=FACE4RAG).problems == {"unknown_tag": 1}
    # Stage 2 takes only a label stage 2 can reach.
    stage_two = parse_reply("<s1>consistent</s1><s2>inclusion</s2>", STAGE_2, [1, 2], protocol=FACE4RAG)
    assert {n: tag.label for n, tag in stage_two.tags.items()} == {2: "inclusion"} and stage_two.problems == {"unknown_tag": 1}


def test_a_sentence_that_entered_stage_two_without_its_reply_counts_only_what_every_label_there_agrees_on():
    knowledge = stages_of(FACE4RAG).stage1_reading("no knowledge")
    # Every knowledge error is a hallucination: the sample still votes hallucinated, with no label.
    assert sample_label(knowledge, None, FACE4RAG) == (None, True, "knowledge_error")
    # A stage-2 label reachable only from the other entry is not this sentence's: treated as missing.
    assert sample_label(knowledge, "causal_confusion", FACE4RAG) == (None, True, "knowledge_error")
    assert sample_label(knowledge, "conflation", FACE4RAG) == ("conflation", True, "knowledge_error")
    # CogniBench's cognitive labels disagree on hallucination: the sample abstains.
    cognitive = stages_of(CLINICAL).stage1_reading("relevant cognitive")
    assert sample_label(cognitive, None, CLINICAL) == (None, None, "cognitive")


def test_a_document_without_stage_two_steps_is_one_stage():
    stages = stages_of(FLAT)
    assert not stages.two_stage and all(reply.entry is None for reply in stages.replies)
    text = user_text(STAGE_1, FLAT)
    assert "asked in a second request" not in text and "step unequivocal: Is it unequivocal?" in text
    assert "relevant cognitive yes no → speculative (a hallucination)" in format_lines(text)
    config = JobConfig(3, 2, True, DEFAULT_STAGE1_TEMPLATE, DEFAULT_STAGE2_TEMPLATE, [], protocol=FLAT)
    spec = TurnSpec(1, 10, REFERENCE, "", [(n, 100 + n, s) for n, s in SENTENCES])
    (indices, numbers, messages), = plan_requests(spec, config, STAGE_1)
    reply = judge.answer(messages[1]["content"], seed=0)
    outcome = TurnOutcome(spec)
    outcome.rows = rows_from_result(STAGE_1, indices, numbers, CallResult([Choice(reply, False)] * 3), FLAT)
    assert all(row["problems"] == {} for row in outcome.rows)
    for row in outcome.rows:
        spec.existing[(STAGE_1, row["sample_index"])] = row
    assert plan_requests(spec, config, STAGE_2) == []  # nothing to ask a second time
    outcome_predictions(spec, config, outcome)
    labels = [prediction["label"] for prediction in outcome.predictions]
    assert labels[:3] == ["irrelevant", "faithful", "invented"] and labels[3] in {"misleading", "speculative"}


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_the_offline_judge_answers_each_document_in_its_own_tags(name):
    protocol = SHIPPED[name]
    first = parse_reply(judge.answer(user_text(STAGE_1, protocol), seed=2), STAGE_1, [1, 2, 3, 4], protocol=protocol)
    assert first.problems == {} and sorted(first.tags) == [1, 2, 3, 4]
    read = {n: sample_label(tag, None, protocol) for n, tag in first.tags.items()}
    assert read[2][:2] == ("faithful" if name != "face4rag" else "consistent", False)
    assert read[3][1] is True  # an unsupported claim with an unsupported number
    entered = [n for n, tag in first.tags.items() if tag.entry]
    assert entered == [4]  # the reasoning sentence goes on to the second request
    text = user_text(STAGE_2, protocol, [SENTENCES[3]])
    second = parse_reply(judge.answer(text, seed=2), STAGE_2, [4], protocol=protocol)
    assert second.problems == {} and second.tags[4].label in protocol.hallucination_labels


def test_the_judge_gives_an_empty_sentence_the_reply_whose_wording_says_it_has_nothing_to_check():
    assert "<s1>irrelevant</s1>" in judge.answer(user_text(STAGE_1, CLINICAL), seed=0)
    # Face4RAG has no such label: a sentence that states nothing is consistent.
    assert "<s1>yes</s1>" in judge.answer(user_text(STAGE_1, FACE4RAG), seed=0)


def test_contrastive_examples_are_shown_in_each_stage_s_tags():
    examples = [Example("Beta bought Alpha.", "Alpha bought Beta.", "consistent", "entity_inversion", "Roles swapped."),
                Example("It opened in 2019.", "", "hallucination", "consistent")]
    stage1 = user_text(STAGE_1, FACE4RAG, examples=examples)
    assert "Wrong: yes\nRight: no knowledge\nWhy: Roles swapped." in stage1
    assert "Wrong: no hallucination\nRight: yes" in stage1
    stage2 = user_text(STAGE_2, FACE4RAG, examples=examples)
    assert "Right: entity_inversion" in stage2 and "2019" not in stage2  # only examples stage 2 can reach
    # A label the protocol does not define (an older version's) is left out, not guessed.
    assert "Examples" not in user_text(STAGE_1, FACE4RAG, examples=[Example("x", "", "invented", "consistent")])


def test_templates_place_the_protocol_or_get_it_appended():
    custom = "Label the sentences.\n{{steps}}\n{{sentences}}"
    text = user_text(STAGE_1, FACE4RAG, template=custom)
    assert text.index("step consistent") < text.index("<response>")
    old_style = "Decide for each sentence whether it is supported by the reference."
    appended = user_text(STAGE_1, FACE4RAG, template=old_style)
    assert appended.startswith(old_style) and '<protocol name="Face4RAG' in appended
    assert appended.index("<protocol") < appended.index("<reference>") < appended.index("<response>")


def test_ties_go_to_the_hallucination_then_to_the_counted_labels_in_document_order():
    assert tie_break_order(CLINICAL)[:4] == ("invented", "harmful", "misleading", "speculative")
    votes = [{"label": label, "hallucinated": True, "kind": "knowledge_error"} for label in ("substitution", "conflation")]
    assert decide(votes, 1, label_order=tie_break_order(FACE4RAG)).label == "conflation"
    unhallucinated = [{"label": label, "hallucinated": False, "kind": "factual"} for label in ("faithful", "irrelevant")]
    # Without the keyword: the built-in document's order, where irrelevant (outside every evaluation view) comes
    # last although the document lists it first.
    assert decide(unhallucinated, 3).label == "faithful"
