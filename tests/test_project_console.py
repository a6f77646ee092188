"""The lead's console in the app (issue 26, item 1): a new project by people the site administrator allows to,
settings that say what they change, people added by username or invite link, removal shown before it is done."""

import re

import pytest
from django.contrib.auth.models import Group, Permission
from django.urls import reverse

from annotator import models
from annotator.domain.vocabulary import ImportedGold, Role
from tests.factories import AssignmentFactory, ProjectFactory, TurnFactory, UserFactory, member

pytestmark = pytest.mark.django_db


def allowed_to_create(user):
    """The site administrator's grant, as README says: a group holding "Can add project"."""
    group, _ = Group.objects.get_or_create(name="Project creators")
    group.permissions.add(Permission.objects.get(codename="add_project", content_type__app_label="annotator"))
    user.groups.add(group)
    return user


def test_only_people_the_administrator_allows_create_projects_and_they_lead_them(client):
    someone = UserFactory(username="someone", is_staff=True)  # the staff flag alone grants nothing
    client.force_login(someone)
    assert "New project" not in client.get(reverse("home")).content.decode()
    assert client.get(reverse("project_create")).status_code == 403
    assert client.post(reverse("project_create"), {"name": "Mine", "protocol_mode": "sequential",
                                                   "overlap": 2}).status_code == 403
    assert not models.Project.objects.exists()

    allowed_to_create(someone)
    client.force_login(someone)
    assert "New project" in client.get(reverse("home")).content.decode()
    ProjectFactory(slug="river-study")  # the address made from the name is taken: the next free one is used
    response = client.post(reverse("project_create"), {"name": "River study", "protocol_mode": "independent",
                                                       "overlap": 3})
    project = models.Project.objects.get(name="River study")
    assert response.status_code == 302 and response["Location"] == reverse("project_detail", args=[project.slug])
    assert project.slug == "river-study-2" and project.overlap == 3 and project.protocol_mode == "independent"
    assert models.Membership.objects.get(project=project, user=someone).role == Role.LEAD
    page = client.get(response["Location"]).content.decode()
    assert "From empty to annotated" in page and "Import the data" in page and "No turns yet." in page


def test_the_settings_page_says_what_each_setting_changes_and_saves_through_the_service(client):
    project = ProjectFactory(slug="pilot")
    lead = member(project, Role.LEAD)
    client.force_login(member(project, Role.ANNOTATOR))
    assert client.get(reverse("project_settings", args=["pilot"])).status_code == 404
    client.force_login(lead)
    page = client.get(reverse("project_settings", args=["pilot"])).content.decode()
    for phrase in ("Raising it opens one more slot on every turn", "anchors them", "Applies to turns compared",
                   "waits until a lead allows a retry", "Turns drawn to check the pre-labeler"):
        assert phrase in page
    form = {"name": project.name, "guidelines": "", "overlap": 3, "protocol_mode": "sequential",
            "imported_gold": "reference", "adjudication_order": "oldest", "drawn_turn_review": "double",
            "qualification_pass_mark": 0.9, "qualification_auto_retries": 1, "severity_threshold": 4,
            "error_types": "contradiction\nother"}
    response = client.post(reverse("project_settings", args=["pilot"]), form, follow=True)
    saved = re.findall(r'<li class="message success">(.*?)</li>', response.content.decode())
    assert saved == ["Settings saved: overlap, guidelines, imported gold, qualification pass mark, qualification auto retries, "
                     "error types."], saved
    project.refresh_from_db()
    assert (project.overlap, project.imported_gold, project.qualification_pass_mark) == (3, ImportedGold.REFERENCE, 0.9)
    assert project.error_types == ["contradiction", "other"] and not project.show_prelabels
    refused = client.post(reverse("project_settings", args=["pilot"]), {**form, "overlap": 0,
                                                                        "qualification_pass_mark": 1.5})
    assert refused.status_code == 400
    project.refresh_from_db()
    assert project.overlap == 3 and project.qualification_pass_mark == 0.9


def test_a_lead_adds_by_username_only_people_they_see_with_one_answer_for_everyone_else(client):
    project, second = ProjectFactory(slug="pilot"), ProjectFactory(slug="second")
    lead = member(project, Role.LEAD, username="lead")
    models.Membership.objects.create(project=second, user=lead, role=Role.LEAD)
    member(second, Role.ANNOTATOR, username="colleague")
    UserFactory(username="stranger")
    client.force_login(lead)
    url = reverse("project_member_add", args=["pilot"])
    answers = []
    for name in ("stranger", "ghost"):
        response = client.post(url, {"username": name, "role": "annotator"})
        errors = re.findall(r'<p class="error" role="alert">(.*?)</p>', response.content.decode())
        answers.append((response.status_code, [error.replace(name, "?") for error in errors]))
    assert answers[0] == answers[1] and answers[0][0] == 400
    assert len(answers[0][1]) == 1 and "invite link" in answers[0][1][0]
    response = client.post(url, {"username": "colleague", "role": "adjudicator"})
    assert response.status_code == 302
    assert models.Membership.objects.get(project=project, user__username="colleague").role == Role.ADJUDICATOR


def test_removing_shows_what_happens_before_and_says_what_was_done(client):
    project = ProjectFactory(slug="pilot")
    lead = member(project, Role.LEAD)
    leaver = member(project, Role.ANNOTATOR, username="leaver")
    slot = AssignmentFactory(turn=TurnFactory(dialogue__project=project), annotator=leaver)
    client.force_login(lead)
    url = reverse("project_member_remove", args=["pilot", leaver.pk])
    page = client.get(url).content.decode()
    assert "1 unsubmitted turn is released" in page and "No open flag." in page
    assert models.Membership.objects.filter(user=leaver).exists()  # nothing happens before the confirmation
    response = client.post(url, {"confirm": "yes"}, follow=True)
    assert "Removed leaver: 1 unsubmitted turn released" in response.content.decode()
    slot.refresh_from_db()
    assert slot.status == models.Assignment.Status.RELEASED
    assert not models.Membership.objects.filter(user=leaver).exists()


def test_an_invite_link_lets_people_join_with_its_role_until_it_is_revoked(client):
    project = ProjectFactory(slug="pilot", name="Pilot")
    lead = member(project, Role.LEAD)
    client.force_login(lead)
    assert client.post(reverse("project_invite_create", args=["pilot"]), {"role": "lead", "days": 7}).status_code == 400
    assert client.post(reverse("project_invite_create", args=["pilot"]), {"role": "annotator", "days": 7}).status_code == 302
    invite = models.ProjectInvite.objects.get(project=project)
    link = reverse("project_join", args=[invite.token])
    assert link in client.get(reverse("project_people", args=["pilot"])).content.decode()

    newcomer = UserFactory(username="newcomer")
    client.force_login(newcomer)
    assert "Join as annotator" in client.get(link, follow=True).content.decode()
    assert not models.Membership.objects.filter(user=newcomer).exists()
    response = client.post(reverse("project_invite"), {"confirm": "yes"})
    assert response.status_code == 302 and response["Location"] == reverse("project_detail", args=["pilot"])
    assert models.Membership.objects.get(project=project, user=newcomer).role == Role.ANNOTATOR
    assert client.get(reverse("project_join", args=["not-a-token"])).status_code == 404

    client.force_login(lead)
    client.post(reverse("project_invite_revoke", args=["pilot", invite.pk]), {"confirm": "yes"})
    late = UserFactory(username="late")
    client.force_login(late)
    assert "This invite link has expired, was revoked" in client.get(link, follow=True).content.decode()
    client.post(reverse("project_invite"), {"confirm": "yes"})
    assert not models.Membership.objects.filter(user=late).exists()
