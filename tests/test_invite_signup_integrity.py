"""Sign-up through an invite link (issue 46, item 11): the per-address limit holds when the requests come all at
once (counted atomically in the cache `make run` uses), and no username impersonates another: a mix of
scripts (``аdmin`` with a Cyrillic а) or a twin by case (``Émile`` beside ``émile``) is refused on every
database, SQLite included, whose case-insensitive comparison knows only ASCII."""

import threading

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.urls import reverse

from annotator import models
from annotator.domain.vocabulary import Role
from tests.factories import ProjectFactory, UserFactory, member

STRONG = "violet-harbour-1987"


def invite_path(project):
    lead = member(project, Role.LEAD, username="lena-the-lead")
    invite = models.ProjectInvite.objects.create(project=project, role=Role.ANNOTATOR, created_by=lead,
                                                 token=f"token-{project.slug}", expires_at="2999-01-01T00:00Z")
    return invite, f"/join/{invite.token}/"


def sign_up(client, username):
    return client.post(reverse("project_invite"), {"action": "signup", "signup-username": username,
                                                   "signup-password1": STRONG, "signup-password2": STRONG})


@pytest.mark.django_db(transaction=True)
def test_simultaneous_sign_ups_from_one_address_stop_at_the_limit(settings):
    settings.SIGNUP_ATTEMPT_LIMIT = 3
    invite, path = invite_path(ProjectFactory(slug="crowd"))
    people = 40
    ready = threading.Barrier(people)
    statuses = [None] * people

    def one(number):
        try:
            client = Client()
            client.get(path)
            ready.wait()
            statuses[number] = sign_up(client, f"crowd{number}").status_code
        finally:
            connection.close()

    threads = [threading.Thread(target=one, args=(number,)) for number in range(people)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    made = get_user_model().objects.filter(username__startswith="crowd")
    assert made.count() == 3
    assert sorted(statuses) == [302] * 3 + [429] * (people - 3)
    invite.refresh_from_db()
    assert invite.uses == 3


@pytest.mark.django_db
@pytest.mark.parametrize("existing, username, says", [
    ("admin", "Admin", "A user with that username already exists."),
    ("émile", "Émile", "A user with that username already exists."),  # beyond ASCII: SQLite's iexact missed it
    ("straße", "STRASSE", "A user with that username already exists."),  # case folding, not lowering
    ("admin", "ａｄｍｉｎ", "A user with that username already exists."),  # full-width: the same name normalised
    ("pay", "рау", "too much like an existing username"),  # Cyrillic р, а, у: the Latin name's look
    ("ana", "ΑΝΑ", "too much like an existing username"),  # Greek capitals alpha, nu, alpha
])
def test_a_username_that_passes_for_an_existing_one_is_refused(client, existing, username, says):
    _, path = invite_path(ProjectFactory())
    UserFactory(username=existing)
    client.get(path)
    response = sign_up(client, username)
    assert response.status_code == 400
    assert says in response.content.decode()
    assert get_user_model().objects.count() == 2  # the lead and the existing one


@pytest.mark.django_db
@pytest.mark.parametrize("username", ["аdmin", "pаypal", "gοogle"])  # Cyrillic а, Greek ο among Latin letters
def test_a_username_mixing_scripts_is_refused(client, username):
    _, path = invite_path(ProjectFactory())
    client.get(path)
    response = sign_up(client, username)
    assert response.status_code == 400
    assert "letters of one alphabet" in response.content.decode()
    assert not get_user_model().objects.filter(username=username).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("username", ["émile", "Jürgen_2", "иван", "ελένη", "山田たろう", "Oʼbrien", "ana.maria-1"])
def test_names_in_one_script_are_made_as_typed(client, username):
    _, path = invite_path(ProjectFactory())
    client.get(path)
    response = sign_up(client, username)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert get_user_model().objects.filter(username=username).exists()
