"""The learned judge's out-of-fold predictions exported (issue 47 item 8): `judge_train --oof FILE` and the API's
`learned-judge/out-of-fold/`; its figures recomputed from the file alone by independent counting, and its
headline the mean and sd over several group splits (item 7)."""

import json
import statistics
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotator.domain.vocabulary import Role
from tests.factories import AssignmentFactory, DialogueFactory, member
from tests.factories_api import token_client
from tests.factories_autolabel import REFERENCE, gold_turn
from tests.factories_learned import trainable_project

pytestmark = pytest.mark.django_db

# CogniBench's views (docs/autolabel.md): what the evaluation counts, written out here independently of its code.
VIEWS = {"factual": {"invented"}, "cognitive": {"misleading", "speculative"},
         "any_hallucination": {"invented", "misleading", "speculative"}}


def noisy_project():
    """Learnable gold with turns whose gold contradicts what the others teach: figures between 0 and 1."""
    project = trainable_project(turns=6)
    dialogue = DialogueFactory(project=project, reference=REFERENCE)
    for n in range(3):
        gold_turn(project, dialogue=dialogue, sentences=[
            ("It flows for 2850 kilometres through ten countries.", "invented"),
            (f"The explorer Marek{n} mapped {4300 + n} kilometres of it in {1790 + n}.", "speculative"),
            ("Therefore it is probably the most important trade route in the whole world.", "faithful"),
        ])
    return project


def f1_by_words(rows, positive):
    """2·correct words / (predicted words + gold words), the sentences weighed by their words."""
    correct = sum(r["words"] for r in rows if r["gold"] in positive and r["predicted"] in positive)
    predicted = sum(r["words"] for r in rows if r["predicted"] in positive)
    gold = sum(r["words"] for r in rows if r["gold"] in positive)
    return 2 * correct / (predicted + gold)


def test_the_exported_predictions_recompute_the_judges_figures_and_its_headline_over_the_splits(tmp_path):
    project = noisy_project()
    out, path = StringIO(), tmp_path / "oof.jsonl"
    call_command("judge_train", "--project", project.slug, "--folds", "3", "--json", "--oof", str(path), stdout=out)
    report = json.loads(out.getvalue())
    cross = report["cross_validated"]
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert report["out_of_fold"] == {"rows": len(rows), "splits": 3} and len(rows) == 3 * cross["sentences"] == 3 * 39
    first = [r for r in rows if r["split"] == 0]
    assert {r["fold"] for r in first} == {0, 1, 2} and len({r["sentence_id"] for r in first}) == 39
    assert set(first[0]) >= {"turn_id", "dialogue", "record", "sentence_index", "probabilities", "hallucinated"}
    for row in rows:  # the rule, from the probabilities alone (rounded to 6 places: a margin of 1e-5)
        hallucinated = sum(p for label, p in row["probabilities"].items() if label in VIEWS["any_hallucination"])
        if abs(hallucinated - 0.5) > 1e-5:
            assert row["hallucinated"] is (hallucinated > 0.5)
            side = {label: p for label, p in row["probabilities"].items()
                    if (label in VIEWS["any_hallucination"]) is row["hallucinated"]}
            best = max(side.values())
            if sorted(side.values())[-2:][0] < best - 1e-5:
                assert row["predicted"] == max(side, key=side.get)
    # The figures of the first split, recomputed by plain counting.
    for view, positive in VIEWS.items():
        assert round(f1_by_words(first, positive), 4) == cross["views"][view]
    macro = [(f1_by_words([r for r in rows if r["split"] == split], VIEWS["factual"])
              + f1_by_words([r for r in rows if r["split"] == split], VIEWS["cognitive"])) / 2 for split in range(3)]
    assert round(macro[0], 4) == cross["macro_f1"] and 0 < macro[0] < 1  # not a trivially separable gold
    # The headline: the mean and sd of the three splits' macro.
    splits = cross["splits"]
    assert splits["count"] == 3 and splits["macro_f1"] == [round(m, 4) for m in macro]
    assert splits["mean"] == round(statistics.mean(macro), 4) and splits["sd"] == round(statistics.stdev(macro), 4)

    # The command in words leads with the headline, the first split's interval beside it.
    words = StringIO()
    call_command("judge_train", "--project", project.slug, "--folds", "3", "--splits", "2", stdout=words)
    assert "over 2 group splits; the first split" in words.getvalue()


def test_the_api_gives_the_predictions_to_leads_only_and_a_blind_lead_is_refused(client):
    project = trainable_project(turns=3)
    lead = member(project, Role.LEAD)
    api = token_client(lead)
    url = f"/api/v1/projects/{project.slug}/learned-judge/out-of-fold/"
    assert api.get(url).status_code == 404  # no judge yet
    call_command("judge_train", "--project", project.slug, "--folds", "3", "--splits", "2", stdout=StringIO())
    report = api.get(f"/api/v1/projects/{project.slug}/learned-judge/").json()
    response = api.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "application/x-ndjson"
    assert "attachment" in response["Content-Disposition"]
    rows = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert len(rows) == report["out_of_fold"]["rows"] == 2 * 15
    assert api.get(url, {"judge": report["id"]}).status_code == 200
    assert api.get(url, {"judge": report["id"] + 1}).status_code == 404
    assert api.get(url, {"judge": "x"}).status_code == 400
    assert token_client(member(project, Role.ANNOTATOR)).get(url).status_code in (403, 404)
    client.force_login(lead)
    page = reverse("autolabel:learned_judge_predictions", args=[project.slug, report["id"]])
    assert client.get(page).status_code == 200
    assert client.get(reverse("autolabel:learned_judge_predictions", args=[project.slug, report["id"] + 1])
                      ).status_code == 404
    AssignmentFactory(turn=project.dialogues.first().turns.first(), annotator=lead)  # an unsubmitted slot
    assert api.get(url).status_code == 403
    refused = client.get(page)  # as every export: back to the project page with the reason
    assert refused.status_code == 302 and not hasattr(refused, "streaming_content")


def test_a_lead_may_train_the_verdict_shape():
    project = trainable_project(turns=3)
    out = StringIO()
    call_command("judge_train", "--project", project.slug, "--folds", "3", "--splits", "1", "--shape", "verdict",
                 "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["status"] == "done" and report["options"] == {"strategy": "verdict", "regularization": 1.0}
    assert report["cross_validated"]["splits"]["count"] == 1 and report["cross_validated"]["splits"]["sd"] == 0.0


def test_a_judges_job_labels_every_sentence_by_the_rule_on_its_probabilities():
    from annotator.projects.protocols import protocol_for
    from autolabel.jobs import services
    from autolabel.jobs.services import learned_job_create
    from autolabel.learned.data import gold_set
    from autolabel.learned.decision import judge_decision
    from autolabel.learned.store import judge_model_load
    from autolabel.models import AutoLabelJob, LearnedJudge, Prediction

    project = noisy_project()
    call_command("judge_train", "--project", project.slug, "--folds", "3", "--splits", "1", stdout=StringIO())
    judge = LearnedJudge.objects.get(project=project)
    job = learned_job_create(project=project, judge=judge, enqueue=False)
    assert services.job_run(job.pk) == AutoLabelJob.Status.DONE
    model = judge_model_load(judge, project, project.protocol_version_id)
    gold = gold_set(project)
    protocol = protocol_for(project)
    predicted = dict(Prediction.objects.filter(job=job).values_list("sentence_id", "label"))
    confidence = dict(Prediction.objects.filter(job=job).values_list("sentence_id", "confidence"))
    for sentence_id, row in zip(gold.sentence_ids, model.predict_proba(gold.examples)):
        rule = judge_decision(row, model.labels, protocol)
        assert (predicted[sentence_id], confidence[sentence_id]) == (rule.label, rule.confidence)
