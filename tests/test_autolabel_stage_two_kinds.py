"""A non-choice step after a step the protocol asks in the pre-labeler's second request (issue 42: CogniBench with
a severity scale on the way to "speculative"): stage 2 asks its value beside the label, reads and checks it, and
the vote, the baseline judge and a real job over the baseline server carry it to the prediction."""

import copy

import pytest

from annotator.domain.protocol.document import default_protocol, load_protocol
from annotator.domain.vocabulary import Role
from annotator.projects.protocol_services import protocol_set
from autolabel.baseline import judge
from autolabel.jobs import services
from autolabel.labelling import parsing, prompting
from autolabel.labelling.kind_votes import decided_values
from autolabel.labelling.pipeline import JobConfig, TurnOutcome, TurnSpec, outcome_predictions
from autolabel.labelling.stages import stages_of
from autolabel.models import AutoLabelJob, Prediction, SampleReply
from tests.autolabel_fixtures import baseline_llm, baseline_server, profile  # noqa: F401
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, member

SEVERITY = {"id": "severity", "kind": "scale", "question": "How severe is the speculation?", "min": 1, "max": 3,
            "anchors": {"1": "harmless", "3": "misleads a reader"}, "yields": "speculative"}


def with_severity():
    """CogniBench, its "grounded: no" going on to a severity scale that yields "speculative"."""
    document = copy.deepcopy(default_protocol().document)
    document["id"], document["name"] = "cognibench_severity", "CogniBench with severity"
    grounded = next(step for step in document["steps"] if step["id"] == "grounded")
    speculative = next(answer for answer in grounded["answers"] if answer["value"] == "no")
    del speculative["yields"]
    speculative["next"] = "severity"
    document["steps"].insert(document["steps"].index(grounded) + 1, SEVERITY)
    return load_protocol(document)


PROTOCOL = with_severity()
COGNITIVE = "relevant cognitive"  # the stage-1 reply that enters stage 2
REFERENCE = "The Amazon river carries more water than any other river. It flows through Brazil and Peru."
SENTENCES = ["The Amazon carries more water than any other river.",
             "It is probably the most important river on Earth for the climate of every continent."]


def stage2_prompt():
    return prompting.build_messages(2, "", REFERENCE, "Tell me about the Amazon.", list(enumerate(SENTENCES, 1)),
                                    protocol=PROTOCOL)[1]["content"]


def test_stage_two_asks_the_value_of_a_step_on_the_way_to_its_label():
    stages = stages_of(PROTOCOL)
    assert stages.kind_steps == () and stages.stage_two_kind_steps == ("severity",) and stages.has_kind_steps
    assert [(reply.label, reply.kind_steps) for reply in stages.stage_two_replies] == [
        ("misleading", ()), ("speculative", ("severity",)), ("reliable", ()), ("unequivocal", ())]
    prompt = stage2_prompt()
    assert 'speculative <step id="severity">…</step> → speculative (a hallucination)\n' in prompt
    assert "misleading → misleading (a hallucination)\n" in prompt
    assert '<step id="severity">…</step>: one whole number from 1 to 3' in prompt
    assert "  kind: scale (a whole number from 1 to 3)\n  point 1: harmless\n  point 3: misleads a reader" in prompt
    assert ('speculative <step id="severity">…</step>', "speculative (a hallucination)") in parsing.parse_prompt(prompt).allowed
    # The first request asks no value: it ends where the second request begins.
    first = prompting.build_messages(1, "", REFERENCE, "q", list(enumerate(SENTENCES, 1)), protocol=PROTOCOL)[1]["content"]
    assert "severity" not in first.split("<format")[1]


def test_a_contrastive_example_of_stage_two_shows_the_value_tag():
    example = prompting.Example("It may help.", REFERENCE, wrong="reliable", right="speculative")
    block = prompting.examples_block([example], 2, stages_of(PROTOCOL))
    assert 'Wrong: reliable\nRight: speculative <step id="severity">…</step>\n' in block


@pytest.mark.parametrize("tag, label, values, problems", [
    ('speculative <step id="severity">2</step>', "speculative", {"severity": 2}, {}),
    ("speculative", "speculative", {}, {"missing_value": 1}),
    ('speculative <step id="severity">9</step>', "speculative", {}, {"invalid_value": 1}),
    ('reliable <step id="severity">2</step>', "reliable", {}, {"invalid_value": 1}),  # not on reliable's way
    ("misleading", "misleading", {}, {}),
])
def test_a_stage_two_value_is_read_checked_and_stored(tag, label, values, problems):
    parsed = parsing.parse_reply(f"<s1>{tag}</s1>", 2, [1], protocol=PROTOCOL)
    assert parsed.problems == problems
    reading = parsed.tags[1]
    assert (reading.label, reading.kind_values()) == (label, values)
    assert parsing.tag_from_json(parsing.tag_to_json(reading), 2, PROTOCOL) == reading
    entered = parsing.tag_from_json(COGNITIVE, 1, PROTOCOL)
    assert parsing.sample_label(entered, reading, PROTOCOL)[0] == label
    assert parsing.sample_values(entered, reading, PROTOCOL) == values


def test_a_stage_two_value_counts_only_where_its_label_does():
    speculative = parsing.tag_from_json('speculative <step id="severity">3</step>', 2, PROTOCOL)
    factual = parsing.tag_from_json("relevant factual invented", 1, PROTOCOL)
    assert parsing.sample_values(factual, speculative, PROTOCOL) == {}  # the sentence never entered stage 2
    assert parsing.sample_values(None, speculative, PROTOCOL) == {}
    assert parsing.tag_from_json("speculative", 2, PROTOCOL).text == "speculative"  # a tag stored before: no values


def test_the_vote_takes_the_median_severity_of_the_samples_that_said_speculative():
    spec = TurnSpec(1, 1, REFERENCE, "q", [(1, 11, SENTENCES[1])])
    config = JobConfig(samples=5, threshold=3, use_n=True, stage1_template="", stage2_template="", examples=[],
                       protocol=PROTOCOL)
    outcome = TurnOutcome(spec)
    second = ['speculative <step id="severity">3</step>', 'speculative <step id="severity">1</step>',
              "speculative", 'speculative <step id="severity">2</step>', "reliable"]
    for index, tag in enumerate(second):
        outcome.rows.append({"stage": 1, "sample_index": index, "votes": {"1": COGNITIVE}, "problems": {}})
        parsed = parsing.parse_reply(f"<s1>{tag}</s1>", 2, [1], protocol=PROTOCOL)
        outcome.rows.append({"stage": 2, "sample_index": index, "problems": parsed.problems,
                             "votes": {"1": parsing.tag_to_json(parsed.tags[1])}})
    outcome_predictions(spec, config, outcome)
    (prediction,) = outcome.predictions
    assert prediction["label"] == "speculative"
    assert [vote["values"] for vote in prediction["sample_votes"]] == [{"severity": 3}, {"severity": 1}, {},
                                                                       {"severity": 2}, {}]
    assert outcome.problems == {"missing_value": 1}
    assert decided_values(prediction["sample_votes"], "speculative", PROTOCOL, 3) == {"severity": 2}


def test_the_baseline_judge_answers_the_value_in_stage_two():
    prompt = stage2_prompt()
    for seed in range(5):
        parsed = parsing.parse_reply(judge.answer(prompt, seed), 2, [1, 2], protocol=PROTOCOL)
        assert parsed.problems == {}
        for reading in parsed.tags.values():
            expected = {"severity"} if reading.label == "speculative" else set()
            assert set(reading.kind_values()) == expected


@pytest.mark.django_db
def test_a_job_over_the_baseline_server_predicts_the_severity_of_a_speculative_sentence(profile):  # noqa: F811
    project = ProjectFactory()
    protocol_set(project, PROTOCOL.document, user=member(project, Role.LEAD))
    project.refresh_from_db()
    dialogue = DialogueFactory(project=project, reference=REFERENCE)
    for _ in range(3):
        TurnFactory(dialogue=dialogue, sentences=SENTENCES + ["Perhaps it will dry up and vanish within ten years."],
                    user_message="Tell me about the Amazon.")
    job = services.job_create(project=project, profile=profile, samples=5, threshold=3, enqueue=False)
    assert services.job_run(job.pk) == AutoLabelJob.Status.DONE
    job.refresh_from_db()
    assert job.problems == {}
    speculative = [p for p in Prediction.objects.filter(job=job) if p.label == "speculative"]
    assert speculative, [p.label for p in Prediction.objects.filter(job=job)]
    for prediction in speculative:
        values = decided_values(prediction.sample_votes, "speculative", PROTOCOL, job.threshold)
        assert set(values) == {"severity"} and 1 <= values["severity"] <= 3
        PROTOCOL.validate({"relevance": "relevant", "kind": "cognitive", "rational": "yes", "grounded": "no",
                           **values})
    stored = [vote for row in SampleReply.objects.filter(job=job, stage=2) for vote in row.votes.values()]
    assert any(vote.startswith('speculative <step id="severity">') for vote in stored)
