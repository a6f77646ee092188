"""The demo data: original dialogues, one user per role, idempotent loading."""

from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command
from django.test import RequestFactory

from annotator.models import GoldLabel, Membership, Project, Turn

pytestmark = pytest.mark.django_db


def test_load_demo_twice():
    out = StringIO()
    call_command("load_demo", stdout=out)
    text = out.getvalue()
    project = Project.objects.get(slug="demo")
    assert Turn.objects.filter(dialogue__project=project).count() == 9
    assert Turn.objects.filter(dialogue__project=project, is_qualification=True).count() == 2
    # Qualification turns come with gold; the others are left to the annotators.
    assert GoldLabel.objects.filter(sentence__turn__is_qualification=False).count() == 0
    assert GoldLabel.objects.filter(sentence__turn__is_qualification=True).count() == 10
    roles = dict(Membership.objects.filter(project=project).values_list("user__username", "role"))
    assert roles == {"lead": "lead", "adjudicator": "adjudicator", "annotator1": "annotator",
                     "annotator2": "annotator", "annotator3": "annotator"}
    for username in ("admin", "lead", "adjudicator", "annotator1", "annotator2", "annotator3"):
        assert f"{username}-demo" in text
        # With the request, as every sign-in route calls it (the lock-out backend requires one).
        assert authenticate(RequestFactory().post("/accounts/login/"), username=username,
                            password=f"{username}-demo") is not None
    assert authenticate(RequestFactory().post("/accounts/login/"), username="admin", password="admin-demo").is_superuser

    out = StringIO()
    call_command("load_demo", stdout=out)
    assert "nothing changed" in out.getvalue()
    assert Turn.objects.filter(dialogue__project=project).count() == 9


def test_the_home_page_and_the_project_page_count_the_same_turns():
    """One definition of a project's size: turns to annotate, the qualification turns named apart."""
    import re

    from django.contrib.auth import get_user_model
    from django.test import Client

    call_command("load_demo", stdout=StringIO())
    project = Project.objects.get(slug="demo")
    lead = get_user_model().objects.get(username="lead")
    client = Client()
    client.force_login(lead)
    home = client.get("/").content.decode()
    page = client.get(f"/p/{project.slug}/").content.decode()
    work = Turn.objects.filter(dialogue__project=project, is_qualification=False).count()
    qualification = Turn.objects.filter(dialogue__project=project, is_qualification=True).count()
    assert qualification > 0  # the demo has a qualification set: the case that disagreed
    row = home.split(f'href="/p/{project.slug}/"')[1].split("</tr>")[0]
    assert re.search(rf"<td>{work} <span class=\"muted\">\(\+ {qualification} qualification\)</span></td>", row), row
    assert f"{work} turns to annotate (+ {qualification} qualification)" in page
