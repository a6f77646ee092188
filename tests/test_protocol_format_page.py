"""The protocol format's description is served in the app, rendered from docs/protocols.md, and the protocol page
links it: a lead on a server has no repository to read it in (issue 41)."""

import re
from pathlib import Path

import pytest
from django.test import Client

from annotator.domain.vocabulary import Role

from .factories import ProjectFactory, member

pytestmark = pytest.mark.django_db
DOCUMENT = Path(__file__).resolve().parent.parent / "docs" / "protocols.md"


def signed_in(user):
    client = Client()
    client.force_login(user)
    return client


def test_the_protocol_page_links_the_format_and_the_format_is_the_docs_file_rendered():
    project = ProjectFactory()
    lead = member(project, Role.LEAD)
    client = signed_in(lead)
    page = client.get(f"/p/{project.slug}/protocol/").content.decode()
    link = re.search(r'<a href="([^"]+)" data-testid="protocol-format-link"', page)
    assert link, "the protocol page links the format's description"
    answer = client.get(link.group(1))
    assert answer.status_code == 200
    html = answer.content.decode()
    # Every heading of the file is on the page, and its tables are tables.
    headings = [line.lstrip("#").strip() for line in DOCUMENT.read_text().splitlines() if line.startswith("## ")]
    assert headings and all(heading.replace("`", "").split(" ")[0] in html for heading in headings)
    article = html.split('data-testid="protocol-format">')[1].split("</article>")[0]
    assert "<table>" in article and "<script" not in article


def test_the_format_needs_a_signed_in_user_and_reveals_no_project():
    answer = Client().get("/help/protocol-format/")
    assert answer.status_code == 302 and "/accounts/login/" in answer["Location"]
    project = ProjectFactory(name="Secret project")
    annotator = member(ProjectFactory(), Role.ANNOTATOR)
    assert "Secret project" not in signed_in(annotator).get("/help/protocol-format/").content.decode()
    assert project.name == "Secret project"


def test_new_project_names_the_protocols_and_links_the_served_languages_page():
    """Issue 50, item 2: the protocol select showed file ids (cognibench, halludetect) and the language's help text
    cited docs/languages.md, a path a lead on a server does not have."""
    from django.contrib.auth.models import Permission
    from django.urls import reverse

    creator = member(ProjectFactory(), Role.LEAD)
    creator.user_permissions.add(Permission.objects.get(codename="add_project", content_type__app_label="annotator"))
    client = signed_in(creator)
    page = client.get(reverse("project_create")).content.decode()
    assert '<option value="cognibench" selected>CogniBench</option>' in page
    assert '<option value="halludetect">HalluDetect (legal answers)</option>' in page
    assert "docs/languages.md" not in page
    link = re.search(r'<a href="([^"]+)">Languages</a>', page)
    assert link and link.group(1) == reverse("languages_help")
    languages = client.get(link.group(1)).content.decode()
    assert "Units: which segmenter" in languages and "<code>docs/languages.md</code>" in languages
    # The protocol page's shipped select names them the same way.
    protocol_page = client.get(reverse("project_protocol", args=[ProjectFactory.create().slug]))
    assert protocol_page.status_code == 404  # not a member: the same page for their own project below
    lead_project = creator.memberships.first().project
    assert "HalluDetect (legal answers)</option>" in client.get(
        reverse("project_protocol", args=[lead_project.slug])).content.decode()
