import pytest
from django.urls import reverse

from annotator.domain.vocabulary import Role
from tests.factories import DEFAULT_PASSWORD, ProjectFactory, UserFactory, member

pytestmark = pytest.mark.django_db


def test_every_page_but_login_requires_login(client):
    project = ProjectFactory()
    for url in [reverse("home"), reverse("project_detail", args=[project.slug])]:
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))
    assert client.get(reverse("login")).status_code == 200


def test_login_then_home_lists_only_my_projects(client):
    mine, other = ProjectFactory(name="Mine"), ProjectFactory(name="Other")
    user = member(mine, Role.ANNOTATOR)
    response = client.post(reverse("login"), {"username": user.username, "password": DEFAULT_PASSWORD})
    assert response.status_code == 302
    page = client.get(reverse("home")).content.decode()
    assert "Mine" in page and "Other" not in page


def test_project_of_which_i_am_not_a_member_is_404(client):
    project = ProjectFactory()
    client.force_login(UserFactory())
    assert client.get(reverse("project_detail", args=[project.slug])).status_code == 404


def test_superusers_see_every_project_and_the_staff_flag_grants_nothing(client):
    project = ProjectFactory()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    assert client.get(reverse("project_detail", args=[project.slug])).status_code == 200
    client.force_login(UserFactory(is_staff=True))
    assert client.get(reverse("project_detail", args=[project.slug])).status_code == 404
