"""The evaluation and the faithfulness report follow the project's protocol (issue 24, item 4).

CogniBench: the figures on a fixed dataset equal those the CogniBench-only code gave (pinned before the
change, ``tests/cognibench_evaluation_dataset.py``). Face4RAG and CogniBench clinical: a few sentences, gold
and pre-labels made through the services and the prediction write path, and every figure by hand.
"""

import json

import pytest
from django.urls import reverse

from annotator.domain.protocol.document import default_protocol, load_shipped
from annotator.domain.vocabulary import DrawStrategy, GoldProvenance, Role
from annotator.models import GoldLabel
from annotator.projects.protocols import protocol_for
from autolabel.evaluation import selectors
from autolabel.faithfulness.report import faithfulness_report
from autolabel.models import AutoLabelJob, LLMProfile, Prediction, PromptVersion
from tests.cognibench_evaluation_dataset import (
    PINNED, evaluation_figures, faithfulness_figures, faithfulness_job,
)
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, member
from tests.factories_faithfulness import draw

# Keys the reports gained with the protocol: the views' names, the macro, the confusion matrices by family
# (CogniBench's cognitive one stays under "cognitive", and the factual one is also under "factual").
NEW_EVALUATION_KEYS = {"views", "macro", "confusion", "factual"}


def _same(before, after, path="", f1_drift=False):
    """Every figure of ``before`` is in ``after`` with the same value (``after`` may have more keys). With
    ``f1_drift``, an F1 may differ by the last rounded place: the pinned code took F1 from precision and recall
    already rounded to 4 places, today's from the counts (issue 39, item 6; checked exactly below)."""
    if isinstance(before, dict):
        differences = []
        for key, value in before.items():
            if key not in after:
                differences.append(f"{path}/{key}: missing")
            else:
                differences += _same(value, after[key], f"{path}/{key}", f1_drift)
        return differences
    if f1_drift and path.rsplit("/", 1)[-1].endswith("f1") and before is not None and after is not None:
        return [] if abs(before - after) <= 1.00001e-4 else [f"{path}: {before!r} became {after!r}"]
    return [] if before == after else [f"{path}: {before!r} became {after!r}"]


def _f1_of_counts(scores):
    return round(2 * scores["correct_words"] / (scores["predicted_words"] + scores["gold_words"]), 4) \
        if scores["gold_words"] else None


def test_cognibench_evaluation_calibration_and_comparison_are_unchanged():
    pinned = json.loads(PINNED.read_text())
    now = evaluation_figures(default_protocol())
    for part in ("evaluation", "calibration", "comparison"):
        assert _same(pinned[part], now[part], part, f1_drift=True) == []
    # Each F1 is the counts' own, rounded once; the macro the mean of the unrounded F1s, rounded once.
    for scores in [*now["evaluation"]["thresholds"].values(), *now["evaluation"]["baselines"].values()]:
        for view in ("any_hallucination", "factual", "cognitive"):
            assert scores[view]["f1"] == _f1_of_counts(scores[view])
        exact = [2 * scores[v]["correct_words"] / (scores[v]["predicted_words"] + scores[v]["gold_words"])
                 for v in ("factual", "cognitive")]
        assert scores["cognibench_overall"]["f1"] == round(sum(exact) / 2, 4)
    assert now["evaluation"]["thresholds"]["5"]["factual"]["f1"] == 0.3602  # 0.3601 from rounded P and R
    assert set(now["evaluation"]) - set(pinned["evaluation"]) == NEW_EVALUATION_KEYS
    assert now["evaluation"]["confusion"]["cognitive"] == pinned["evaluation"]["cognitive"] | {
        "family": "cognitive", "name": "Cognitive"}
    # Not a dataset that hides the cases: labels lost at stage 2, every threshold, both jobs differ.
    assert pinned["evaluation"]["cognitive"]["matrix"]["speculative"]["no label"] > 0
    assert pinned["comparison"]["views"]["cognibench_overall"]["difference"]["f1"] != 0


@pytest.mark.django_db
def test_cognibench_faithfulness_figures_are_unchanged():
    pinned = json.loads(PINNED.read_text())["faithfulness"]
    now = faithfulness_figures(faithfulness_job(ProjectFactory(slug="pinned")))
    pinned["job"] = now["job"]  # a database id
    assert _same(pinned, now) == []
    assert set(now) - set(pinned) == {"measures"}


# --- Face4RAG and CogniBench clinical, by hand ---------------------------------------------------------------

def _vote(protocol, label, kind):
    return {"label": label, "hallucinated": label in protocol.hallucination_labels, "kind": kind}


def _lost(kind):
    """A sample that answered stage one (hallucinated, ``kind``) and lost its stage-two reply: no label."""
    return {"label": None, "hallucinated": True, "kind": kind}


def _job(name, turns, samples=3, threshold=2):
    """A project on the shipped protocol ``name`` with a finished job: ``turns`` are lists of
    (words, gold label, the samples' votes). Predictions go through the model's write path, as the job's worker
    records them; gold as the gold services store it (the protocol's path to the label)."""
    from annotator.projects.protocol_services import protocol_set
    from autolabel.labelling.stages import tie_break_order
    from autolabel.labelling.voting import decide

    project = ProjectFactory(slug=f"eval-{name.replace('_', '-')}")
    lead = member(project, Role.LEAD, username=f"lead-{name}")
    protocol_set(project, load_shipped(name).document, user=lead)
    project.refresh_from_db()
    protocol = protocol_for(project)
    assert protocol.id == load_shipped(name).id
    prompt = PromptVersion.objects.create(project=project, version=1)
    profile = LLMProfile.objects.create(name=f"offline-{name}", base_url="http://127.0.0.1:9/v1")
    job = AutoLabelJob.objects.create(project=project, profile=profile, prompt_version=prompt, model="m",
                                      samples=samples, threshold=threshold, status=AutoLabelJob.Status.DONE,
                                      total_turns=len(turns), done_turns=len(turns),
                                      protocol_version=project.protocol_version)  # as job_create records it
    created = []
    for sentences in turns:
        dialogue = DialogueFactory(project=project, generator_model="gen")
        turn = TurnFactory(dialogue=dialogue, sentences=[" ".join(["word"] * words) for words, _, _ in sentences])
        job.job_turns.create(turn=turn, done=True)
        for sentence, (_, gold, votes) in zip(turn.sentences.order_by("index"), sentences):
            GoldLabel.objects.create(sentence=sentence, label=gold, path=protocol.path_for_label(gold),
                                     provenance=GoldProvenance.AGREEMENT)
            decided = decide(votes, threshold, label_order=tie_break_order(protocol))
            Prediction.objects.create(job=job, sentence=sentence, label=decided.label,
                                      hallucinated=decided.hallucinated, hallucinated_votes=decided.hallucinated_votes,
                                      abstentions=decided.abstentions, stage1_kind=decided.kind,
                                      label_votes=decided.label_votes, sample_votes=votes)
        created.append(turn)
    draw(job, created, strategy=DrawStrategy.RANDOM)
    return project, lead, job, protocol


# A pre-label's kind: the family its samples' stage one led into (what jobs record), or the stage-one answer
# itself (what they recorded before): both read the same.
KINDS = {"family": {"knowledge": "knowledge_error", "logic": "logical_fallacy"}, "answer": {}}


@pytest.fixture(params=sorted(KINDS))
def face4rag(db, request):
    p = load_shipped("face4rag")
    kinds = KINDS[request.param]

    def v(label, n, kind):
        return [_vote(p, label, kinds.get(kind, kind))] * n

    def _lost(kind):
        return {"label": None, "hallucinated": True, "kind": kinds.get(kind, kind)}

    return _job("face4rag", [
        [(10, "contradiction", v("contradiction", 3, "knowledge")),  # found, right label
         (4, "consistent", v("substitution", 2, "knowledge") + v("consistent", 1, None)),  # a false alarm
         (6, "overgeneralization", [_lost("logic")] * 2 + v("consistent", 1, None))],  # a fallacy, no label
        [(8, "hallucination", v("consistent", 3, None)),  # missed
         (5, "causal_confusion", v("inclusion", 2, "logic") + v("causal_confusion", 1, "logic")),  # wrong fallacy
         (7, "consistent", v("consistent", 3, None))],
    ])


def test_face4rag_views_macro_and_baselines_by_hand(face4rag):
    project, lead, job, protocol = face4rag
    report = selectors.job_evaluation(job)
    at2 = report["thresholds"][2]
    assert [view["id"] for view in report["views"]] == ["any_error", "hallucination_error", "knowledge_error",
                                                        "logical_fallacy"]
    # Any error (pooled): gold 10 + 6 + 8 + 5 = 29 words, predicted 10 + 4 + 6 + 5 = 25, right 21.
    assert (at2["any_error"]["precision"], at2["any_error"]["recall"]) == (0.84, round(21 / 29, 4))
    assert at2["overall"] == at2["any_error"]  # the pooled view's old name, whatever the protocol
    # Hallucination errors: the one (8 words) is missed and none is predicted: no precision, F1 0.
    assert at2["hallucination_error"] | {} == {"precision": None, "recall": 0.0, "f1": 0.0, "correct_words": 0,
                                               "predicted_words": 0, "gold_words": 8}
    # Knowledge errors: 10 of 10 found, 4 false: P 10/14, F1 0.8333. Logical fallacies: the unlabelled
    # "logic" sentence counts (6) and a wrong fallacy is still a fallacy (5): P = R = 1.
    assert (at2["knowledge_error"]["precision"], at2["knowledge_error"]["f1"]) == (0.7143, 0.8333)
    assert at2["logical_fallacy"]["f1"] == 1.0
    assert at2["face4rag_macro"] == {"f1": round((0.0 + 0.8333 + 1.0) / 3, 4), "hallucination_error_f1": 0.0,
                                     "knowledge_error_f1": 0.8333, "logical_fallacy_f1": 1.0}
    # Flag every sentence: all 40 words predicted in every view.
    every = report["baselines"]["flag_every_sentence"]
    assert (every["knowledge_error"]["precision"], every["logical_fallacy"]["precision"]) == (0.25, 0.275)
    assert report["baselines"]["flag_none"]["face4rag_macro"]["f1"] == 0.0
    fallacies = report["confusion"]["logical_fallacy"]
    assert fallacies["matrix"]["overgeneralization"]["no label"] == 1
    assert fallacies["matrix"]["causal_confusion"]["inclusion"] == 1
    assert (fallacies["total"], fallacies["correct"], fallacies["accuracy_when_logical_fallacy"]) == (2, 0, 0.0)
    assert report["confusion"]["hallucination_error"]["matrix"]["hallucination"]["not hallucination error"] == 1
    assert report["confusion"]["knowledge_error"]["accuracy"] == 1.0


def test_face4rag_calibration_binary_over_the_hallucination_group_and_n_way_over_its_labels(face4rag):
    project, lead, job, protocol = face4rag
    calibration = selectors.job_calibration(job)
    binary, label = calibration["binary"], calibration["label"]
    # Vote shares of "hallucinated": 1, 2/3 (wrong), 2/3, 0 (wrong: a missed hallucination), 1, 0.
    assert (binary["n"], binary["accuracy"]) == (6, round(4 / 6, 4))
    assert binary["brier"] == round(((1 / 3) ** 2 + (2 / 3) ** 2 + 1) / 6, 4)
    assert binary["ece"] == round(2 / 6 * abs(0.5 - 2 / 3) + 4 / 6 * abs(0.75 - 1), 4)
    # The label: right on the contradiction and the consistent sentence only.
    assert (label["n"], label["accuracy"]) == (6, round(2 / 6, 4))


def test_face4rag_faithfulness_measures_from_its_families(face4rag):
    project, lead, job, protocol = face4rag
    report, _ = faithfulness_report(job)
    # Three families: each one's share (of the sentences in a family; issue 39, item 2). Each family is made only
    # of hallucination labels: its hallucination rate would be 1 by construction, and is left out (item 4).
    assert [m["id"] for m in report["measures"]] == [
        "hallucination_rate", "hallucination_error_share", "knowledge_error_share", "logical_fallacy_share"]
    assert report["measures"][2]["title"] == ("Share of knowledge error statements (of the sentences in a family: "
                                              "hallucination error, knowledge error, logical fallacy)")
    overall = report["overall"]
    # Pre-labels: contradiction, substitution, (no label, hallucinated, logic), consistent, inclusion, consistent.
    auto = {measure: overall[measure]["auto"] for measure in (m["id"] for m in report["measures"])}
    assert auto == {"hallucination_rate": round(4 / 6, 4), "hallucination_error_share": 0.0,
                    "knowledge_error_share": 0.5, "logical_fallacy_share": 0.5}
    # Gold: contradiction, consistent, overgeneralization, hallucination, causal confusion, consistent.
    gold = {measure: overall[measure]["gold_only"] for measure in auto}
    assert gold == {"hallucination_rate": round(4 / 6, 4), "hallucination_error_share": 0.25,
                    "knowledge_error_share": 0.25, "logical_fallacy_share": 0.5}


def test_face4rag_pages_command_and_api_name_the_documents_views(client, face4rag):
    from io import StringIO

    from django.core.management import call_command
    from rest_framework.test import APIClient

    project, lead, job, protocol = face4rag
    client.force_login(lead)
    html = client.get(reverse("autolabel:job_evaluation", args=[project.slug, job.pk])).content.decode()
    assert "Face4RAG macro (three kinds of error) F1" in html and "Knowledge errors" in html
    assert "Logical fallacy labels at threshold 2" in html and "Causal confusion" in html
    # A family of one label: its "1-way accuracy" was that label's recall under another name (issue 50, item 7).
    assert "1-way accuracy" not in html and "4-way accuracy" in html
    assert ("Recall of Hallucination error: <strong>0.0</strong> (0 of the 1 sentences whose gold is Hallucination error "
            "were predicted Hallucination error).") in html
    assert "CogniBench overall" not in html and "Cognitive" not in html
    faithfulness = client.get(reverse("autolabel:job_faithfulness", args=[project.slug, job.pk])).content.decode()
    assert "Share of logical fallacy statements (of the sentences in a family: " in faithfulness
    out = StringIO()
    call_command("evaluate_autolabel", "--project", project.slug, "--job", str(job.pk), stdout=out)
    assert "Face4RAG macro (three kinds of error) = mean of the F1 of hallucination errors, knowledge errors, " \
           "logical fallacies." in out.getvalue()
    api = APIClient()
    api.force_authenticate(lead)
    body = api.get(reverse("api:autolabel-job-evaluation", kwargs={"slug": project.slug, "pk": job.pk})).json()
    assert body["macro"]["id"] == "face4rag_macro" and body["thresholds"]["2"]["logical_fallacy"]["f1"] == 1.0
    assert body["protocol"]["id"] == protocol.id


@pytest.fixture
def clinical(db):
    p = load_shipped("cognibench_clinical")

    def v(label, n):
        kind = {"irrelevant": None}.get(label, "cognitive" if label in ("misleading", "speculative", "reliable",
                                                                         "unequivocal") else "factual")
        return [_vote(p, label, kind)] * n

    return _job("cognibench_clinical", [
        [(10, "harmful", v("harmful", 2) + v("invented", 1)),
         (6, "invented", v("harmful", 2) + v("faithful", 1)),  # an invention called harmful
         (8, "speculative", v("speculative", 3))],
        [(4, "faithful", v("faithful", 3)),
         (5, "misleading", [_lost("cognitive")] * 2 + v("reliable", 1)),  # cognitive, hallucinated, no label
         (3, "harmful", v("faithful", 3))],  # a harmful invention missed
    ])


def test_clinical_views_the_harm_view_and_the_cognibench_macro_by_hand(clinical):
    project, lead, job, protocol = clinical
    at2 = selectors.job_evaluation(job)["thresholds"][2]
    # Any hallucination: gold 10 + 6 + 8 + 5 + 3 = 32 words, predicted and right 29.
    assert (at2["any_hallucination"]["precision"], at2["any_hallucination"]["recall"]) == (1.0, round(29 / 32, 4))
    # Factual (invented, harmless or harmful): gold 19 words, 16 found, nothing false.
    factual_f1 = round(2 * 1.0 * round(16 / 19, 4) / (1.0 + round(16 / 19, 4)), 4)
    assert (at2["factual"]["precision"], at2["factual"]["recall"], at2["factual"]["f1"]) == (
        1.0, round(16 / 19, 4), factual_f1)
    # Cognitive: the speculative sentence and the unlabelled cognitive one: all 13 words.
    assert at2["cognitive"]["f1"] == 1.0
    # Clinical harm: gold 10 + 3, predicted 10 + 6 (the harmless invention), right 10.
    assert (at2["clinical_harm"]["precision"], at2["clinical_harm"]["recall"]) == (0.625, round(10 / 13, 4))
    assert at2["cognibench_overall"] == {"f1": round((factual_f1 + 1.0) / 2, 4), "factual_f1": factual_f1,
                                         "cognitive_f1": 1.0}


def test_clinical_faithfulness_by_hand(clinical):
    project, lead, job, protocol = clinical
    report, _ = faithfulness_report(job)
    overall = report["overall"]
    assert [m["id"] for m in report["measures"]] == ["hallucination_rate", "cognitive_share",
                                                     "factual_hallucination_rate", "cognitive_hallucination_rate"]
    assert report["measures"][2]["title"] == "Invented, harmless or invented, harmful (factual sentences)"
    # Pre-labels: harmful, harmful, speculative, faithful, (cognitive, hallucinated), faithful.
    assert [overall[m]["auto"] for m in ("hallucination_rate", "cognitive_share", "factual_hallucination_rate",
                                         "cognitive_hallucination_rate")] == [round(4 / 6, 4), round(2 / 6, 4), 0.5, 1.0]
    # Gold: harmful, invented, speculative, faithful, misleading, harmful.
    assert [overall[m]["gold_only"] for m in ("hallucination_rate", "cognitive_share", "factual_hallucination_rate",
                                              "cognitive_hallucination_rate")] == [round(5 / 6, 4), round(2 / 6, 4), 0.75, 1.0]
