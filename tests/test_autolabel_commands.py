"""The commands a lead runs: autolabel, evaluate_autolabel; the baseline's F1 on the CogniBench sample."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotator.models import Project, Sentence
from autolabel.models import AutoLabelJob, Prediction
from tests.autolabel_fixtures import baseline_llm, baseline_server, profile  # noqa: F401
from tests.conftest import SHARED_DATA
from tests.factories import ProjectFactory
from tests.factories_autolabel import gold_turn

pytestmark = pytest.mark.django_db


def call(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_autolabel_command_runs_a_job_and_evaluate_reports_hand_checkable_scores(profile):
    project = ProjectFactory()
    turn = gold_turn(project)
    out = call("autolabel", "--project", project.slug, "--turns", str(turn.pk), "--samples", "5", "--threshold", "3",
               "--profile", profile.name, "--inline")
    job = AutoLabelJob.objects.get()
    assert f"Job {job.pk} done: 1/1 turns" in out
    report = json.loads(call("evaluate_autolabel", "--project", project.slug, "--job", str(job.pk), "--json"))
    assert report["sentences"] == 5 and sorted(report["thresholds"]) == ["1", "2", "3", "4", "5"]
    # Recompute overall recall at threshold 3 by hand from the stored predictions.
    gold_words = predicted_right = 0
    for p in Prediction.objects.filter(job=job).select_related("sentence__gold"):
        words = len(p.sentence.text.split())
        if p.sentence.gold.label in {"invented", "misleading", "speculative"}:
            gold_words += words
            if sum(1 for v in p.sample_votes if v["hallucinated"]) >= 3:
                predicted_right += words
    assert report["thresholds"]["3"]["overall"]["gold_words"] == gold_words
    assert report["thresholds"]["3"]["overall"]["correct_words"] == predicted_right
    text = call("evaluate_autolabel", "--project", project.slug, "--job", str(job.pk))
    assert "overall" in text and "Cognitive 4-way accuracy" in text


def test_autolabel_command_errors_are_clear(profile):
    project = ProjectFactory()
    with pytest.raises(CommandError, match="no project"):
        call("autolabel", "--project", "nope")
    with pytest.raises(CommandError, match="no turns"):
        call("autolabel", "--project", project.slug, "--profile", profile.name, "--inline")
    with pytest.raises(CommandError, match="no job"):
        call("evaluate_autolabel", "--project", project.slug, "--job", "999")


def test_baseline_on_the_cognibench_sample(profile, capsys):
    sample = SHARED_DATA / "cognibench-sample"
    call("import_cognibench", str(sample / "dialogues.json"), str(sample / "labels.json"), "--project", "cognibench",
         "--create")
    project = Project.objects.get(slug="cognibench")
    assert Sentence.objects.filter(turn__dialogue__project=project, gold__isnull=False).count() > 200
    call("autolabel", "--project", project.slug, "--profile", profile.name, "--samples", "5", "--threshold", "3", "--inline")
    job = AutoLabelJob.objects.get(project=project)
    assert job.status == "done" and job.abstentions == 0
    report = json.loads(call("evaluate_autolabel", "--project", project.slug, "--job", str(job.pk), "--json"))
    with capsys.disabled():
        print("\nBaseline on the CogniBench sample:", json.dumps({t: {v: s["f1"] for v, s in views.items()}
                                                                 for t, views in report["thresholds"].items()}))
    overall = report["thresholds"]["3"]["overall"]
    assert overall["gold_words"] > 0 and overall["f1"] is not None
