"""The learned judge as an endpoint choice of the job form (and of the API's job creation): offered when a judge
usable in the project's protocol version exists, shown disabled with the reason otherwise; its estimate sends
nothing; its job page names the judge, not a prompt; the smallest-margin draw reads its votes."""

import re

import pytest
from django.urls import reverse

from annotator.domain import draws as draw_rules
from annotator.domain.protocol.document import load_shipped
from annotator.domain.vocabulary import DrawStrategy, Role
from annotator.projects.protocol_services import protocol_set
from autolabel.checks.drawing import turn_margins
from autolabel.jobs import services
from autolabel.jobs.forms import LEARNED, JobStartForm
from autolabel.jobs.services import learned_job_create
from autolabel.learned.training import judge_train_create, judge_train_run
from autolabel.models import AutoLabelJob, LearnedJudge
from tests.autolabel_fixtures import baseline_llm, baseline_server, profile  # noqa: F401
from tests.factories import AssignmentFactory, member
from tests.factories_api import token_client
from tests.factories_autolabel import plain_turns
from tests.factories_learned import trainable_project

pytestmark = pytest.mark.django_db


def train(project):
    return judge_train_run(judge_train_create(project, enqueue=False).pk, folds=3)


def option(page, value):
    """The <option> of ``value`` in the endpoint select of a page, or None."""
    found = re.search(rf'<option value="{value}"[^>]*>[^<]*</option>', page)
    return found.group(0) if found else None


def test_without_a_trained_judge_the_form_says_why_and_links_to_train_one(client, profile):
    project = trainable_project(turns=2)
    client.force_login(member(project, Role.LEAD))
    page = client.get(reverse("autolabel:job_list", args=[project.slug])).content.decode()
    assert option(page, LEARNED) is None and option(page, profile.pk) is not None
    assert "no judge has been trained on this project" in page
    assert reverse("autolabel:learned_judge", args=[project.slug]) in page
    refused = client.post(reverse("autolabel:job_list", args=[project.slug]),
                          {"profile": LEARNED, "samples": 5, "threshold": 3})
    assert refused.status_code == 400 and "train one first" in refused.content.decode()
    assert not AutoLabelJob.objects.exists()


def test_the_lead_chooses_the_learned_judge_sees_an_estimate_of_nothing_and_starts_its_job(
        client, profile, django_capture_on_commit_callbacks):
    project = trainable_project(turns=3)
    plain_turns(project, 2)  # turns without gold: the judge labels them too
    lead = member(project, Role.LEAD)
    judge = train(project)
    client.force_login(lead)
    url = reverse("autolabel:job_list", args=[project.slug])
    page = client.get(url).content.decode()
    offered = option(page, LEARNED)
    assert offered and "disabled" not in offered
    assert f"Learned judge (trained {judge.finished_at:%Y-%m-%d}" in offered
    assert "15 gold sentences, protocol built-in)" in offered

    estimate = client.get(reverse("autolabel:job_estimate", args=[project.slug]),
                          {"profile": LEARNED, "samples": 5, "threshold": 3}, HTTP_HX_REQUEST="true").content.decode()
    assert re.search(r'class="estimate-turns">5<', estimate) and re.search(r'class="estimate-requests">0<', estimate)
    assert re.search(r'class="estimate-prompt-tokens">0<', estimate) and "calls no service" in estimate
    assert "20 votes shared by probability (hallucinated at ≥ 10)" in estimate
    batch = client.get(reverse("autolabel:job_estimate", args=[project.slug]),
                       {"profile": LEARNED, "samples": 5, "threshold": 3, "batch_mode": "on"}, HTTP_HX_REQUEST="true")
    assert "no Batch API" in batch.content.decode()
    llm_only = client.get(reverse("autolabel:job_estimate", args=[project.slug]),  # the LLM's vote, not the judge's
                          {"profile": LEARNED, "samples": 2, "threshold": 5}, HTTP_HX_REQUEST="true")
    assert "calls no service" in llm_only.content.decode()

    with django_capture_on_commit_callbacks() as callbacks:
        response = client.post(url, {"profile": LEARNED, "samples": 5, "threshold": 3, "use_n": "on"})
    job = AutoLabelJob.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("autolabel:job_detail",
                                                                           args=[project.slug, job.pk])
    assert len(callbacks) == 1  # enqueued on commit, as an LLM job is
    assert (job.learned_judge, job.profile, job.total_turns, job.created_by) == (judge, None, 5, lead)
    assert job.estimate["requests"] == 0 and job.estimate["cost"] == "0.000000" and job.estimate["turns"] == 5

    assert services.job_run(job.pk) == AutoLabelJob.Status.DONE  # what the worker's task does
    detail = client.get(reverse("autolabel:job_detail", args=[project.slug, job.pk])).content.decode()
    labeller = re.search(r'<p class="muted" id="job-labeller">(.*?)</p>', detail, re.S).group(1)
    assert f"learned judge</a> #{judge.pk}" in labeller and "15 gold sentences" in labeller
    assert "prompt v" not in labeller and "via" not in labeller and "no service and no prompt" in labeller
    assert "called no service: no requests, no tokens, no cost" in detail and "Tokens and cost" not in detail
    listing = client.get(url).content.decode()
    assert "none (learned judge)" in listing
    evaluation = client.get(reverse("autolabel:job_evaluation", args=[project.slug, job.pk])).content.decode()
    assert f"learned judge #{judge.pk}" in evaluation and "prompt v" not in evaluation


def test_a_judge_of_another_protocol_version_is_shown_disabled_with_the_reason_and_refused(client, profile):
    project = trainable_project(turns=3)
    lead = member(project, Role.LEAD)
    train(project)
    reworded = {**load_shipped("cognibench").document, "name": "CogniBench, our wording"}
    protocol_set(project, reworded, user=lead,
                 label_mapping={label: label for label in load_shipped("cognibench").labels})
    project.refresh_from_db()
    client.force_login(lead)
    url = reverse("autolabel:job_list", args=[project.slug])
    page = client.get(url).content.decode()
    offered = option(page, LEARNED)
    assert offered and "disabled" in offered and "refused: learned judge" in offered
    assert "learned protocol version built-in" in offered
    assert 'id="learned-judge-note"' in page and "cannot be chosen" in page
    refused = client.post(url, {"profile": LEARNED, "samples": 5, "threshold": 3})
    assert refused.status_code == 400 and "learned protocol version built-in" in refused.content.decode()
    assert not AutoLabelJob.objects.exists()
    # The API's job creation says the same.
    api = token_client(lead).post(f"/api/v1/projects/{project.slug}/autolabel-jobs/",
                                  {"learned_judge": LearnedJudge.objects.get().pk}, format="json")
    assert api.status_code == 400 and "protocol version" in api.json()["errors"]["learned_judge"][0]


def test_a_lead_blind_in_the_project_sees_the_judge_disabled(client, profile):
    project = trainable_project(turns=3)
    lead = member(project, Role.LEAD)
    train(project)
    AssignmentFactory(turn=project.dialogues.first().turns.first(), annotator=lead)  # an unsubmitted slot
    client.force_login(lead)
    page = client.get(reverse("autolabel:job_list", args=[project.slug])).content.decode()
    assert "disabled" in option(page, LEARNED) and "unsubmitted annotation slot" in option(page, LEARNED)
    form = JobStartForm({"profile": LEARNED, "samples": 5, "threshold": 3}, project=project, learned=True, blind=True)
    assert not form.is_valid() and "unsubmitted annotation slot" in form.errors["profile"][0]
    api = token_client(lead).post(f"/api/v1/projects/{project.slug}/autolabel-jobs/",
                                  {"learned_judge": LearnedJudge.objects.get().pk}, format="json")
    assert api.status_code == 403 and not AutoLabelJob.objects.exists()


def test_the_admins_form_never_offers_the_judge(profile):
    """The admin's jobs may cover selected turns only, which a learned judge's job does not."""
    project = trainable_project(turns=2)
    train(project)
    form = JobStartForm({"profile": LEARNED, "samples": 5, "threshold": 3}, project=project)
    assert LEARNED not in [str(value) for value, _ in form.fields["profile"].choices]
    assert not form.is_valid() and "profile" in form.errors


def test_the_api_creates_a_learned_judges_job_and_wants_exactly_one_labeller(profile):
    project = trainable_project(turns=3)
    lead = member(project, Role.LEAD)
    judge = train(project)
    api = token_client(lead)
    url = f"/api/v1/projects/{project.slug}/autolabel-jobs/"
    for body in ({}, {"profile": profile.name, "learned_judge": judge.pk}, {"learned_judge": 999999},
                 {"learned_judge": "x"}):
        assert api.post(url, body, format="json").status_code == 400, body
    created = api.post(url, {"learned_judge": judge.pk}, format="json")
    assert created.status_code == 201 and created.json()["profile"] is None
    assert created.json()["model"] == f"learned judge #{judge.pk}" and created.json()["estimate"]["requests"] == 0
    assert AutoLabelJob.objects.get().learned_judge == judge
    assert api.post(url, {"profile": profile.name}, format="json").status_code == 201  # an LLM's still starts


def test_the_smallest_margin_draw_takes_the_learned_jobs_least_sure_turns_first(client):
    project = trainable_project(turns=3)
    plain_turns(project, 2)
    plain_turns(project, 2, sentences=[("Hello there.", ""), ("The Danube is maybe 900 metres long since 1492.", "")])
    lead = member(project, Role.LEAD)
    job = learned_job_create(project=project, judge=train(project), enqueue=False)
    assert services.job_run(job.pk) == AutoLabelJob.Status.DONE
    job.refresh_from_db()
    margins = turn_margins(job, list(job.job_turns.values_list("turn_id", flat=True)))
    assert len(margins) == 7 and len(set(margins.values())) > 1  # the judge is surer of some turns than others
    expected = draw_rules.uncertainty_order(margins, 3)
    assert [margins[t] for t in expected] == sorted(margins.values())[:3]
    client.force_login(lead)
    response = client.post(reverse("autolabel:job_checks", args=[project.slug, job.pk]),
                           {"strategy": DrawStrategy.UNCERTAINTY, "size": 3})
    assert response.status_code == 302
    drawn = list(project.turn_draws.get().drawn_turns.order_by("position").values_list("turn_id", flat=True))
    assert drawn == expected  # the least sure first, as an LLM job's


def test_a_judge_learns_a_protocol_with_step_kinds_and_its_job_labels_in_it(client):
    """HalluDetect's 'unsupported' is reached past a multiple, a scale and a text step: the judge learns the
    labels from gold walks holding a list, an integer and a text, and labels in that protocol (its kind steps
    left out, as its page says)."""
    from annotator.models import GoldLabel, Sentence
    from tests.protocol_walks import example_project

    project, lead = example_project("halludetect", "learned-kinds")
    trainable_project(turns=4, project=project)
    unsupported = {"supported": "no", "error_types": ["fabricated"], "severity": 3, "justification": "Not in it."}
    for gold in GoldLabel.objects.filter(sentence__turn__dialogue__project=project):
        supported = gold.label in ("faithful", "irrelevant")
        gold.label, gold.path = ("supported", {"supported": "yes"}) if supported else ("unsupported", unsupported)
        gold.save(update_fields=["label", "path"])
    judge = train(project)
    assert judge.status == LearnedJudge.Status.DONE, judge.error
    job = learned_job_create(project=project, judge=judge, enqueue=False)
    assert services.job_run(job.pk) == AutoLabelJob.Status.DONE
    labels = set(job.predictions.values_list("label", flat=True))
    assert labels and labels <= {"supported", "unsupported"}
    assert Sentence.objects.filter(turn__dialogue__project=project).count() == job.predictions.count()
    client.force_login(lead)
    page = client.get(reverse("autolabel:learned_judge", args=[project.slug])).content.decode()
    assert "leaves out" in page or "left out" in page
