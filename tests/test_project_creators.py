"""Who may create projects (issue 41, item 3): a site administrator finds the permission on a page of its own,
linked from the admin's index and the home page, grants it by username and revokes it; nobody else reaches it."""

import pytest
from django.contrib.auth.models import Group, Permission
from django.urls import reverse

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_a_site_administrator_grants_and_revokes_project_creation_on_its_page(client):
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    bea = UserFactory(username="bea")
    grouped = UserFactory(username="gus")
    group = Group.objects.create(name="Project creators")
    group.permissions.add(Permission.objects.get(codename="add_project", content_type__app_label="annotator"))
    grouped.groups.add(group)
    client.force_login(root)
    assert reverse("project_creators") in client.get(reverse("admin:index")).content.decode()
    assert reverse("project_creators") in client.get(reverse("home")).content.decode()
    page = client.get(reverse("project_creators")).content.decode()
    assert "Annotation | project | Can add project" in page
    assert "gus" in page and "through the group Project creators" in page and "bea" not in page

    assert client.post(reverse("project_creators"), {"username": "nobody"}).status_code == 400
    assert client.post(reverse("project_creators"), {"username": "bea"}).status_code == 302
    bea_client = type(client)()
    bea_client.force_login(bea)
    assert bea_client.get(reverse("project_create")).status_code == 200
    assert "granted on their account" in client.get(reverse("project_creators")).content.decode()

    client.post(reverse("project_creator_revoke", args=[bea.pk]), {"confirm": "yes"})
    bea_client.force_login(type(bea).objects.get(pk=bea.pk))  # a fresh user: permissions are cached per object
    assert bea_client.get(reverse("project_create")).status_code == 403
    # The page is the site administrator's: a lead or a staff member who may not change accounts is refused.
    assert bea_client.get(reverse("project_creators")).status_code == 403
    staff = UserFactory(username="staff", is_staff=True)
    bea_client.force_login(staff)
    assert bea_client.get(reverse("project_creators")).status_code == 403
    assert bea_client.post(reverse("project_creators"), {"username": "staff"}).status_code == 403


def test_a_lead_who_may_not_create_projects_is_told_who_allows_it_and_how(client):
    """Issue 50, item 1: the home page of a lead without the permission showed only "Your projects"."""
    from annotator.domain.vocabulary import Role
    from tests.factories import ProjectFactory, member

    lead = member(ProjectFactory(), role=Role.LEAD, username="lena")
    client.force_login(lead)
    page = client.get(reverse("home")).content.decode()
    assert 'id="ask-to-create"' in page
    assert "site administrator" in page and "<strong>lena</strong>" in page and "Who may create projects" in page
    assert "Annotation | project | Can add project" in page
    # Once allowed, the button replaces the explanation; an annotator is not told about a right they do not need.
    lead.user_permissions.add(Permission.objects.get(codename="add_project", content_type__app_label="annotator"))
    client.force_login(type(lead).objects.get(pk=lead.pk))
    page = client.get(reverse("home")).content.decode()
    assert 'id="ask-to-create"' not in page and reverse("project_create") in page
    annotator = member(ProjectFactory())
    client.force_login(annotator)
    assert 'id="ask-to-create"' not in client.get(reverse("home")).content.decode()
