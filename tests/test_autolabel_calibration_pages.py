"""The evaluation page's new figures, the comparison page, the command and the API, through their entry points."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotator.models import Assignment, SentenceAnnotation
from annotator.domain.vocabulary import Role
from autolabel.evaluation import selectors as calibration_selectors
from autolabel.models import AutoLabelJob, LLMProfile, Prediction, PromptVersion
from tests.factories import ProjectFactory, member
from tests.factories_autolabel import gold_turn

pytestmark = pytest.mark.django_db
HALLUCINATED = {"invented", "misleading", "speculative"}


def vote(label):
    kind = {"faithful": "factual", "invented": "factual", "irrelevant": None}.get(label, "cognitive")
    return {"label": label, "hallucinated": label in HALLUCINATED, "kind": kind}


def finished_job(project, votes_for, version=1, status=AutoLabelJob.Status.DONE):
    """A job with one prediction per gold sentence; ``votes_for(gold label)`` gives its five votes."""
    prompt, _ = PromptVersion.objects.get_or_create(project=project, version=version)
    profile, _ = LLMProfile.objects.get_or_create(name="offline", defaults={"base_url": "http://127.0.0.1:9/v1"})
    job = AutoLabelJob.objects.create(project=project, profile=profile, prompt_version=prompt, model="m", samples=5,
                                      threshold=3, status=status, finished_at=timezone.now())
    from annotator.models import Sentence

    for sentence in Sentence.objects.filter(turn__dialogue__project=project, gold__isnull=False).select_related("gold"):
        votes = votes_for(sentence.gold.label)
        hallucinated = sum(v["hallucinated"] for v in votes)
        labels = [v["label"] for v in votes]
        label = max(set(labels), key=labels.count)
        Prediction.objects.create(job=job, sentence=sentence, label=label, hallucinated=hallucinated >= 3,
                                  hallucinated_votes=hallucinated, sample_votes=votes)
    return job


def mostly_right(gold):
    return [vote(gold)] * 4 + [vote("faithful" if gold != "faithful" else "invented")]


def always_faithful(gold):
    return [vote("faithful")] * 5


@pytest.fixture
def world():
    project = ProjectFactory()
    turns = [gold_turn(project) for _ in range(4)]
    lead = member(project, Role.LEAD, username="lead-lena")
    # Two annotators submitted the first turn: one agrees with gold, one calls everything faithful.
    for name, label_of in (("ann-ada", lambda gold: gold), ("ann-bo", lambda gold: "faithful")):
        annotator = member(project, Role.ANNOTATOR, username=name)
        assignment = Assignment.objects.create(project=project, turn=turns[0], annotator=annotator,
                                               status=Assignment.Status.SUBMITTED)
        for sentence in turns[0].sentences.select_related("gold"):
            SentenceAnnotation.objects.create(assignment=assignment, sentence=sentence, label=label_of(sentence.gold.label))
    good = finished_job(project, mostly_right, version=1)
    lazy = finished_job(project, always_faithful, version=2)
    return project, lead, good, lazy


def page(client, user, name, project, job, query=""):
    client.force_login(user)
    return client.get(reverse(f"autolabel:{name}", args=[project.slug, job.pk]) + query)


def test_evaluation_page_names_both_scores_shows_baselines_calibration_and_the_rater_table(client, world):
    project, lead, good, lazy = world
    response = page(client, lead, "job_evaluation", project, good)
    html = response.content.decode()
    assert response.status_code == 200
    report = calibration_selectors.job_evaluation(good)
    assert "CogniBench overall (macro)" in html and "Any hallucination (pooled)" in html
    assert f"<strong>{report['thresholds'][3]['cognibench_overall']['f1']}</strong>" in html
    assert "Baseline: flag every sentence" in html and "Baseline: flag none" in html
    calibration = calibration_selectors.job_calibration(good)
    assert calibration["binary"]["n"] == 20
    assert "Calibration" in html and html.count('<svg class="chart"') == 2
    assert f"ECE <strong>{calibration['binary']['ece']}</strong>" in html
    assert "The pre-labeler as a rater" in html and "κ with ann-ada" in html and "κ with ann-bo" in html
    # Compare form: the other finished job of the project, not this one.
    assert f'<option value="{lazy.pk}"' in html and f'<option value="{good.pk}"' not in html


def test_rater_table_numbers(world):
    project, lead, good, lazy = world
    rater = calibration_selectors.job_rater_agreement(good)
    label = rater["variables"]["label"]
    # The good job: label = gold on all 20 sentences; ann-ada agrees with gold on her 5.
    assert label["kappa_gold"] == {"kappa": 1.0, "n": 20}
    assert label["kappa_annotators"]["ann-ada"] == {"kappa": 1.0, "n": 5}
    assert label["alpha_humans"]["n"] == 5 and label["alpha_with_prelabeler"]["n"] == 5
    assert rater["annotators"] == ["ann-ada", "ann-bo"]


def test_comparison_page_paired_difference(client, world):
    project, lead, good, lazy = world
    response = page(client, lead, "job_comparison", project, lazy, f"?other={good.pk}")
    assert response.status_code == 200
    html = response.content.decode()
    report = calibration_selectors.job_comparison(lazy, good)
    assert (report["turns"], report["sentences"]) == (4, 20)
    factual = report["views"]["factual"]
    # A (always faithful) finds no invented word: F1 0; B finds them all.
    assert factual["a"]["f1"] == 0.0 and factual["b"]["f1"] == 1.0 and factual["difference"]["f1"] == 1.0
    assert "Compared on <strong>4</strong> turns, <strong>20</strong>" in html
    assert "CogniBench overall (macro)" in html and f"[{factual['difference']['ci'][0]}, {factual['difference']['ci'][1]}]" in html


@pytest.mark.parametrize("query", ["", "?other=", "?other=abc", "?other=-1", "?other=99999999999999999999999",
                                   "?other=1e309", "?other=%00", "SELF", "RUNNING", "ELSEWHERE"])
def test_comparison_refuses_malformed_or_foreign_jobs_with_400(client, world, query):
    project, lead, good, lazy = world
    if query == "SELF":
        query = f"?other={good.pk}"
    elif query == "RUNNING":
        query = f"?other={finished_job(project, always_faithful, status=AutoLabelJob.Status.RUNNING).pk}"
    elif query == "ELSEWHERE":
        other_project = ProjectFactory()
        gold_turn(other_project)
        query = f"?other={finished_job(other_project, always_faithful).pk}"
    response = page(client, lead, "job_comparison", project, good, query)
    assert response.status_code == 400
    if "%00" not in query:  # a NUL is refused before the view, by the middleware, with its own message
        assert "Compare with job:" in response.content.decode()  # the form's message, naming the field


def test_comparison_is_for_leads_of_the_project_only(client, world):
    project, lead, good, lazy = world
    annotator = member(project, Role.ANNOTATOR)
    assert page(client, annotator, "job_comparison", project, good, f"?other={lazy.pk}").status_code == 404
    url = reverse("autolabel:job_comparison", args=[project.slug, 999999999999999999]) + f"?other={lazy.pk}"
    assert client.get(url).status_code == 404
    client.force_login(lead)
    assert client.post(reverse("autolabel:job_comparison", args=[project.slug, good.pk])).status_code == 405


def test_a_lead_blind_on_a_turn_sees_neither_the_rater_table_nor_the_comparison(client, world):
    """Both pages read every annotator's labels and all gold: a lead with an unsubmitted slot is sent back."""
    project, lead, good, lazy = world
    turn = Prediction.objects.filter(job=good).first().sentence.turn
    Assignment.objects.create(project=project, turn=turn, annotator=lead, status=Assignment.Status.ASSIGNED)
    for name, query in (("job_evaluation", ""), ("job_comparison", f"?other={lazy.pk}")):
        response = page(client, lead, name, project, good, query)
        assert response.status_code == 302 and response["Location"] == reverse("project_detail", args=[project.slug])
    api = APIClient()
    api.force_authenticate(lead)
    url = reverse("api:autolabel-job-evaluation", kwargs={"slug": project.slug, "pk": good.pk})
    assert api.get(url, {"compare": lazy.pk}).status_code == 403


def test_evaluation_figures_are_cached_until_gold_changes(world, django_assert_max_num_queries):
    project, lead, good, lazy = world
    first = calibration_selectors.job_calibration(good)
    with django_assert_max_num_queries(8):  # the data version only, no prediction read
        assert calibration_selectors.job_calibration(good) == first
    from annotator.gold.models import GoldVersion

    GoldVersion.objects.update_or_create(project=project, defaults={"version": 7})
    sentence = Prediction.objects.filter(job=good).first().sentence
    sentence.gold.label = "reliable" if sentence.gold.label != "reliable" else "faithful"
    sentence.gold.save()
    assert calibration_selectors.job_calibration(good) != first


def run(*args):
    out = StringIO()
    call_command("evaluate_autolabel", *args, stdout=out)
    return out.getvalue()


def test_command_prints_both_scores_baselines_calibration_and_comparison(world):
    project, lead, good, lazy = world
    text = run("--project", project.slug, "--job", str(good.pk), "--calibration", "--compare", str(lazy.pk))
    assert "CogniBench overall (macro)" in text and "any hallucination (pooled)" in text
    assert "flag every sentence" in text and "flag none" in text
    assert "Calibration at threshold 3" in text and "ECE" in text and "Brier" in text
    assert "The pre-labeler as a rater" in text and "ann-ada" in text
    assert f"Comparison: job {good.pk} (A) vs job {lazy.pk} (B)" in text and "4 turns, 20 sentences" in text
    report = json.loads(run("--project", project.slug, "--job", str(good.pk), "--json", "--calibration",
                            "--compare", str(lazy.pk)))
    assert report["thresholds"]["3"]["cognibench_overall"] == calibration_selectors.job_evaluation(good)["thresholds"][3]["cognibench_overall"]
    assert set(report["baselines"]) == {"flag_every_sentence", "flag_none"}
    assert report["calibration"]["binary"]["n"] == 20 and "kappa_gold" in report["rater"]["variables"]["kind"]
    assert report["comparison"]["views"]["factual"]["difference"]["f1"] == -1.0
    with pytest.raises(CommandError, match="no finished job"):
        run("--project", project.slug, "--job", str(good.pk), "--compare", "999999")


def test_api_evaluation_has_the_new_fields_and_keeps_the_old_ones(world):
    project, lead, good, lazy = world
    api = APIClient()
    api.force_authenticate(lead)
    url = reverse("api:autolabel-job-evaluation", kwargs={"slug": project.slug, "pk": good.pk})
    body = api.get(url).json()
    at3 = body["thresholds"]["3"]
    assert at3["overall"] == at3["any_hallucination"]  # the old key stays, as an alias
    assert at3["cognibench_overall"]["f1"] == round((at3["factual"]["f1"] + at3["cognitive"]["f1"]) / 2, 4)
    assert body["baselines"]["flag_none"]["factual"]["f1"] == 0.0
    assert body["calibration"]["label"]["n"] == 20 and len(body["calibration"]["binary"]["bins"]) == 10
    assert body["rater"]["variables"]["label"]["kappa_gold"]["kappa"] == 1.0
    compared = api.get(url, {"compare": lazy.pk}).json()
    assert compared["comparison"]["views"]["factual"]["difference"]["f1"] == -1.0
    assert "comparison" not in body
    assert api.get(url, {"compare": "abc"}).status_code == 400
    assert api.get(url, {"compare": good.pk}).status_code == 400
    assert api.get(url, {"compare": "99999999999999999999999"}).status_code == 400



def test_a_job_without_predictions_has_an_evaluation_page_with_empty_figures(client, world):
    project, lead, good, lazy = world
    queued = AutoLabelJob.objects.create(project=project, profile=good.profile, prompt_version=good.prompt_version,
                                         model="m", samples=5, threshold=3)
    response = page(client, lead, "job_evaluation", project, queued)
    html = response.content.decode()
    assert response.status_code == 200 and "No prediction with gold and an answering sample yet." in html
    assert "n/a" in html and '<svg class="chart"' not in html
