"""The pre-labeler on a protocol with multiple, scale and text steps (issue 42; the shipped HalluDetect example):
the format block says what each value may hold, the parser reads and checks the values (a bad one is a counted
problem, never an exception), the baseline judge answers them, and the vote and the evaluation use them."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotator.domain.protocol.document import load_shipped
from annotator.domain.vocabulary import GoldProvenance, Role
from annotator.gold.models import GoldLabel
from annotator.projects.protocol_services import protocol_set
from autolabel.baseline import judge
from autolabel.evaluation import kind_scores, selectors
from autolabel.labelling import parsing, prompting
from autolabel.labelling.kind_votes import decide_kinds
from autolabel.labelling.pipeline import JobConfig, TurnOutcome, TurnSpec, outcome_predictions
from autolabel.jobs import services
from autolabel.models import AutoLabelJob, Prediction, SampleReply
from tests.autolabel_fixtures import baseline_llm, baseline_server, profile  # noqa: F401
from tests.factories_api import token_client
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, member

HALLUDETECT = load_shipped("halludetect")
REFERENCE = ("Section 12 of the Tenancy Act 2015 gives a tenant three months to contest a rent increase. "
             "The court in Barlow v Price applied section 12 to a commercial lease.")
SENTENCES = [
    "Section 12 of the Tenancy Act gives a tenant three months to contest a rent increase.",
    "The Supreme Court overruled Barlow in 1998 and abolished every appeal for landlords in Scotland.",
]
WALK = ('no <step id="error_types">…</step> <step id="severity">…</step> <step id="justification">…</step>')


def stage1_prompt():
    return prompting.build_messages(1, "", REFERENCE, "Can I contest my rent increase?", list(enumerate(SENTENCES, 1)),
                                    protocol=HALLUDETECT)[1]["content"]


def test_the_format_block_lists_what_each_value_may_hold():
    prompt = stage1_prompt()
    assert f"{WALK} → unsupported (a hallucination)" in prompt
    assert "yes → supported\n" in prompt
    assert ('<step id="error_types">…</step>: a list of 1 to 5 of the answer values fabricated, misattributed, '
            "wrong_citation, outdated_law, misread_holding, separated by spaces, each at most once") in prompt
    assert '<step id="severity">…</step>: one whole number from 1 to 5' in prompt
    assert '<step id="justification">…</step>: a text of at most 2000 characters; not empty' in prompt
    assert "  kind: scale (a whole number from 1 to 5)\n  point 1: cosmetic\n  point 5: outcome-changing" in prompt
    assert parsing.parse_prompt(prompt).allowed == [("yes", "supported"), (WALK, "unsupported (a hallucination)")]


def test_a_contrastive_example_shows_the_value_tags_of_its_walk():
    example = prompting.Example("Barlow was overruled in 1998.", REFERENCE, wrong="supported", right="unsupported")
    block = prompting.examples_block([example], 1, prompting.stages_of(HALLUDETECT))
    assert f"Wrong: yes\nRight: {WALK}\n" in block


def read(reply):
    return parsing.parse_reply(reply, 1, [1, 2], protocol=HALLUDETECT)


def test_values_are_read_checked_and_stored_in_the_tag():
    parsed = read('<s1>yes</s1>\n<s2>no <step id="error_types">wrong_citation, fabricated</step> '
                  '<step id="severity"> 4 </step> <step id="justification">No such ruling in 1998.</step></s2>')
    assert parsed.problems == {}
    reading = parsed.tags[2]
    assert reading.label == "unsupported"
    assert reading.kind_values() == {"error_types": ["fabricated", "wrong_citation"], "severity": 4,
                                     "justification": "No such ruling in 1998."}
    stored = parsing.tag_to_json(reading)
    assert parsing.tag_from_json(stored, 1, HALLUDETECT) == reading
    assert parsing.sample_values(parsed.tags[1]) == {} and parsing.sample_values(None) == {}


@pytest.mark.parametrize("values, problems, kept", [
    ('<step id="error_types">fabricated nonsense</step> <step id="severity">4</step> '
     '<step id="justification">x</step>', {"invalid_value": 1}, {"severity": 4, "justification": "x"}),
    ('<step id="error_types">fabricated fabricated</step> <step id="severity">7</step> '
     '<step id="justification">   </step>', {"invalid_value": 3}, {}),
    ('<step id="error_types">outdated_law</step>', {"missing_value": 2}, {"error_types": ["outdated_law"]}),
    ('<step id="error_types">outdated_law</step> <step id="severity">four</step> <step id="severity">2</step> '
     '<step id="justification">' + "y" * 2001 + "</step>", {"invalid_value": 3}, {"error_types": ["outdated_law"]}),
    ('<step id="error_types"></step> <step id="severity">true</step> <step id="justification">a\x00b</step>',
     {"invalid_value": 3}, {}),
])
def test_a_bad_value_is_a_counted_problem_and_the_label_stands(values, problems, kept):
    parsed = read(f"<s1>yes</s1>\n<s2>no {values}</s2>")
    assert parsed.problems == problems
    assert parsed.tags[2].label == "unsupported" and parsed.tags[2].kind_values() == kept


def test_a_value_off_the_walk_or_a_broken_tag_never_raises():
    parsed = read('<s1>yes <step id="severity">3</step></s1>\n<s2>no <step id="severity">3</s2>')
    assert parsed.tags[1].label == "supported" and parsed.problems["invalid_value"] == 1
    assert 2 not in parsed.tags and parsed.problems["unknown_tag"] == 1  # an open value tag: the walk is unreadable


def test_the_baseline_judge_answers_every_kind_in_the_format():
    prompt = stage1_prompt()
    for seed in range(5):
        reply = judge.answer(prompt, seed)
        parsed = read(reply)
        assert parsed.problems == {}, reply
        assert parsed.tags[1].label == "supported"
        unsupported = parsed.tags[2]
        assert unsupported.label == "unsupported"
        values = unsupported.kind_values()
        assert set(values) == {"error_types", "severity", "justification"}
        assert 1 <= len(values["error_types"]) and 3 <= values["severity"] <= 5  # mostly unsupported: above the middle
        assert values["justification"].startswith("The reference does not mention: Supreme, overruled")
    assert judge.answer(prompt, 3) == judge.answer(prompt, 3)


def test_the_pipeline_keeps_each_samples_values_and_the_vote_takes_the_majority_path():
    spec = TurnSpec(1, 1, REFERENCE, "q", [(1, 11, SENTENCES[0]), (2, 12, SENTENCES[1])])
    replies = ['<s1>yes</s1><s2>no <step id="error_types">fabricated outdated_law</step> <step id="severity">5</step> '
               '<step id="justification">first</step></s2>',
               '<s1>yes</s1><s2>no <step id="error_types">fabricated</step> <step id="severity">2</step> '
               '<step id="justification">second</step></s2>',
               '<s1>yes</s1><s2>no <step id="error_types">fabricated</step> <step id="severity">4</step></s2>',
               '<s1>yes</s1><s2>no <step id="error_types">outdated_law</step> <step id="severity">3</step> '
               '<step id="justification">fourth</step></s2>',
               "<s1>yes</s1><s2>yes</s2>"]
    config = JobConfig(samples=5, threshold=3, use_n=True, stage1_template="", stage2_template="", examples=[],
                       protocol=HALLUDETECT)
    outcome = TurnOutcome(spec)
    for index, reply in enumerate(replies):
        parsed = parsing.parse_reply(reply, 1, [1, 2], protocol=HALLUDETECT)
        outcome.rows.append({"stage": 1, "sample_index": index, "votes": {str(n): parsing.tag_to_json(tag)
                                                                          for n, tag in parsed.tags.items()},
                             "problems": parsed.problems})
    outcome_predictions(spec, config, outcome)
    first, second = outcome.predictions
    assert first["label"] == "supported" and all(vote["values"] == {} for vote in first["sample_votes"])
    assert second["label"] == "unsupported" and second["hallucinated_votes"] == 4
    assert second["sample_votes"][2]["values"] == {"error_types": ["fabricated"], "severity": 4}
    assert outcome.problems == {"missing_value": 1}
    decided = decide_kinds(second["sample_votes"], second["label"], HALLUDETECT, 3)
    # fabricated: 3 of the 4 on the path; outdated_law 2; the median of 5, 2, 4, 3 is 3 (the lower middle).
    assert {step: vote.value for step, vote in decided.items()} == {
        "error_types": ["fabricated"], "severity": 3, "justification": "first"}
    assert decided["severity"].voters == 4 and decided["justification"].voters == 3
    assert decide_kinds(first["sample_votes"], first["label"], HALLUDETECT, 3) == {}


def test_kind_scores_of_a_protocol_against_gold_paths():
    def votes(values, label="unsupported"):
        return [{"label": label, "hallucinated": label == "unsupported", "kind": None, "values": values}] * 3

    path = {"supported": "no", "error_types": ["fabricated"], "severity": 5, "justification": "gold"}
    items = [
        kind_scores.KindItem(path, votes({"error_types": ["fabricated", "outdated_law"], "severity": 4,
                                          "justification": "p"})),
        kind_scores.KindItem({**path, "error_types": ["outdated_law"], "severity": 2},
                             votes({"error_types": ["outdated_law"], "severity": 2, "justification": "p"})),
        kind_scores.KindItem({"supported": "yes"}, votes({}, "supported")),
    ]
    report = {step["step"]: step for step in kind_scores.protocol_kind_scores(HALLUDETECT, items, threshold=2)}
    assert list(report) == ["error_types", "severity", "justification"]
    assert report["error_types"]["answers"]["fabricated"]["f1"] == 1.0
    assert report["error_types"]["answers"]["outdated_law"] == {"precision": 0.5, "recall": 1.0, "f1": round(2 / 3, 4),
                                                                "predicted": 2, "gold": 1, "correct": 1}
    assert report["severity"]["mae"] == 0.5 and report["severity"]["pairs"] == 2
    assert report["justification"] == {"step": "justification", "question": HALLUDETECT.step("justification").question,
                                       "kind": "text", "metric": "not scored (counted)", "pairs": 2, "predicted": 2,
                                       "gold": 2}


def test_a_scale_scored_against_a_constant_rater_has_no_kappa_and_says_why():
    """Issue 50, item 7: quadratic κ is 0 by construction when one side gives one point; it showed 0.000."""
    from annotator.domain.protocol.kinds import scale
    from annotator.domain.protocol.kinds.measures import Pair

    constant = scale.score([Pair(gold, 3) for gold in (1, 4, 5)], 1, 5)
    assert (constant["kappa"], constant["kappa_undefined"]) == (None, "undefined: the pre-labeler gave one value")
    one_gold = scale.score([Pair(2, predicted) for predicted in (1, 3)], 1, 5)
    assert (one_gold["kappa"], one_gold["kappa_undefined"]) == (None, "undefined: gold has one value")
    varied = scale.score([Pair(1, 1), Pair(5, 4), Pair(3, 3)], 1, 5)
    assert varied["kappa"] > 0.8 and varied["kappa_undefined"] == ""


def halludetect_project():
    project = ProjectFactory()
    lead = member(project, Role.LEAD)
    protocol_set(project, HALLUDETECT.document, user=lead)
    project.refresh_from_db()
    dialogue = DialogueFactory(project=project, reference=REFERENCE)
    for _ in range(2):
        TurnFactory(dialogue=dialogue, sentences=SENTENCES, user_message="Can I contest my rent increase?")
    return project, lead


@pytest.mark.django_db
def test_a_job_over_the_baseline_server_stores_the_values_and_the_evaluation_scores_them(profile, client):
    project, lead = halludetect_project()
    job = services.job_create(project=project, profile=profile, samples=5, threshold=3, enqueue=False)
    assert services.job_run(job.pk) == AutoLabelJob.Status.DONE
    job.refresh_from_db()
    assert job.problems == {} and job.abstentions == 0
    stored = SampleReply.objects.filter(job=job, stage=1).first().votes["2"]
    assert stored.startswith('no <step id="error_types">') and '<step id="severity">' in stored
    predictions = {p.sentence.index: p for p in Prediction.objects.filter(job=job).select_related("sentence")}
    assert predictions[0].label == "supported" and predictions[1].label == "unsupported"
    decided = decide_kinds(predictions[1].sample_votes, "unsupported", HALLUDETECT, job.threshold)
    path = {"supported": "no", **{step: vote.value for step, vote in decided.items()}}
    HALLUDETECT.validate(path)  # the voted values make a path the protocol accepts ...
    assert HALLUDETECT.label_of(path) == "unsupported"  # ... and it ends on the voted label
    listed = token_client(lead).get(f"/api/v1/projects/{project.slug}/autolabel-jobs/{job.pk}/predictions/").json()
    by_sentence = {row["sentence"]: row["values"] for row in listed["results"]}
    assert by_sentence[predictions[1].sentence_id] == {step: value for step, value in path.items() if step != "supported"}
    assert by_sentence[predictions[0].sentence_id] == {}

    gold_severity = 5 if path["severity"] != 5 else 4
    for prediction in Prediction.objects.filter(job=job, sentence__index=1):
        GoldLabel.objects.create(sentence=prediction.sentence, label="unsupported", provenance=GoldProvenance.AGREEMENT,
                                 path={**path, "severity": gold_severity})
    for prediction in Prediction.objects.filter(job=job, sentence__index=0):
        GoldLabel.objects.create(sentence=prediction.sentence, label="supported", provenance=GoldProvenance.AGREEMENT,
                                 path={"supported": "yes"})
    report = {step["step"]: step for step in selectors.job_evaluation(job)["kind_steps"]}
    chosen = path["error_types"][0]
    assert report["error_types"]["pairs"] == 2 and report["error_types"]["answers"][chosen]["f1"] == 1.0
    # The voted severity is the same point on both sentences: κ is undefined, and the page says why (issue 50, 7).
    assert report["severity"]["mae"] == abs(gold_severity - path["severity"])
    assert (report["severity"]["kappa"], report["severity"]["kappa_undefined"]) == (
        None, "undefined: the pre-labeler gave one value")
    assert report["justification"]["metric"] == "not scored (counted)"
    printed = StringIO()
    call_command("evaluate_autolabel", "--project", project.slug, "--job", str(job.pk), stdout=printed)
    assert (f"  severity (scale, 2 sentences): MAE {abs(gold_severity - path['severity']):.3f}, quadratic-weighted "
            "kappa undefined: the pre-labeler gave one value") in printed.getvalue()
    assert "  justification (text, 2 sentences): not scored (2 predicted, 2 in gold)" in printed.getvalue()
    client.force_login(lead)
    page = client.get(reverse("autolabel:job_evaluation", args=[project.slug, job.pk]))
    assert page.status_code == 200
    assert b'data-testid="kind-steps"' in page.content and b"quadratic" in page.content
    assert b'<span data-testid="kappa-undefined">undefined: the pre-labeler gave one value</span>' in page.content


@pytest.mark.django_db
def test_the_learned_judge_page_says_it_leaves_the_other_kinds_out(client):
    project, lead = halludetect_project()
    client.force_login(lead)
    page = client.get(reverse("autolabel:learned_judge", args=[project.slug])).content.decode()
    assert "leaves out the steps of other kinds (multiple, scale, text): Which errors does it make?; " in page
    cognibench = ProjectFactory()
    client.force_login(member(cognibench, Role.LEAD))
    assert "kind-steps-left-out" not in client.get(reverse("autolabel:learned_judge", args=[cognibench.slug])).content.decode()
