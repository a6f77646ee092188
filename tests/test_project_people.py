"""A project's people through the API: removing a member releases their slots and closes their flags (issue 22,
item 9); adding by username does not tell a lead which accounts exist (issue 22, item 10)."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotator import models
from annotator.domain.vocabulary import Label, Role, UnitFlagKind
from tests.factories import AssignmentFactory, ProjectFactory, TurnFactory, UserFactory, member
from tests.factories_api import token_client

pytestmark = pytest.mark.django_db


def members_url(project, user_id=None):
    if user_id is None:
        return reverse("api:member-list", kwargs={"slug": project.slug})
    return reverse("api:member-detail", kwargs={"slug": project.slug, "user_id": user_id})


@pytest.fixture
def leaver():
    """An annotator with a slot in progress, a submitted one, an unfinished qualification turn and an open flag."""
    project = ProjectFactory(slug="pilot", overlap=2)
    lead = member(project, Role.LEAD, username="pilot-lead")
    annotator = member(project, Role.ANNOTATOR, username="leaver")
    open_turn, done_turn, qualification_turn = (TurnFactory(dialogue__project=project) for _ in range(3))
    qualification_turn.is_qualification = True
    qualification_turn.save(update_fields=["is_qualification"])
    working = AssignmentFactory(turn=open_turn, annotator=annotator, status=models.Assignment.Status.IN_PROGRESS)
    models.Turn.objects.filter(pk__in=[open_turn.pk, done_turn.pk]).update(slots_taken=1)
    sentence = open_turn.sentences.first()
    models.SentenceAnnotation.objects.create(assignment=working, sentence=sentence, label=Label.FAITHFUL,
                                             path={"relevance": "relevant"})
    done = AssignmentFactory(turn=done_turn, annotator=annotator, status=models.Assignment.Status.SUBMITTED)
    qualifying = AssignmentFactory(turn=qualification_turn, annotator=annotator, is_qualification=True)
    flag = models.UnitFlag.objects.create(turn=open_turn, sentence=sentence, sentence_index=0,
                                          sentence_text=sentence.text, kind=UnitFlagKind.choices[0][0],
                                          flagged_by=annotator)
    return {"project": project, "lead": lead, "annotator": annotator, "working": working, "done": done,
            "qualifying": qualifying, "flag": flag, "open_turn": open_turn}


def test_removing_a_member_releases_their_unsubmitted_slots_and_closes_their_flags_and_says_so(leaver):
    project, lead, annotator = leaver["project"], leaver["lead"], leaver["annotator"]
    response = token_client(lead).delete(members_url(project, annotator.pk))
    assert response.status_code == 200, response.content
    body = response.json()
    assert sorted(body["released_assignments"]) == sorted([leaver["working"].pk, leaver["qualifying"].pk])
    assert body["closed_flags"] == [leaver["flag"].pk]
    assert "1 unsubmitted turn released" in body["detail"] and "1 open flag closed" in body["detail"]
    assert not models.Membership.objects.filter(project=project, user=annotator).exists()

    for key in ("working", "qualifying"):
        leaver[key].refresh_from_db()
        assert leaver[key].status == models.Assignment.Status.RELEASED
        event = leaver[key].events.get(action="release")
        assert event.actor == lead and event.new["reason"] == "leaver was removed from the project"
    # The released slot no longer holds its place in the turn's overlap; what was labelled there stays.
    leaver["open_turn"].refresh_from_db()
    assert leaver["open_turn"].slots_taken == 0
    assert leaver["working"].sentence_annotations.count() == 1
    leaver["done"].refresh_from_db()
    assert leaver["done"].status == models.Assignment.Status.SUBMITTED
    leaver["flag"].refresh_from_db()
    assert leaver["flag"].status == models.UnitFlag.Status.DISMISSED and leaver["flag"].resolved_by == lead
    assert "leaver was removed from the project" in leaver["flag"].resolution


def test_the_last_lead_is_not_removed_and_nothing_is_released(leaver):
    project, lead = leaver["project"], leaver["lead"]
    mine = AssignmentFactory(turn=TurnFactory(dialogue__project=project), annotator=lead)
    response = token_client(lead).delete(members_url(project, lead.pk))
    assert response.status_code == 400 and "at least one lead" in str(response.json())
    mine.refresh_from_db()
    assert mine.status == models.Assignment.Status.ASSIGNED


@pytest.fixture
def accounts():
    """A lead of "pilot" who also leads "second"; accounts the lead cannot see, one they can."""
    project = ProjectFactory(slug="pilot")
    second = ProjectFactory(slug="second")
    elsewhere = ProjectFactory(slug="elsewhere")
    lead = member(project, Role.LEAD, username="pilot-lead")
    models.Membership.objects.create(project=second, user=lead, role=Role.LEAD)
    colleague = member(second, Role.ANNOTATOR, username="colleague")
    member(elsewhere, Role.ANNOTATOR, username="stranger")  # in a project the lead has nothing to do with
    UserFactory(username="loner")  # in no project at all
    sleeper = member(second, Role.ANNOTATOR, username="sleeper")
    get_user_model().objects.filter(pk=sleeper.pk).update(is_active=False)
    return project, lead, colleague


def test_adding_by_username_answers_the_same_for_unknown_hidden_and_inactive_accounts(accounts):
    project, lead, colleague = accounts
    client = token_client(lead)
    answers = {}
    for username in ("ghost", "stranger", "loner", "sleeper"):
        response = client.post(members_url(project), {"username": username, "role": "annotator"}, format="json")
        answers[username] = (response.status_code, response.json()["errors"]["username"][0].replace(username, "?"))
    assert len(set(answers.values())) == 1, answers
    assert answers["ghost"][0] == 400 and "invite link" in answers["ghost"][1]
    assert not models.Membership.objects.filter(project=project, user__username__in=list(answers)).exists()

    added = client.post(members_url(project), {"username": "colleague", "role": "annotator"}, format="json")
    assert added.status_code == 201 and added.json()["user_id"] == colleague.pk


def test_a_site_administrator_adds_any_active_account(accounts):
    project, _, _ = accounts
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    response = token_client(root).post(members_url(project), {"username": "loner"}, format="json")
    assert response.status_code == 201


def test_removing_a_member_in_the_admin_goes_through_the_same_service(client, leaver):
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    client.force_login(root)
    membership = models.Membership.objects.get(project=leaver["project"], user=leaver["annotator"])
    response = client.post(reverse("admin:annotator_membership_delete", args=[membership.pk]), {"post": "yes"},
                           follow=True)
    assert response.status_code == 200 and "1 unsubmitted turn released" in response.content.decode()
    leaver["working"].refresh_from_db()
    assert leaver["working"].status == models.Assignment.Status.RELEASED
    assert not models.Membership.objects.filter(pk=membership.pk).exists()
