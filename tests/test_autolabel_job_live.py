"""The job page shows predictions as they arrive: the progress poll carries the latest turns, only when new."""

import re

import pytest
from django.urls import reverse

from annotator.domain.vocabulary import Role
from autolabel.jobs import services
from autolabel.jobs.live import LIVE_TURNS
from autolabel.models import AutoLabelJob, LLMProfile, Prediction
from tests.factories import AssignmentFactory, ProjectFactory, member
from tests.factories_autolabel import plain_turns

pytestmark = pytest.mark.django_db


@pytest.fixture
def running():
    """A project with three turns and a job over them that a worker has started (no prediction yet)."""
    project = ProjectFactory()
    turns = plain_turns(project, 3)
    profile = LLMProfile.objects.create(name="offline", base_url="http://127.0.0.1:9/v1", api_key_env="")
    job = services.job_create(project=project, profile=profile, enqueue=False)
    AutoLabelJob.objects.filter(pk=job.pk).update(status=AutoLabelJob.Status.RUNNING)
    job.refresh_from_db()
    return project, turns, job


def label_turn(job, turn, label="invented", votes=4):
    """Store a turn's predictions as a worker's flush does: all its sentences at once."""
    for sentence in turn.sentences.order_by("index"):
        Prediction.objects.create(job=job, sentence=sentence, label=label, hallucinated=True, hallucinated_votes=votes,
                                  sample_votes=["x"] * job.samples, label_votes={label: votes})


def poll(client, project, job, after=None, **query):
    url = reverse("autolabel:job_detail", args=[project.slug, job.pk]) + "?partial=progress"
    if after is not None:
        url += f"&after={after}"
    for key, value in query.items():
        url += f"&{key}={value}"
    return client.get(url, HTTP_HX_REQUEST="true")


def next_after(html):
    """The cursor the answer tells the page to poll with next (None: it stops polling)."""
    found = re.search(r"partial=progress&amp;after=(\d+)", html)
    return int(found.group(1)) if found else None


def live_turn_names(html):
    return re.findall(r'data-testid="live-turn">\s*<h3>([^<]+)</h3>', html)


def test_predictions_arrive_newest_turn_first_and_the_poll_sends_only_what_is_new(client, running):
    project, (first, second, third), job = running
    client.force_login(member(project, Role.LEAD))
    page = client.get(reverse("autolabel:job_detail", args=[project.slug, job.pk])).content.decode()
    assert "No prediction yet" in page and next_after(page) == 0

    nothing = poll(client, project, job, after=0).content.decode()
    assert 'id="job-predictions"' not in nothing and next_after(nothing) == 0

    label_turn(job, first, votes=4)
    answer = poll(client, project, job, after=0).content.decode()
    assert answer.strip().startswith('<section id="job-progress"')
    assert 'id="job-predictions" class="card" aria-labelledby="predictions-heading" hx-swap-oob="true"' in answer
    assert live_turn_names(answer) == [str(first)]
    assert "Invented: 5" in answer and "4/5 hallucinated" in answer  # per turn: labels and votes
    cursor = next_after(answer)
    assert cursor == Prediction.objects.latest("pk").pk

    unchanged = poll(client, project, job, after=cursor).content.decode()
    assert 'id="job-predictions"' not in unchanged and next_after(unchanged) == cursor

    label_turn(job, second, label="faithful", votes=0)
    answer = poll(client, project, job, after=cursor).content.decode()
    assert live_turn_names(answer) == [str(second), str(first)]
    assert next_after(answer) > cursor


def test_the_feed_is_bounded_to_the_latest_turns(client, running):
    project, _, job = running
    turns = plain_turns(project, LIVE_TURNS + 3)
    for turn in turns:
        label_turn(job, turn)
    client.force_login(member(project, Role.LEAD))
    answer = poll(client, project, job, after=0).content.decode()
    assert live_turn_names(answer) == [str(turn) for turn in reversed(turns[-LIVE_TURNS:])]
    page = client.get(reverse("autolabel:job_detail", args=[project.slug, job.pk])).content.decode()
    assert len(live_turn_names(page)) == LIVE_TURNS and next_after(page) == Prediction.objects.latest("pk").pk


def test_when_the_job_finishes_the_poll_stops_and_brings_the_full_table(client, running):
    project, (first, second, third), job = running
    for turn in (first, second, third):
        label_turn(job, turn)
    AutoLabelJob.objects.filter(pk=job.pk).update(status=AutoLabelJob.Status.DONE, done_turns=3)
    client.force_login(member(project, Role.LEAD))
    answer = poll(client, project, job, after=Prediction.objects.latest("pk").pk).content.decode()
    assert next_after(answer) is None and 'hx-trigger="every 1s"' not in answer
    assert 'hx-swap-oob="true"' in answer and "<table" in answer and "Page 1 of 1" in answer
    assert answer.count("<tr>") == 1 + 15  # the head and the three turns' sentences, in turn order


def test_a_lead_holding_a_slot_sees_no_prelabels_of_that_turn(client, running):
    project, (first, second, third), job = running
    lead = member(project, Role.LEAD)
    AssignmentFactory(turn=second, project=project, annotator=lead)
    label_turn(job, first)
    label_turn(job, second)
    client.force_login(lead)
    answer = poll(client, project, job, after=0).content.decode()
    assert live_turn_names(answer) == [str(first)]
    assert next_after(answer) == Prediction.objects.filter(sentence__turn=first).latest("pk").pk
    page = client.get(reverse("autolabel:job_detail", args=[project.slug, job.pk])).content.decode()
    assert live_turn_names(page) == [str(first)]


def test_annotators_cannot_poll_the_predictions(client, running):
    project, (first, *_), job = running
    label_turn(job, first)
    client.force_login(member(project, Role.ANNOTATOR))
    assert poll(client, project, job, after=0).status_code == 404


@pytest.mark.parametrize("query", ["after=abc", "after=-1", "partial=nonsense"])
def test_a_malformed_query_is_a_400(client, running, query):
    project, _, job = running
    client.force_login(member(project, Role.LEAD))
    url = reverse("autolabel:job_detail", args=[project.slug, job.pk]) + "?" + query
    for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
        assert client.get(url, **headers).status_code == 400
