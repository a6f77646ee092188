"""The learned judge through its entry points: manage.py judge_train, its page, the API, a job with it; refused
for another protocol version."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotator.domain.protocol.document import load_shipped
from annotator.domain.vocabulary import Role
from annotator.projects.protocol_services import protocol_set
from autolabel.jobs import services
from autolabel.jobs.services import learned_job_create
from autolabel.learned.store import JudgeRefused
from autolabel.learned.training import judge_train_create, judge_train_run
from autolabel.models import AutoLabelJob, LearnedJudge, Prediction
from tests.factories import ProjectFactory, member
from tests.factories_api import token_client
from tests.factories_autolabel import gold_turn
from tests.factories_learned import trainable_project

pytestmark = pytest.mark.django_db


def judge_labels(project):
    return load_shipped("cognibench").labels


def train(project):
    return judge_train_run(judge_train_create(project, enqueue=False).pk, folds=3)


def test_judge_train_prints_cross_validated_figures_and_the_learning_curve_as_json():
    project = trainable_project()
    out = StringIO()
    call_command("judge_train", "--project", project.slug, "--learning-curve", "--json", stdout=out)
    report = json.loads(out.getvalue())
    cross = report["cross_validated"]
    assert (cross["folds"], cross["sentences"], cross["turns"]) == (5, 30, 6)
    assert set(cross["views"]) == {"any_hallucination", "factual", "cognitive"}
    assert 0 <= cross["macro_f1"] <= 1
    assert [point["share"] for point in report["learning_curve"]] == [0.2, 0.4, 0.6, 0.8, 1.0]
    assert report["learning_curve"][-1]["macro_f1"] == cross["macro_f1"]
    # Each figure with its 95 % interval over the turns (the out-of-fold predictions held, the turns drawn again).
    low, high = cross["intervals"]["macro_f1"]
    assert low <= cross["macro_f1"] <= high  # this gold is separable: [1.0, 1.0] (a spread: test_autolabel_calibration)
    assert set(cross["intervals"]["views"]) == set(cross["views"])
    for view, (low, high) in cross["intervals"]["views"].items():
        assert low <= cross["views"][view] <= high
    # The model's shape was chosen by grouped cross-validation on the gold among the fixed candidates.
    assert report["options"] == {"strategy": "choose", "learning_curve": True}
    assert [(c["strategy"], c["regularization"]) for c in report["candidates"]] == [
        ("steps", 1.0), ("flat", 1.0), ("flat", 0.3), ("verdict", 1.0)]
    best = max(report["candidates"], key=lambda c: c["macro_f1"])  # ties: the first listed
    assert report["chosen"] == {"strategy": best["strategy"], "regularization": best["regularization"]}
    judge = LearnedJudge.objects.get(pk=report["id"])
    assert judge.status == LearnedJudge.Status.DONE and judge.gold_sentences == 30 and judge.model_file
    assert judge.protocol_version_id is None and judge.figures["cross_validated"] == cross


def test_judge_train_in_words_and_its_refusals():
    project = trainable_project(turns=3)
    out = StringIO()
    call_command("judge_train", "--project", project.slug, "--folds", "3", stdout=out)
    assert "30 gold sentences" not in out.getvalue() and "15 gold sentences in 3 turns" in out.getvalue()
    assert "3-fold cross-validation grouped by turn" in out.getvalue()
    assert "learning curve: not computed (--learning-curve)" in out.getvalue()  # not asked for: not computed
    assert "learning_curve" not in LearnedJudge.objects.get(project=project).figures
    with pytest.raises(CommandError, match="no project 'nowhere'"):
        call_command("judge_train", "--project", "nowhere")
    lonely = ProjectFactory()
    gold_turn(lonely)
    with pytest.raises(CommandError, match="at least 2"):
        call_command("judge_train", "--project", lonely.slug)
    assert LearnedJudge.objects.get(project=lonely).status == LearnedJudge.Status.FAILED


def test_a_judge_is_refused_for_another_protocol_version_than_the_one_it_learned():
    project = trainable_project(turns=3)
    lead = member(project, Role.LEAD)
    judge = train(project)
    job = learned_job_create(project=project, judge=judge, enqueue=False)  # built-in protocol: accepted
    # The project moves on to version 1 of its own: the same labels, reworded (a judge learned the old wording).
    reworded = {**load_shipped("cognibench").document, "name": "CogniBench, our wording"}
    protocol_set(project, reworded, user=lead, label_mapping={label: label for label in judge_labels(project)})
    project.refresh_from_db()
    with pytest.raises(JudgeRefused, match="learned protocol version built-in"):
        learned_job_create(project=project, judge=judge, enqueue=False)
    response = token_client(lead).post(f"/api/v1/projects/{project.slug}/learned-judge/label/", {"judge": judge.pk},
                                       format="json")
    assert response.status_code == 400 and "protocol version" in response.json()["errors"]["judge"][0]
    # A job made for the other version cannot smuggle it in: the worker refuses it and says why.
    AutoLabelJob.objects.filter(pk=job.pk).update(protocol_version=project.protocol_version)
    assert services.job_run(job.pk) == AutoLabelJob.Status.FAILED
    job.refresh_from_db()
    assert "learned protocol version built-in" in job.error and not Prediction.objects.filter(job=job).exists()


def test_a_judge_trained_on_other_features_is_refused_with_the_reason():
    project = trainable_project(turns=3)
    judge = train(project)
    learned_job_create(project=project, judge=judge, enqueue=False)  # trained here: accepted
    figures = {key: value for key, value in judge.figures.items() if key != "feature_version"}
    LearnedJudge.objects.filter(pk=judge.pk).update(figures=figures)  # as a judge trained before versions were kept
    judge.refresh_from_db()
    with pytest.raises(JudgeRefused, match="trained on features of version 1; .* computes version 2: train it again"):
        learned_job_create(project=project, judge=judge, enqueue=False)


def test_the_page_trains_through_a_task_and_polls_until_the_judge_is_done(client, django_capture_on_commit_callbacks):
    project = trainable_project(turns=3)
    client.force_login(member(project, Role.LEAD))
    page = reverse("autolabel:learned_judge", args=[project.slug])
    assert "No learned judge yet" in client.get(page).content.decode()
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.post(reverse("autolabel:learned_judge_train", args=[project.slug]),
                               {"learning_curve": "on"})
    assert response.status_code == 302 and len(callbacks) == 1  # the task is sent after commit, nothing fitted here
    judge = LearnedJudge.objects.get(project=project)
    assert judge.status == LearnedJudge.Status.QUEUED and not judge.model_file
    polled = client.get(page, {"partial": "status"}, HTTP_HX_REQUEST="true").content.decode()
    assert "every 2s" in polled and "Queued" in polled
    judge_train_run(judge.pk, folds=3)  # what the worker's task does
    done = client.get(page).content.decode()
    assert "every 2s" not in done and 'data-testid="judge-figures"' in done and "<svg" in done
    assert "css/gold.css" in done  # the charts' styles (axes, grid, 11 px labels): without them "1000" was cut off
    assert "3-fold cross-validated, grouped by turn" in done
    judge.refresh_from_db()
    low, high = judge.figures["cross_validated"]["intervals"]["macro_f1"]
    assert f'data-testid="judge-macro-interval">[{low}, {high}]</td>' in done and "95 % interval over the turns" in done
    # The headline: the mean and sd over the group splits, the first split's figure and interval beside it.
    splits = judge.figures["cross_validated"]["splits"]
    assert splits["count"] == 3 and "mean ± sd over 3 group splits" in done
    assert f'data-testid="judge-macro-mean"><strong>{splits["mean"]} ± {splits["sd"]}</strong>' in done
    download = reverse("autolabel:learned_judge_predictions", args=[project.slug, judge.pk])
    assert f'href="{download}"' in done
    assert len(b"".join(client.get(download).streaming_content).splitlines()) == 3 * judge.gold_sentences
    # A judge trained before the intervals were kept shows its figures without them, not an error.
    figures = {**judge.figures, "cross_validated": {key: value for key, value in judge.figures["cross_validated"].items()
                                                    if key != "intervals"}}
    LearnedJudge.objects.filter(pk=judge.pk).update(figures=figures)
    older = client.get(page).content.decode()
    assert 'data-testid="judge-macro-interval">–</td>' in older and 'data-testid="judge-figures"' in older
    # A judge trained without its learning curve (or before it was optional) says so, and draws no chart.
    LearnedJudge.objects.filter(pk=judge.pk).update(
        figures={key: value for key, value in judge.figures.items() if key != "learning_curve"})
    uncurved = client.get(page).content.decode()
    assert "Learning curve: not computed" in uncurved and "<svg" not in uncurved
    assert 'data-testid="judge-figures"' in uncurved and "not computed" not in done
    LearnedJudge.objects.filter(pk=judge.pk).update(figures=judge.figures)
    assert 'data-testid="judge-chosen"' in done and "chosen by grouped cross-validation on the gold" in done
    assert "one classifier per step of the walk (C = 1.0): " in done and "one classifier over the labels (C = 0.3): " in done
    annotator = member(project, Role.ANNOTATOR)
    client.force_login(annotator)
    assert client.get(page).status_code == 404 and client.get(download).status_code == 404


def test_the_api_trains_reports_and_refuses_a_second_training_or_an_unknown_judge():
    project = trainable_project(turns=3)
    api = token_client(member(project, Role.LEAD))
    base = f"/api/v1/projects/{project.slug}/learned-judge/"
    assert api.get(base).status_code == 404
    started = api.post(base + "train/")
    assert started.status_code == 202 and started.json()["status"] == "queued"
    assert api.post(base + "train/").status_code == 409
    judge_train_run(started.json()["id"], folds=3)
    report = api.get(base).json()
    assert report["status"] == "done" and report["cross_validated"]["sentences"] == 15
    for body in ({"judge": 999999}, {"judge": "x"}, {}):
        refused = api.post(base + "label/", body, format="json")
        assert refused.status_code == 400 and "judge" in refused.json()["errors"]
    labelled = api.post(base + "label/", {"judge": report["id"]}, format="json")
    assert labelled.status_code == 201 and labelled.json()["profile"] is None
    assert labelled.json()["samples"] == 20


def test_a_learned_judges_job_is_scored_and_compared_with_another_job_on_the_same_gold(client):
    project = trainable_project(turns=3)
    lead = member(project, Role.LEAD)
    judge = train(project)
    first, second = (learned_job_create(project=project, judge=judge, enqueue=False) for _ in range(2))
    for job in (first, second):
        assert services.job_run(job.pk) == AutoLabelJob.Status.DONE
    client.force_login(lead)
    evaluation = client.get(reverse("autolabel:job_evaluation", args=[project.slug, first.pk])).content.decode()
    assert "≥ 10 (job)" in evaluation and f'value="{second.pk}"' in evaluation  # offered for the comparison
    compared = client.get(reverse("autolabel:job_comparison", args=[project.slug, first.pk]), {"other": second.pk})
    assert compared.status_code == 200
    report = compared.context["report"]
    assert report["turns"] == 3 and report["views"]["cognibench_overall"]["difference"]["f1"] == 0.0  # same judge


def test_a_lead_may_fix_the_models_shape_instead_of_the_choosing(client):
    project = trainable_project(turns=3)
    lead = member(project, Role.LEAD)
    out = StringIO()
    call_command("judge_train", "--project", project.slug, "--folds", "3", "--shape", "steps", "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["options"] == {"strategy": "steps", "regularization": 1.0}
    assert report["chosen"] is None and report["candidates"] == []  # nothing was chosen
    assert LearnedJudge.objects.get(pk=report["id"]).status == LearnedJudge.Status.DONE

    client.force_login(lead)
    page = client.get(reverse("autolabel:learned_judge", args=[project.slug])).content.decode()
    assert '<option value="choose" selected>Choose on the gold (recommended)</option>' in page
    client.post(reverse("autolabel:learned_judge_train", args=[project.slug]), {"shape": "flat"})
    assert LearnedJudge.objects.latest("pk").options == {"strategy": "flat", "regularization": 1.0}
    refused = client.post(reverse("autolabel:learned_judge_train", args=[project.slug]), {"shape": "forest"})
    assert refused.status_code == 400 and LearnedJudge.objects.count() == 2

    LearnedJudge.objects.filter(status=LearnedJudge.Status.QUEUED).delete()
    api = token_client(lead)
    bad = api.post(f"/api/v1/projects/{project.slug}/learned-judge/train/", {"shape": "forest"}, format="json")
    assert bad.status_code == 400 and "shape" in bad.json()["errors"]
    queued = api.post(f"/api/v1/projects/{project.slug}/learned-judge/train/", {"shape": "steps"}, format="json")
    assert queued.status_code == 202 and queued.json()["options"] == {"strategy": "steps", "regularization": 1.0}


def test_the_learning_curve_is_computed_only_when_asked_for(client):
    """The curve costs four more cross-validations (most of a training): the page's box, the API's field and the
    command's --learning-curve ask for it; without them the judge has none and its page says so."""
    project = trainable_project(turns=3)
    lead = member(project, Role.LEAD)
    client.force_login(lead)
    page = client.get(reverse("autolabel:learned_judge", args=[project.slug])).content.decode()
    assert 'name="learning_curve"' in page and 'name="learning_curve" checked' not in page  # off by default
    client.post(reverse("autolabel:learned_judge_train", args=[project.slug]), {"shape": "steps"})
    plain = judge_train_run(LearnedJudge.objects.latest("pk").pk, folds=3, splits=1)
    assert plain.options == {"strategy": "steps", "regularization": 1.0} and "learning_curve" not in plain.figures
    page = reverse("autolabel:learned_judge", args=[project.slug])
    assert "Learning curve: not computed" in client.get(page).content.decode()
    api = token_client(lead)
    base = f"/api/v1/projects/{project.slug}/learned-judge/"
    assert api.get(base).json()["learning_curve"] == []
    bad = api.post(base + "train/", {"learning_curve": "perhaps"}, format="json")
    assert bad.status_code == 400 and "learning_curve" in bad.json()["errors"]
    asked = api.post(base + "train/", {"shape": "steps", "learning_curve": True}, format="json")
    assert asked.status_code == 202 and asked.json()["options"]["learning_curve"] is True
    curved = judge_train_run(asked.json()["id"], folds=3, splits=1)
    assert [point["share"] for point in curved.figures["learning_curve"]] == [0.2, 0.4, 0.6, 0.8, 1.0]
    assert curved.figures["cross_validated"]["macro_f1"] == plain.figures["cross_validated"]["macro_f1"]  # the same
    assert "<svg" in client.get(page).content.decode()
