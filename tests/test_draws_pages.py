"""The entry points of draws: the job's "Human checks" page, the API's draws of a job, manage.py draw_turns and
the project setting of how drawn turns become gold; who may use them and what malformed input gets."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotator.domain.vocabulary import DrawStrategy, DrawnTurnReview, Label, Role
from annotator.models import Assignment, GoldLabel, Project, TurnDraw
from annotator.work.assignment import assignment_next
from annotator.work.services import assignment_submit
from autolabel.checks.drawing import draw_for_job
from autolabel.models import AutoLabelJob
from tests.factories import UserFactory, member
from tests.factories_api import token_client
from tests.factories_draws import SURE, finished_job
from tests.factories_workspace import annotators, label_all, project_with_turns

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup():
    project, turns = project_with_turns(5, drawn_turn_review=DrawnTurnReview.SINGLE)
    job = finished_job(project, {turn: SURE for turn in turns})
    lead = member(project, Role.LEAD)
    return project, turns, job, lead


def checks_url(project, job):
    return reverse("autolabel:job_checks", args=[project.slug, job.pk])


# --- the page ------------------------------------------------------------------------------------

def test_a_lead_draws_at_random_and_follows_the_draw_on_the_checks_page(client, setup):
    project, turns, job, lead = setup
    client.force_login(lead)
    detail = client.get(reverse("autolabel:job_detail", args=[project.slug, job.pk])).content.decode()
    assert checks_url(project, job) in detail
    page = client.get(checks_url(project, job))
    assert page.status_code == 200 and "No draw yet." in page.content.decode()
    answer = client.post(checks_url(project, job), {"strategy": "random", "size": "3", "seed": "", "note": "calib"})
    assert answer.status_code == 302
    draw = TurnDraw.objects.get()
    assert (draw.strategy, draw.size, draw.created_by, draw.note, draw.source_job_id) == ("random", 3, lead, "calib", job.pk)
    assert draw.seed is not None and draw.drawn_turns.count() == 3
    reviewer, = annotators(project, 1)
    assignment = assignment_next(project, reviewer)
    label_all(assignment, Label.INVENTED, reviewer)
    assignment_submit(Assignment.objects.get(pk=assignment.pk), actor=reviewer)
    assignment_next(project, annotators(project, 1)[0])  # a second drawn turn: being annotated
    html = client.get(checks_url(project, job)).content.decode()
    assert f"Draw {draw.pk}: 3 turns drawn" in html  # the message after the redirect
    row = html[html.index('id="draws-table"'):html.index("</table>", html.index('id="draws-table"'))]
    cells = [cell.split(">")[-1] for cell in row.split("</td>")[:-1]]
    assert cells[:7] == [f"#{draw.pk}", draw.get_strategy_display(), str(draw.seed), "3", lead.username,
                         cells[5], "3"]
    assert cells[7:] == ["1", "1", "1"]  # waiting, being annotated, with gold
    assert "invented: 3" in html and reverse("turn_detail", args=[project.slug, assignment.turn_id]) in html
    assert "was not drawn at random" not in html


def test_the_page_says_when_the_gold_of_the_job_was_not_drawn_at_random(client, setup):
    project, turns, job, lead = setup
    draw_for_job(job, strategy=DrawStrategy.UNCERTAINTY, size=2, actor=lead)
    client.force_login(lead)
    html = client.get(checks_url(project, job)).content.decode()
    assert "Smallest vote margin first" in html and "was not drawn at random" in html


@pytest.mark.parametrize("body, message", [
    ({"strategy": "sideways", "size": "3"}, "Select a valid choice"),
    ({"strategy": "random", "size": "0"}, "greater than or equal to 1"),
    ({"strategy": "random", "size": "abc"}, "Enter a whole number"),
    ({"strategy": "random", "size": "2", "seed": "-4"}, "greater than or equal to 0"),
    ({"strategy": "random", "size": "2", "seed": "99999999999999999999"}, "less than or equal to"),
    ({"strategy": "random"}, "This field is required"),
])
def test_malformed_draws_on_the_page_are_a_400_saying_why_and_draw_nothing(client, setup, body, message):
    project, turns, job, lead = setup
    client.force_login(lead)
    answer = client.post(checks_url(project, job), body)
    assert answer.status_code == 400 and message in answer.content.decode()
    assert not TurnDraw.objects.exists()


def test_a_job_not_finished_cannot_be_drawn_from(client, setup):
    project, turns, job, lead = setup
    AutoLabelJob.objects.filter(pk=job.pk).update(status=AutoLabelJob.Status.RUNNING)
    client.force_login(lead)
    assert "this job is running" in client.get(checks_url(project, job)).content.decode()
    answer = client.post(checks_url(project, job), {"strategy": "random", "size": "2"})
    assert answer.status_code == 200 and "this job is running" in answer.content.decode()
    assert not TurnDraw.objects.exists()


def test_only_leads_of_the_project_reach_the_checks_page(client, setup):
    project, turns, job, lead = setup
    other, _ = project_with_turns(1)
    for role in (Role.ANNOTATOR, Role.ADJUDICATOR):
        client.force_login(member(project, role))
        assert client.get(checks_url(project, job)).status_code == 404
        assert client.post(checks_url(project, job), {"strategy": "random", "size": "2"}).status_code == 404
    client.force_login(member(other, Role.LEAD))
    assert client.get(checks_url(project, job)).status_code == 404
    assert client.get(reverse("autolabel:job_checks", args=[other.slug, job.pk])).status_code == 404
    client.force_login(lead)
    assert client.get(reverse("autolabel:job_checks", args=[project.slug, 999_999])).status_code == 404
    client.logout()
    assert client.get(checks_url(project, job)).status_code == 302
    assert not TurnDraw.objects.exists()


def test_a_lead_holding_an_open_slot_on_a_drawn_turn_does_not_see_its_gold_labels(client, setup):
    project, turns, job, lead = setup
    Project.objects.filter(pk=project.pk).update(adjudicators_may_annotate=True, drawn_turn_review="double")
    project.refresh_from_db()
    draw_for_job(job, strategy=DrawStrategy.UNCERTAINTY, size=1)
    a, = annotators(project, 1)
    mine = assignment_next(project, lead)  # the drawn turn (turns[0]: all margins equal, lowest id)
    other = assignment_next(project, a)
    assert mine.turn_id == other.turn_id == turns[0].pk
    label_all(other, Label.SPECULATIVE, a)
    assignment_submit(Assignment.objects.get(pk=other.pk), actor=a)
    for sentence in turns[0].sentences.all():  # gold arrives (say, imported) while the lead still holds the slot
        GoldLabel.objects.create(sentence=sentence, label=Label.SPECULATIVE, provenance="imported",
                                 path={"relevance": "relevant", "kind": "cognitive", "cognitive": "speculative"})
    client.force_login(lead)
    html = client.get(checks_url(project, job)).content.decode()
    assert "speculative: 3" not in html and "3/3" in html


# --- the API -------------------------------------------------------------------------------------

def draws_url(project, job):
    return reverse("api:autolabel-job-draws", kwargs={"slug": project.slug, "pk": job.pk})


def test_a_lead_lists_and_makes_draws_through_the_api(setup):
    project, turns, job, lead = setup
    api = token_client(lead)
    made = api.post(draws_url(project, job), {"strategy": "random", "size": 2, "seed": 11, "note": "api"}, format="json")
    assert made.status_code == 201
    body = made.json()
    assert (body["strategy"], body["job"], body["size"], body["seed"], body["drawn"], body["waiting"]) == \
        ("random", job.pk, 2, 11, 2, 2)
    assert body["created_by"] == lead.username and len(body["turns"]) == 2
    assert body["turns"] == list(TurnDraw.objects.get().drawn_turns.values_list("turn_id", flat=True))
    uncertain = api.post(draws_url(project, job), {"strategy": "uncertainty", "size": 1}, format="json").json()
    assert uncertain["seed"] is None
    listed = api.get(draws_url(project, job)).json()
    assert [d["id"] for d in listed["results"]] == [uncertain["id"], body["id"]]


@pytest.mark.parametrize("body", [
    {"strategy": "sideways", "size": 1}, {"strategy": "random", "size": 0}, {"strategy": "random", "size": "x"},
    {"strategy": "random", "size": 1, "seed": -1}, {"strategy": "random", "size": 1, "seed": 2**64},
    {"strategy": "random"}, {"strategy": "random", "size": 1, "note": "x" * 5001}, {"strategy": ["random"], "size": 1},
])
def test_malformed_api_draws_are_a_400_and_draw_nothing(setup, body):
    project, turns, job, lead = setup
    answer = token_client(lead).post(draws_url(project, job), body, format="json")
    assert answer.status_code == 400 and not TurnDraw.objects.exists()


def test_the_api_refuses_a_draw_the_rules_refuse_with_the_reason(setup):
    project, turns, job, lead = setup
    api = token_client(lead)
    assert api.post(draws_url(project, job), {"strategy": "uncertainty", "size": 9}, format="json").status_code == 201
    refused = api.post(draws_url(project, job), {"strategy": "uncertainty", "size": 1}, format="json")
    assert refused.status_code == 400 and "no turn left" in refused.json()["detail"]
    missing = reverse("api:autolabel-job-draws", kwargs={"slug": project.slug, "pk": 999_999})
    assert api.get(missing).status_code == 404 and api.post(missing, {"strategy": "random", "size": 1}).status_code == 404


def test_only_leads_use_the_draws_endpoint(setup):
    project, turns, job, lead = setup
    for role in (Role.ANNOTATOR, Role.ADJUDICATOR):
        api = token_client(member(project, role))
        assert api.get(draws_url(project, job)).status_code == 404
        assert api.post(draws_url(project, job), {"strategy": "random", "size": 1}, format="json").status_code == 404
    assert token_client(UserFactory()).get(draws_url(project, job)).status_code == 404
    assert not TurnDraw.objects.exists()


# --- the command ---------------------------------------------------------------------------------

def run(*args):
    out = StringIO()
    call_command("draw_turns", *args, stdout=out)
    return out.getvalue()


def test_draw_turns_draws_reproducibly_from_the_shell(setup):
    project, turns, job, lead = setup
    out = run("--project", project.slug, "--job", str(job.pk), "--strategy", "random", "--size", "3", "--seed", "5",
              "--by", lead.username, "--note", "shell")
    draw = TurnDraw.objects.get()
    drawn = list(draw.drawn_turns.values_list("turn_id", flat=True))
    assert f"Draw {draw.pk} of job {job.pk} (random, seed 5): 3 of 3 turns" in out
    assert "turns: " + " ".join(map(str, drawn)) in out and draw.created_by == lead and draw.note == "shell"
    draw.delete()
    run("--project", project.slug, "--job", str(job.pk), "--strategy", "random", "--size", "3", "--seed", "5")
    assert list(TurnDraw.objects.get().drawn_turns.values_list("turn_id", flat=True)) == drawn


@pytest.mark.parametrize("args, message", [
    (["--job", "999999", "--strategy", "random", "--size", "1"], "no job 999999"),
    (["--strategy", "sideways", "--size", "1"], "invalid choice"),
    (["--strategy", "random", "--size", "0"], "size must be 1 to"),
    (["--strategy", "random", "--size", "many"], "size must be a whole number"),
    (["--strategy", "random", "--size", "1", "--seed", "-3"], "seed must be 0 to"),
    (["--strategy", "random", "--size", "1", "--by", "nobody"], "'nobody' is not a lead"),
])
def test_draw_turns_refuses_malformed_arguments_with_a_message(setup, args, message):
    project, turns, job, lead = setup
    if "--job" not in args:
        args = ["--job", str(job.pk), *args]
    with pytest.raises(CommandError, match=message):
        run("--project", project.slug, *args)
    assert not TurnDraw.objects.exists()


def test_draw_turns_refuses_an_annotator_as_the_drawer_and_an_unfinished_job(setup):
    project, turns, job, lead = setup
    annotator, = annotators(project, 1)
    with pytest.raises(CommandError, match="is not a lead"):
        run("--project", project.slug, "--job", str(job.pk), "--strategy", "random", "--size", "1",
            "--by", annotator.username)
    AutoLabelJob.objects.filter(pk=job.pk).update(status=AutoLabelJob.Status.QUEUED)
    with pytest.raises(CommandError, match="this job is queued"):
        run("--project", project.slug, "--job", str(job.pk), "--strategy", "random", "--size", "1")


# --- the project setting -------------------------------------------------------------------------

def test_a_lead_sets_how_drawn_turns_become_gold_on_the_adjudication_settings_and_in_the_api(client):
    project, _ = project_with_turns(1)
    lead = member(project, Role.LEAD)
    client.force_login(lead)
    assert 'name="drawn_turn_review"' in client.get(reverse("gold_queue", args=[project.slug])).content.decode()
    settings = {"adjudication_order": "oldest", "imported_gold": "final"}
    bad = client.post(reverse("gold_queue_settings", args=[project.slug]), {**settings, "drawn_turn_review": "triple"})
    assert bad.status_code == 400
    client.post(reverse("gold_queue_settings", args=[project.slug]), {**settings, "drawn_turn_review": "single"})
    project.refresh_from_db()
    assert project.drawn_turn_review == DrawnTurnReview.SINGLE
    api = token_client(lead)
    detail = reverse("api:project-detail", kwargs={"slug": project.slug})
    assert api.get(detail).json()["drawn_turn_review"] == "single"
    assert api.patch(detail, {"drawn_turn_review": "double"}, format="json").status_code == 200
    assert api.patch(detail, {"drawn_turn_review": "triple"}, format="json").status_code == 400
    project.refresh_from_db()
    assert project.drawn_turn_review == DrawnTurnReview.DOUBLE


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_the_checks_page_answers_other_methods_405(client, setup, method):
    project, _, job, lead = setup
    client.force_login(lead)
    assert getattr(client, method)(checks_url(project, job)).status_code == 405


def test_the_checks_page_counts_a_randomly_drawn_turn_with_some_gold_as_usable(client, setup):
    """The faithfulness report uses the gold sentences of every drawn turn (issue 22 item 11), so the page does
    not say a random draw cannot correct the estimates once one drawn turn has gold on some sentence."""
    project, turns, job, lead = setup
    client.force_login(lead)
    client.post(checks_url(project, job), {"strategy": "random", "size": "2", "seed": "7", "note": ""})
    assert "No turn drawn at random has any gold" in client.get(checks_url(project, job)).content.decode()
    drawn = TurnDraw.objects.get().drawn_turns.order_by("position").first().turn
    sentence = drawn.sentences.order_by("index").first()
    assert drawn.sentences.count() > 1  # gold on one sentence only: the turn's other sentences stay unlabelled
    GoldLabel.objects.create(sentence=sentence, label=Label.INVENTED, path={}, provenance="imported")
    assert "No turn drawn at random has any gold" not in client.get(checks_url(project, job)).content.decode()
