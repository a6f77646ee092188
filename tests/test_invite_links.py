"""Invite links (issue 41, items 1 and 2; issue 38, items 8 and 10): a signed-out person who opens one sees the
project and the role and gets in by signing in or creating an account; the token stays out of the URLs that
get logged; a link made before someone's removal does not let them back in; a link is not made twice."""

import re

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotator import models
from annotator.domain.vocabulary import Role
from tests.factories import ProjectFactory, TurnFactory, UserFactory, member

pytestmark = pytest.mark.django_db

STRONG = "violet-harbour-1987"


@pytest.fixture
def pilot(client):
    """Project "Pilot study" with a lead, an annotator and a turn; an annotator link made on the People page."""
    project = ProjectFactory(slug="pilot", name="Pilot study")
    lead = member(project, Role.LEAD, username="lena-the-lead")
    member(project, Role.ANNOTATOR, username="ana-annotates")
    TurnFactory(dialogue__project=project)
    client.force_login(lead)
    client.post(reverse("project_invite_create", args=["pilot"]), {"role": "annotator", "days": 14})
    invite = models.ProjectInvite.objects.get(project=project)
    people = client.get(reverse("project_people", args=["pilot"])).content.decode()
    link = re.search(r'value="(http[^"]*/join/[^"]+/)"', people).group(1)
    client.logout()
    return {"project": project, "lead": lead, "invite": invite, "path": link.split("testserver", 1)[1]}


def test_a_signed_out_visitor_sees_the_project_and_role_and_joins_by_creating_an_account(client, pilot):
    opened = client.get(pilot["path"])
    # The link puts its token in the session and shows the invite at an address without it.
    assert opened.status_code == 302 and opened["Location"] == reverse("project_invite")
    page = client.get(opened["Location"])
    assert page.status_code == 200
    html = page.content.decode()
    assert "Pilot study" in html and "as <strong>annotator</strong>" in html
    assert 'name="signup-username"' in html and 'name="signup-password1"' in html and 'name="username"' in html
    # Blind: the name and the role, nothing else (no member, no lead, no figure of the project).
    for secret in ("lena-the-lead", "ana-annotates", pilot["invite"].token, "/p/pilot/"):
        assert secret not in html

    joined = client.post(reverse("project_invite"), {"action": "signup", "signup-username": "newcomer",
                                                     "signup-password1": STRONG, "signup-password2": STRONG})
    assert joined.status_code == 302 and joined["Location"] == reverse("project_detail", args=["pilot"])
    newcomer = get_user_model().objects.get(username="newcomer")
    assert newcomer.check_password(STRONG) and not newcomer.is_staff
    assert models.Membership.objects.get(project=pilot["project"], user=newcomer).role == Role.ANNOTATOR
    assert client.get(reverse("project_detail", args=["pilot"])).status_code == 200  # signed in as newcomer
    pilot["invite"].refresh_from_db()
    assert pilot["invite"].uses == 1


def test_signing_up_refuses_a_weak_password_a_taken_name_and_nul_with_a_400_and_makes_nothing(client, pilot):
    client.get(pilot["path"])
    UserFactory(username="Taken")
    for username, first, second, says in (
            ("weakling", "password", "password", "This password is too common."),
            ("weakling", "12345678901", "12345678901", "This password is entirely numeric."),
            ("mismatch", STRONG, STRONG + "x", "didn’t match"),
            ("taken", STRONG, STRONG, "A user with that username already exists."),
            ("a\x00b", STRONG, STRONG, "Null characters are not allowed.")):
        response = client.post(reverse("project_invite"), {"action": "signup", "signup-username": username,
                                                           "signup-password1": first, "signup-password2": second})
        assert response.status_code == 400 and says in response.content.decode(), username
    assert get_user_model().objects.count() == 3  # the lead, the annotator, "Taken"
    assert models.Membership.objects.filter(project=pilot["project"]).count() == 2


def test_signing_in_on_the_invite_page_joins_and_a_wrong_password_counts_as_a_failed_sign_in(client, pilot):
    someone = UserFactory(username="someone")
    someone.set_password(STRONG)
    someone.save()
    client.get(pilot["path"])
    wrong = client.post(reverse("project_invite"), {"action": "signin", "username": "someone", "password": "nope"})
    assert wrong.status_code == 400 and AccessAttempt.objects.filter(username="someone").count() == 1
    right = client.post(reverse("project_invite"), {"action": "signin", "username": "someone", "password": STRONG})
    assert right.status_code == 302 and right["Location"] == reverse("project_detail", args=["pilot"])
    assert models.Membership.objects.get(project=pilot["project"], user=someone).role == Role.ANNOTATOR


def test_sign_up_is_throttled_per_address_like_sign_in(client, pilot, settings):
    settings.SIGNUP_ATTEMPT_LIMIT = 3
    client.get(pilot["path"])
    for number in range(3):
        refused = client.post(reverse("project_invite"), {"action": "signup", "signup-username": f"bot{number}",
                                                          "signup-password1": "password", "signup-password2": "password"})
        assert refused.status_code == 400
    throttled = client.post(reverse("project_invite"), {"action": "signup", "signup-username": "bot9",
                                                        "signup-password1": STRONG, "signup-password2": STRONG})
    assert throttled.status_code == 429 and int(throttled["Retry-After"]) > 0
    assert "Too many accounts were asked for from this address" in throttled.content.decode()
    assert not get_user_model().objects.filter(username__startswith="bot").exists()


def test_the_site_can_turn_sign_up_off(client, pilot, settings):
    settings.INVITE_SIGNUP = False
    client.get(pilot["path"])
    html = client.get(reverse("project_invite")).content.decode()
    assert 'name="signup-username"' not in html and 'name="username"' in html
    assert "accounts are made by its administrator" in html
    refused = client.post(reverse("project_invite"), {"action": "signup", "signup-username": "newcomer",
                                                      "signup-password1": STRONG, "signup-password2": STRONG})
    assert refused.status_code == 400
    assert not get_user_model().objects.filter(username="newcomer").exists()


def test_the_token_stays_out_of_the_login_redirect_later_urls_and_referrers(client, pilot):
    opened = client.get(pilot["path"])
    assert opened["Referrer-Policy"] == "no-referrer"
    assert pilot["invite"].token not in opened["Location"]  # before: /accounts/login/?next=/join/<token>/
    page = client.get(opened["Location"])
    assert pilot["invite"].token not in page.content.decode()
    # The site's pages (the invite page too: its address holds no token) send their address to this site only.
    assert page["Referrer-Policy"] == client.get(reverse("login"))["Referrer-Policy"] == "same-origin"
    # A browser that opened no link has no invite to show.
    assert type(client)().get(reverse("project_invite")).status_code == 404


def test_a_removed_member_does_not_rejoin_through_a_link_made_before_the_removal(client, pilot):
    project, lead = pilot["project"], pilot["lead"]
    adjudicator_link = models.ProjectInvite.objects.create(project=project, role=Role.ADJUDICATOR, token="a" * 43,
                                                           expires_at=pilot["invite"].expires_at)
    adi = UserFactory(username="adi")
    client.force_login(adi)
    client.get(reverse("project_join", args=[adjudicator_link.token]))
    client.post(reverse("project_invite"), {"confirm": "yes"})
    assert client.get(reverse("gold_queue", args=["pilot"])).status_code == 200

    client.force_login(lead)
    removal_page = client.get(reverse("project_member_remove", args=["pilot", adi.pk])).content.decode()
    assert "Invite links made before the removal no longer let them back in" in removal_page
    done = client.post(reverse("project_member_remove", args=["pilot", adi.pk]), {"confirm": "yes"}, follow=True)
    assert "Invite links made before the removal no longer let them back in" in done.content.decode()

    client.force_login(adi)
    client.get(reverse("project_join", args=[adjudicator_link.token]))
    refused = client.post(reverse("project_invite"), {"confirm": "yes"}, follow=True)
    assert "made before you were removed" in refused.content.decode()
    assert not models.Membership.objects.filter(project=project, user=adi).exists()
    assert client.get(reverse("gold_queue", args=["pilot"])).status_code == 404  # no queue back

    # A link the lead makes after the removal takes them back.
    client.force_login(lead)
    client.post(reverse("project_invite_create", args=["pilot"]), {"role": "adjudicator", "days": 7})
    fresh = models.ProjectInvite.objects.filter(role=Role.ADJUDICATOR).exclude(pk=adjudicator_link.pk).get()
    client.force_login(adi)
    client.get(reverse("project_join", args=[fresh.token]))
    client.post(reverse("project_invite"), {"confirm": "yes"})
    assert models.Membership.objects.get(project=project, user=adi).role == Role.ADJUDICATOR


def test_making_the_same_link_twice_shows_the_open_one_instead_of_a_second(client, pilot):
    client.force_login(pilot["lead"])
    again = client.post(reverse("project_invite_create", args=["pilot"]), {"role": "annotator", "days": 14},
                        follow=True)
    assert "exists already" in again.content.decode()
    assert models.ProjectInvite.objects.filter(project=pilot["project"]).count() == 1
    client.post(reverse("project_invite_create", args=["pilot"]), {"role": "annotator", "days": 30})
    client.post(reverse("project_invite_create", args=["pilot"]), {"role": "adjudicator", "days": 14})
    assert models.ProjectInvite.objects.filter(project=pilot["project"]).count() == 3


def test_a_link_for_one_person_lets_the_first_in_and_then_closes(client):
    """Issue 50, item 5: a link was one multi-use link per role and expiry; a lead may now make one per person
    (Label Studio's single-use invite), without a migration: the mark is in the token."""
    project = ProjectFactory(slug="pilot", name="Pilot study")
    lead = member(project, Role.LEAD, username="lena-the-lead")
    client.force_login(lead)
    people_url = reverse("project_people", args=["pilot"])
    assert 'name="single_use"' in client.get(people_url).content.decode()
    shared = client.post(reverse("project_invite_create", args=["pilot"]), {"role": "annotator", "days": 14})
    for _ in range(2):  # each one a new link, never the shared one back
        client.post(reverse("project_invite_create", args=["pilot"]),
                    {"role": "annotator", "days": 14, "single_use": "on"})
    assert shared.status_code == 302 and models.ProjectInvite.objects.filter(project=project).count() == 3
    people = client.get(people_url).content.decode()
    assert people.count("(one person)") == 2
    first, second = models.ProjectInvite.objects.filter(project=project, token__startswith="once.").order_by("pk")
    client.logout()

    ada = UserFactory(username="ada")
    client.force_login(ada)
    client.get(reverse("project_join", args=[first.token]))
    assert client.post(reverse("project_invite"), {"confirm": "yes"}).status_code == 302
    assert models.Membership.objects.filter(project=project, user=ada).exists()
    # Used: the next person is turned away, and the People page no longer lists it; the other link still works.
    bob = UserFactory(username="bob")
    client.force_login(bob)
    client.get(reverse("project_join", args=[first.token]))
    page = client.get(reverse("project_invite")).content.decode()
    assert "was for one person who has joined with it" in page and "Join as annotator" not in page
    client.post(reverse("project_invite"), {"confirm": "yes"})
    assert not models.Membership.objects.filter(project=project, user=bob).exists()
    client.get(reverse("project_join", args=[second.token]))
    client.post(reverse("project_invite"), {"confirm": "yes"})
    assert models.Membership.objects.get(project=project, user=bob).role == Role.ANNOTATOR
    client.force_login(lead)
    people = client.get(people_url).content.decode()
    assert first.token not in people and second.token not in people and people.count("(one person)") == 0
