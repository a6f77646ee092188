"""Through the pages and the API: reasons of qualification gold, automatic retries, the queue after a fail."""

import re

import pytest
from django.urls import reverse

from annotator.domain.vocabulary import Role
from annotator.models import GoldEvent, GoldLabel, Project
from annotator.qa import qualification as q
from tests.factories import AssignmentFactory, ProjectFactory, TurnFactory, member
from tests.factories_api import token_client
from tests.factories_qa import finish, gold_turn

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    project = ProjectFactory()
    TurnFactory(dialogue__project=project)  # real work, open to whoever qualifies
    lead = member(project, Role.LEAD)
    turn = gold_turn(project, ["faithful", "speculative"], texts=["The Amazon flows through Brazil.",
                                                                  "It is probably the greatest river."])
    q.qualification_set(project=project, actor=lead, turn_ids=[turn.pk], pass_mark=1.0)
    return project, lead, turn


def fail_attempt(project, user):
    finish(q.qualification_assignment_next(project, user), ["faithful", "faithful"])
    return q.qualification_score_attempt(project, user)


def reason_url(project, sentence):
    return reverse("qa:qualification_gold_reason", args=[project.slug, sentence.pk])


def test_a_lead_writes_a_reason_and_the_annotator_reads_it_on_an_attempt_scored_before(client, world):
    project, lead, turn = world
    annotator = member(project, Role.ANNOTATOR)
    result = fail_attempt(project, annotator)
    sentence = turn.sentences.get(index=1)

    client.force_login(lead)
    page = client.get(reverse("qa:qualification", args=[project.slug])).content.decode()
    assert f'action="{reason_url(project, sentence)}"' in page and "It is probably the greatest river." in page
    response = client.post(reason_url(project, sentence), {"reason": "Nothing in the reference ranks rivers."})
    assert response.status_code == 302 and response["Location"].endswith(f"#reason-{sentence.pk}")
    assert GoldLabel.objects.get(sentence=sentence).reason == "Nothing in the reference ranks rivers."
    assert GoldEvent.objects.filter(sentence=sentence, actor=lead, reason="Nothing in the reference ranks rivers.")

    client.force_login(annotator)
    score = client.get(reverse("qa:qualification_result", args=[project.slug, result.pk])).content.decode()
    assert re.search(r'data-testid="gold-reason">Nothing in the reference ranks rivers\.<', score)


def test_the_reason_form_refuses_non_leads_other_sentences_and_bad_input(client, world):
    project, lead, turn = world
    sentence = turn.sentences.get(index=0)
    client.force_login(member(project, Role.ANNOTATOR))
    assert client.post(reason_url(project, sentence), {"reason": "x"}).status_code == 404
    client.force_login(lead)
    other = TurnFactory(dialogue__project=project).sentences.first()  # not in the qualification set
    assert client.post(reason_url(project, other), {"reason": "x"}).status_code == 404
    foreign = gold_turn(ProjectFactory(), ["faithful"]).sentences.get()
    assert client.post(reason_url(project, foreign), {"reason": "x"}).status_code == 404
    assert client.post(reason_url(project, sentence), {"reason": "x" * 5001}).status_code == 400
    assert client.get(reason_url(project, sentence)).status_code == 405
    assert GoldLabel.objects.get(sentence=sentence).reason == ""


def test_a_lead_sets_automatic_retries_on_the_qualification_page(client, world):
    project, lead, _ = world
    url = reverse("qa:qualification_retries", args=[project.slug])
    client.force_login(member(project, Role.ANNOTATOR))
    assert client.post(url, {"qualification_auto_retries": 2}).status_code == 404
    client.force_login(lead)
    page = client.get(reverse("qa:qualification", args=[project.slug])).content.decode()
    assert 'name="qualification_auto_retries"' in page
    for bad in ("-1", "21", "two", ""):
        assert client.post(url, {"qualification_auto_retries": bad}).status_code == 400
    assert client.post(url, {"qualification_auto_retries": 2}).status_code == 302
    assert Project.objects.get(pk=project.pk).qualification_auto_retries == 2


def test_the_api_reads_and_sets_automatic_retries(world):
    project, lead, _ = world
    api = token_client(lead)
    address = reverse("api:project-detail", args=[project.slug])
    assert api.get(address).json()["qualification_auto_retries"] == 0
    assert api.patch(address, {"qualification_auto_retries": 21}, format="json").status_code == 400
    response = api.patch(address, {"qualification_auto_retries": 3}, format="json")
    assert response.status_code == 200 and response.json()["qualification_auto_retries"] == 3
    assert Project.objects.get(pk=project.pk).qualification_auto_retries == 3


def test_after_a_fail_with_a_retry_open_the_queue_offers_the_next_attempt(client, world):
    project, lead, _ = world
    project.qualification_auto_retries = 2
    project.save()
    annotator = member(project, Role.ANNOTATOR)
    result = fail_attempt(project, annotator)
    client.force_login(annotator)
    queue = client.get(reverse("workspace_queue", args=[project.slug])).content.decode()
    assert "Attempt 1 scored 1 of 2 (50%); the pass mark is 100.0%." in queue
    assert "A new attempt is open: 1 left after this one." in queue
    assert re.search(r'id="start-button" autofocus>Start attempt 2 <kbd>', queue)
    assert queue.count('id="start-button"') == 1 and queue.count("autofocus") == 1
    assert reverse("qa:qualification_result", args=[project.slug, result.pk]) in queue
    response = client.post(reverse("workspace_next", args=[project.slug]))
    assert response.status_code == 302 and response["Location"].startswith("/a/")  # it starts the attempt

    client.force_login(lead)
    page = client.get(reverse("qa:qualification", args=[project.slug])).content.decode()
    assert "next attempt opened automatically" in page and 'data-testid="qualification-waiting"' not in page


def test_the_last_automatic_attempt_says_none_is_left(client, world):
    project, _, _ = world
    project.qualification_auto_retries = 1
    project.save()
    annotator = member(project, Role.ANNOTATOR)
    fail_attempt(project, annotator)
    client.force_login(annotator)
    queue = client.get(reverse("workspace_queue", args=[project.slug])).content.decode()
    assert "A new attempt is open: none left after this one; if it fails, a lead must allow another." in queue


def test_after_a_fail_that_waits_for_a_lead_the_queue_offers_the_answers_not_a_start(client, world):
    project, lead, _ = world
    annotator = member(project, Role.ANNOTATOR, username="fiona")
    result = fail_attempt(project, annotator)
    client.force_login(annotator)
    queue = client.get(reverse("workspace_queue", args=[project.slug])).content.decode()
    assert "Attempt 1 scored 1 of 2 (50%); the pass mark is 100.0%." in queue
    assert "A lead must allow another attempt; you'll see it here." in queue
    assert 'id="start-button"' not in queue and queue.count("autofocus") == 1
    answers = reverse("qa:qualification_result", args=[project.slug, result.pk])
    assert re.search(rf'id="see-answers" href="{answers}" autofocus>See your answers<', queue)

    client.force_login(lead)
    page = client.get(reverse("qa:qualification", args=[project.slug])).content.decode()
    waiting = page[page.index('data-testid="qualification-waiting"'):]
    assert "<strong>fiona</strong>: attempt 1, 1 of 2 right (50%)" in waiting
    assert 'data-testid="waits-for-lead"' in page
    assert 'Allow a retry<span class="visually-hidden"> to fiona</span>' in page  # the name holds the visible text


def test_a_lead_holding_a_slot_on_a_qualification_turn_neither_sees_nor_writes_its_gold_reasons(client, world):
    project, lead, turn = world
    AssignmentFactory(turn=turn, project=project, annotator=lead, is_qualification=True)
    client.force_login(lead)
    page = client.get(reverse("qa:qualification", args=[project.slug])).content.decode()
    sentence = turn.sentences.get(index=1)
    assert reason_url(project, sentence) not in page and 'id="reasons-heading"' not in page
    assert client.post(reason_url(project, sentence), {"reason": "Peeking."}).status_code == 404
    assert GoldLabel.objects.get(sentence=sentence).reason == ""


def test_while_a_retry_is_open_the_earlier_attempt_shows_no_gold_of_the_turns_being_retaken(client, world):
    """A retry reopens the same turns: the annotator holds open slots on them, so they are blind there."""
    project, _, turn = world
    project.qualification_auto_retries = 1
    project.save()
    annotator = member(project, Role.ANNOTATOR)
    result = fail_attempt(project, annotator)  # the next attempt opens by itself, on the same turn
    client.force_login(annotator)
    url = reverse("qa:qualification_result", args=[project.slug, result.pk])
    score = client.get(url).content.decode()
    assert "1 of 2 sentences right" in score
    assert "It is probably the greatest river." not in score and "chip-speculative" not in score
    assert 'data-testid="detail-wrong"' not in score and 'data-testid="qualification-details-hidden"' in score
    own = client.get(reverse("qa:qualification_score", args=[project.slug])).content.decode()
    assert "chip-speculative" not in own

    finish(q.qualification_assignment_next(project, annotator), ["faithful", "faithful"])  # attempt 2 submitted
    score = client.get(url).content.decode()
    assert "chip-speculative" in score and 'data-testid="qualification-details-hidden"' not in score
