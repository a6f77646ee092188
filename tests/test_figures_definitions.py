"""Figures that mean one thing under every protocol (issue 39): one definition each, on a RAGTruth-like protocol
as on CogniBench's (docs/autolabel.md, *Definitions*).

The RAGTruth-like protocol (``tests/data/ragtruth_like.json``: claim? → supported? → conflict or baseless →
evident or subtle) has two families made only of hallucination labels, no view of every hallucination label, and
one view whose scope leaves out the sentences without a claim. Its job's figures are counted by hand below.
"""

import csv
import io
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotator.domain.protocol.document import COGNIBENCH, load_protocol
from annotator.domain.vocabulary import DrawStrategy, GoldProvenance, Role
from annotator.models import GoldLabel, Project
from annotator.projects.protocol_services import protocol_set
from annotator.projects.protocols import protocol_for
from autolabel.faithfulness.estimators import estimate_ratio
from autolabel.models import AutoLabelJob, LLMProfile, Prediction, PromptVersion
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, member
from tests.factories_faithfulness import draw, finished_job

pytestmark = pytest.mark.django_db

RAGTRUTH_LIKE = json.loads((Path(__file__).parent / "data" / "ragtruth_like.json").read_text())
KIND = {"evident_conflict": "conflict", "subtle_conflict": "conflict", "evident_baseless": "baseless",
        "subtle_baseless": "baseless"}


def _votes(label, n):
    protocol = load_protocol(RAGTRUTH_LIKE)
    return [{"label": label, "hallucinated": label in protocol.hallucination_labels, "kind": KIND.get(label)}] * n


# (words, gold, the three samples' votes) per sentence, per turn; the job votes at threshold 2.
TURNS = [
    [(10, "evident_conflict", _votes("evident_conflict", 3)),  # found
     (4, "supported", _votes("evident_baseless", 2) + _votes("supported", 1)),  # a false alarm on a claim
     (6, "no_claim", _votes("evident_conflict", 2) + _votes("no_claim", 1))],  # a false alarm on no claim
    [(8, "subtle_baseless", _votes("subtle_baseless", 3)),
     (5, "supported", _votes("supported", 3)),
     (7, "subtle_conflict", _votes("supported", 3))],  # missed
]


def _ragtruth_job(slug="ragtruth", drawn=True):
    """A project on the RAGTruth-like protocol with a finished job of TURNS: predictions as the worker records
    them, gold as the gold services store it, every turn drawn at random for the job (unless not ``drawn``)."""
    from autolabel.labelling.stages import tie_break_order
    from autolabel.labelling.voting import decide

    project = ProjectFactory(slug=slug)
    lead = member(project, Role.LEAD, username=f"lead-{slug}")
    protocol_set(project, RAGTRUTH_LIKE, user=lead)
    project.refresh_from_db()
    protocol = protocol_for(project)
    prompt = PromptVersion.objects.create(project=project, version=1)
    profile = LLMProfile.objects.create(name=f"offline-{slug}", base_url="http://127.0.0.1:9/v1")
    job = AutoLabelJob.objects.create(project=project, profile=profile, prompt_version=prompt, model="m", samples=3,
                                      threshold=2, status=AutoLabelJob.Status.DONE, total_turns=len(TURNS),
                                      done_turns=len(TURNS), protocol_version=project.protocol_version)
    created = []
    for sentences in TURNS:
        dialogue = DialogueFactory(project=project, generator_model="gen")
        turn = TurnFactory(dialogue=dialogue, sentences=[" ".join(["word"] * words) for words, _, _ in sentences])
        job.job_turns.create(turn=turn, done=True)
        for sentence, (_, gold, votes) in zip(turn.sentences.order_by("index"), sentences):
            GoldLabel.objects.create(sentence=sentence, label=gold, path=protocol.path_for_label(gold),
                                     provenance=GoldProvenance.AGREEMENT)
            decided = decide(votes, 2, label_order=tie_break_order(protocol))
            Prediction.objects.create(job=job, sentence=sentence, label=decided.label,
                                      hallucinated=decided.hallucinated, hallucinated_votes=decided.hallucinated_votes,
                                      abstentions=decided.abstentions, stage1_kind=decided.kind,
                                      label_votes=decided.label_votes, sample_votes=votes)
        created.append(turn)
    if drawn:
        draw(job, created, strategy=DrawStrategy.RANDOM)
    return project, lead, job


def _evaluation_json(project, job):
    out = StringIO()
    call_command("evaluate_autolabel", "--project", project.slug, "--job", str(job.pk), "--json", stdout=out)
    return json.loads(out.getvalue())


# --- item 1: a view's scope is honoured, and said beside its figures ------------------------------------------

def test_a_views_scope_is_honoured_and_the_page_says_so(client):
    project, lead, job = _ragtruth_job()
    at2 = _evaluation_json(project, job)["thresholds"]["2"]
    # Evident hallucinations among claims: gold 10 words (the evident conflict); predicted 10 + 4 (the supported
    # sentence flagged evident). The sentence without a claim flagged evident (6 words) is outside the view's
    # scope: no false alarm there. Without the scope precision would be 10 / 20.
    assert (at2["evident"]["predicted_words"], at2["evident"]["precision"]) == (14, round(10 / 14, 4))
    assert at2["evident"]["f1"] == round(20 / 24, 4)
    # The views without a scope count every sentence: the conflict view's false alarm on no claim is one.
    assert (at2["conflict"]["predicted_words"], at2["conflict"]["f1"]) == (16, round(20 / 33, 4))
    client.force_login(lead)
    html = client.get(reverse("autolabel:job_evaluation", args=[project.slug, job.pk])).content.decode()
    assert html.count('data-testid="narrower-scope"') == 1
    assert ("Evident hallucinations among claims: counts only the sentences whose gold is Supported, Evident "
            "conflict, Subtle conflict, Evident baseless, Subtle baseless") in html


def test_cognibench_table_3_counts_a_detection_whatever_the_golds_kind(tmp_path):
    """CogniBench's document declares no scope (its Table 3: precision over every sentence flagged), and the
    document shipped before, whose scopes were never applied, reads as today's: a project holding it keeps its
    figures, and importing or setting it on a project that follows today's is the same protocol."""
    before = COGNIBENCH.document  # the document as shipped before issue 39: today's with its scopes
    scopes = {"factual": ["faithful", "invented"],
              "cognitive": ["misleading", "speculative", "reliable", "unequivocal"]}
    for view in before["groups"]["evaluation"]["views"]:
        view["scope"] = scopes.get(view["id"], list(COGNIBENCH.labels))
    assert load_protocol(before) == COGNIBENCH
    assert all(set(view.scope) == set(COGNIBENCH.labels) for view in COGNIBENCH.evaluation_views)
    project = ProjectFactory(slug="cb-old")
    lead = member(project, Role.LEAD, username="lead-cb-old")
    assert protocol_set(project, before, user=lead) is None  # the same protocol: nothing to change
    from autolabel.evaluation.scores import Item, detection_scores

    factual = {"label": "invented", "hallucinated": True, "kind": "factual"}
    # An invented sentence found (5 words), and a cognitive (reliable) sentence flagged invented (5 words).
    scores = detection_scores(COGNIBENCH, [Item(5, "invented", [factual] * 3), Item(5, "reliable", [factual] * 3)], 2)
    assert (scores["factual"]["precision"], scores["factual"]["f1"]) == (0.5, round(2 * 5 / 15, 4))


# --- items 2 and 4: one definition of a family's share; no measured-looking rate of 1 -------------------------

def test_a_familys_share_is_one_number_on_both_pages_and_an_all_hallucination_family_has_no_rate(client):
    from autolabel.faithfulness.report import faithfulness_report

    project, lead, job = _ragtruth_job()
    report, _ = faithfulness_report(job)
    # Gold: two conflicts and one baseless claim are the sentences in a family; the share is over them (1/3), not
    # over every sentence (1/6).
    assert report["overall"]["baseless_share"]["gold_only"] == round(1 / 3, 4)
    measures = {m["id"]: m["title"] for m in report["measures"]}
    assert measures["baseless_share"] == "Share of baseless statements (of the sentences in a family: conflict, baseless)"
    # Both families are made only of hallucination labels: a rate of 1 by construction is no figure.
    assert set(measures) == {"hallucination_rate", "baseless_share"}
    client.force_login(lead)
    rows = list(csv.reader(io.StringIO(client.get(f"/p/{project.slug}/reports/model.csv").content.decode())))
    header, row = rows[0], rows[1]
    assert "Baseless share (of sentences in a family)" in header
    assert float(row[header.index("Baseless share (of sentences in a family)")]) == pytest.approx(1 / 3)
    assert float(row[header.index("Hallucination rate (all sentences)")]) == pytest.approx(3 / 6)
    assert report["overall"]["hallucination_rate"]["gold_only"] == 0.5
    assert not any("Conflict hallucination rate" in column or "Baseless hallucination rate" in column
                   for column in header)


# --- item 3: an interval needs two drawn turns with a non-zero denominator -------------------------------------

def test_one_drawn_sentence_gives_an_estimate_without_an_interval(client):
    project = ProjectFactory(slug="one-cognitive")
    lead = member(project, Role.LEAD, username="lead-one")
    # Two drawn turns; only the first holds a cognitive sentence (speculative, a hallucination).
    job, turns = finished_job(project, [("gen", [("faithful", "faithful"), ("speculative", "speculative")]),
                                        ("gen", [("faithful", "faithful"), ("invented", "invented")])])
    draw(job, turns)
    from autolabel.faithfulness.report import faithfulness_report

    report, _ = faithfulness_report(job)
    cognitive = report["overall"]["cognitive_hallucination_rate"]
    assert cognitive["gold_only"] == 1.0 and cognitive["gold_only_ci95"] is None  # was [1.0, 1.0]
    assert cognitive["corrected_ci95"] is None
    assert report["overall"]["hallucination_rate"]["gold_only_ci95"] is not None  # two turns: an interval
    client.force_login(lead)
    html = client.get(reverse("autolabel:job_faithfulness", args=[project.slug, job.pk])).content.decode()
    assert "too few drawn turns" in html and "100.0 – 100.0 %" not in html
    # The estimator itself: one of two turns with a denominator.
    assert estimate_ratio([1, 0], [1, 0], [True, True], [1, 0], [1, 0]).gold_only_ci95 is None


# --- item 5: the pooled view exists on any protocol -------------------------------------------------------------

def test_overall_is_derived_from_the_hallucination_group_when_no_view_covers_it():
    project, lead, job = _ragtruth_job()
    report = _evaluation_json(project, job)
    at2 = report["thresholds"]["2"]
    # Any hallucination: gold 10 + 8 + 7 = 25 words; predicted 10 + 4 + 6 + 8 = 28; right 18.
    assert at2["overall"]["precision"] == round(18 / 28, 4) and at2["overall"]["recall"] == 0.72
    assert at2["overall"]["f1"] == round(36 / 53, 4)
    assert {"id": "overall", "name": "any hallucination (pooled, from the hallucination group)",
            "scope": None} in report["views"]
    assert report["baselines"]["flag_every_sentence"]["overall"]["recall"] == 1.0
    assert at2["ragtruth_macro"]["f1"] == round((20 / 33 + 16 / 20) / 2, 4)


# --- items 7 and 8: an export carries the stage-1 answer, counts its turns, and round-trips pre-labels -----------

def test_an_export_carries_the_stage_one_answer_and_round_trips_pre_labels(tmp_path):
    # Not drawn: which draw sent a turn to people is the project's own record, and a round trip does not keep it
    # (docs/jsonl-format.md says what it keeps).
    project, lead, job = _ragtruth_job(drawn=False)
    # A pre-label whose samples stopped before a label: it counts through its stage-1 answer (baseless).
    prediction = Prediction.objects.filter(job=job, label="supported").first()
    Prediction.objects.filter(pk=prediction.pk).update(label="", hallucinated=True, stage1_kind="baseless")
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    out = StringIO()
    call_command("export_gold", "--project", project.slug, "--format", "jsonl", "--out", str(first), stdout=out)
    lines = first.read_text().splitlines()
    assert len(lines) == 3 and lines[0].startswith('{"protocol":')
    assert "wrote 2 turns" in out.getvalue()  # the header is no turn
    exported = [s["prediction"] for line in lines[1:] for s in json.loads(line)["sentences"]]
    assert {p["stage1_kind"] for p in exported if p["label"] == ""} == {"baseless"}
    assert {p["stage1_kind"] for p in exported if p["label"] == "evident_conflict"} == {"conflict"}
    ProjectFactory(slug="copy")
    call_command("import_jsonl", "--project", "copy", str(first), stdout=StringIO(), stderr=StringIO())
    call_command("export_gold", "--project", "copy", "--format", "jsonl", "--out", str(second), stdout=StringIO())
    assert second.read_bytes() == first.read_bytes()
    assert protocol_for(Project.objects.get(slug="copy")) == protocol_for(project)


# --- item 9: per-step agreement after a version change; the version the evaluation's figures are in ------------

def _shared_degree_version() -> dict:
    """Version 2 of the RAGTruth-like protocol: one "evident or subtle?" step after conflict and after baseless,
    so its labels evident and subtle are each reached by two paths (through conflict and through baseless)."""
    document = json.loads(json.dumps(RAGTRUTH_LIKE))
    document["version"] = 2
    document["modes"] = ["sequential"]  # a label reached by two paths cannot be picked at once
    nature = next(step for step in document["steps"] if step["id"] == "nature")
    for answer in nature["answers"]:
        answer["next"] = "degree"
    document["steps"] = [step for step in document["steps"] if not step["id"].endswith("_degree")] + [
        {"id": "degree", "question": "Evident or subtle?", "definition": "", "guideline": "", "answers": [
            {"value": "evident", "label": "Evident", "key": "1", "yn": "", "yields": "evident"},
            {"value": "subtle", "label": "Subtle", "key": "2", "yn": "", "yields": "subtle"}]}]
    document["labels"] = document["labels"][:2] + [
        {"id": "evident", "name": "Evident", "definition": "", "examples": [], "colour": "#c62828", "key": "3"},
        {"id": "subtle", "name": "Subtle", "definition": "", "examples": [], "colour": "#ef6c00", "key": "4"}]
    document["groups"] = {"hallucination": ["evident", "subtle"], "families": [],
                          "evaluation": {"views": [{"id": "any", "name": "any", "positive": ["evident", "subtle"]}]},
                          "agreement_steps": ["claim", "supported", "nature", "degree"], "stage_two_steps": ["degree"],
                          "severity": [], "error_type": []}
    return document


V2_MAPPING = {"no_claim": "no_claim", "supported": "supported", "evident_conflict": "evident",
              "evident_baseless": "evident", "subtle_conflict": "subtle", "subtle_baseless": "subtle"}


def test_per_step_agreement_says_how_many_sentences_a_step_left_out_after_a_version_change(client):
    from tests.factories_workspace import annotators, numbered_sentences, project_with_turns
    from tests.test_protocol_versions_counted import label_turn

    project, _ = project_with_turns(1, sentences=numbered_sentences(4), overlap=2)
    lead = member(project, Role.LEAD, username="lead-steps")
    protocol_set(project, RAGTRUTH_LIKE, user=lead)
    first, second = annotators(project, 2)
    label_turn(project, first, ["evident_conflict", "evident_baseless", "subtle_conflict", "supported"], RAGTRUTH_LIKE)
    label_turn(project, second, ["evident_conflict", "evident_conflict", "subtle_conflict", "supported"], RAGTRUTH_LIKE)
    client.force_login(lead)

    def nature_row():
        rows = list(csv.reader(io.StringIO(client.get(f"/p/{project.slug}/reports/agreement.csv").content.decode())))
        header = rows[0]
        row = next(r for r in rows[1:] if "Conflict or baseless?" in r[0])
        return int(row[header.index("Units")]), int(row[header.index("Left out (label reached by several paths)")])

    assert nature_row() == (3, 0)  # version 1: the three unsupported claims, each label on one path
    project.refresh_from_db()
    protocol_set(project, _shared_degree_version(), user=lead, label_mapping=V2_MAPPING)
    # Version 2: the carried labels (evident, evident, subtle) are each reached through conflict and through
    # baseless, so they give no answer to "Conflict or baseless?": the step compares none, and says it left 3 out.
    assert nature_row() == (0, 3)


def test_the_evaluation_page_names_the_version_its_figures_are_in(client):
    project, lead, job = _ragtruth_job(drawn=False)
    project.refresh_from_db()
    protocol_set(project, _shared_degree_version(), user=lead, label_mapping=V2_MAPPING)
    client.force_login(lead)
    html = client.get(reverse("autolabel:job_evaluation", args=[project.slug, job.pk])).content.decode()
    assert (f"RAGTruth-like (held-out style) protocol v1 (project version 1, the version job #{job.pk} labelled "
            "with); the project now follows RAGTruth-like (held-out style) v2 (project version 2), whose figures "
            "these are not.") in html
    assert "RAGTruth-like macro (conflict, baseless)" in html  # version 1's macro, named as version 1's
