"""Ids a screen reader follows (issue 46, item 15): on the pages a lead and an annotator use, and their forms shown
back with errors, every id that ``aria-describedby``, ``aria-labelledby``, ``aria-controls`` or a label's ``for``
names is on the page, and no id is on it twice.

A help text named by ``aria-describedby`` under another id is never read; with two elements of one id, a label
names the first one only. axe (``test_accessibility_browser.py``) counts neither as serious, so this reads the
HTML the server sends."""

import io
import re
from collections import Counter
from html.parser import HTMLParser

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotator.models import Project, Turn
from annotator.work.models import Assignment
from tests.factories import AssignmentFactory

pytestmark = pytest.mark.django_db

REFERRING = ("aria-describedby", "aria-labelledby", "aria-controls", "for")


class _Ids(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = Counter()
        self.references = []  # (tag, attribute, id)
        self.field_help = []  # ids of the help paragraphs of partials/field.html

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if attributes.get("id"):
            self.ids[attributes["id"]] += 1
        if "field-help" in (attributes.get("class") or "").split():
            self.field_help.append(attributes.get("id"))
        for name in REFERRING:
            if tag != "output" and attributes.get(name):
                self.references += [(tag, name, ref) for ref in attributes[name].split()]

    handle_startendtag = handle_starttag


def id_problems(html: str) -> list[str]:
    """What is wrong with the page's ids: each id named but missing, each id used more than once."""
    parser = _Ids()
    parser.feed(html)
    missing = [f"<{tag} {name}={ref!r}>: no element has this id" for tag, name, ref in parser.references
               if ref not in parser.ids]
    repeated = [f"id {ident!r} is on {count} elements" for ident, count in parser.ids.items() if count > 1]
    return missing + repeated


@pytest.fixture
def demo():
    call_command("load_demo", stdout=io.StringIO())
    project = Project.objects.get(slug="demo")
    users = {user.username: user for user in get_user_model().objects.all()}
    turn = Turn.objects.filter(dialogue__project=project, is_qualification=False).order_by("pk").first()
    assignment = AssignmentFactory(turn=turn, annotator=users["annotator1"], status=Assignment.Status.ASSIGNED)
    return project, users, assignment


def problems_on(client, method, path, data=None):
    response = client.post(path, data) if method == "post" else client.get(path)
    assert response.status_code in (200, 400, 422), f"{method} {path}: {response.status_code}"
    return [f"{method} {path}: {problem}" for problem in id_problems(response.content.decode())]


def test_the_checker_finds_a_missing_and_a_repeated_id():
    page = ('<label for="id_a">A</label><input id="id_a" aria-describedby="id_a_helptext">'
            '<p id="id_a_help">Help</p><select id="id_role"></select><select id="id_role"></select>')
    assert id_problems(page) == ["<input aria-describedby='id_a_helptext'>: no element has this id",
                                 "id 'id_role' is on 2 elements"]


def test_every_id_a_page_names_is_on_it_once(demo, client, settings):
    project, users, assignment = demo
    slug = project.slug
    found = []
    client.force_login(users["lead"])
    for path in (f"/p/{slug}/", f"/p/{slug}/settings/", f"/p/{slug}/people/", f"/p/{slug}/imports/new/",
                 f"/p/{slug}/protocol/", f"/p/{slug}/qa/qualification/", f"/p/{slug}/autolabel/",
                 f"/p/{slug}/autolabel/endpoints/", f"/p/{slug}/turns/", f"/p/{slug}/assignments/",
                 f"/p/{slug}/adjudication/", "/qa/questions/"):
        found += problems_on(client, "get", path)
    # The forms shown back with their errors.
    for path, data in ((f"/p/{slug}/settings/", {"name": "", "overlap": "0"}),
                       (f"/p/{slug}/people/add/", {"username": "nobody-of-that-name", "role": "annotator"}),
                       (f"/p/{slug}/invites/new/", {"role": "annotator", "days": "0"}),
                       (f"/p/{slug}/imports/new/", {}), (f"/p/{slug}/autolabel/", {"threshold": "x"}),
                       (f"/p/{slug}/autolabel/endpoints/", {"base_url": "x", "concurrency": "0"}),
                       (f"/p/{slug}/protocol/", {"document": "{", "label_mapping": "["}),
                       (f"/p/{slug}/qa/qualification/retries/", {"qualification_auto_retries": "-1"})):
        found += problems_on(client, "post", path, data)
    client.post(f"/p/{slug}/invites/new/", {"role": "annotator", "days": "14"})
    link = re.search(r'value="https?://testserver(/join/[^"]+/)"', client.get(f"/p/{slug}/people/").content.decode())
    client.force_login(users["admin"])
    for path in ("/projects/new/", "/site/project-creators/"):
        found += problems_on(client, "get", path)
    found += problems_on(client, "post", "/projects/new/", {"name": ""})
    client.force_login(users["annotator1"])
    for path in ("/", f"/p/{slug}/", f"/p/{slug}/work/", f"/a/{assignment.pk}/", "/qa/mine/", "/qa/feedback/"):
        found += problems_on(client, "get", path)
    # The invite page, signed out: signing in and creating an account (a password's help text), and its errors.
    client.logout()
    settings.INVITE_SIGNUP = True
    assert client.get(link.group(1)).status_code == 302
    found += problems_on(client, "get", "/join/")
    found += problems_on(client, "post", "/join/", {"action": "signup", "signup-username": "newcomer",
                                                    "signup-password1": "a", "signup-password2": "b"})
    assert not found, "\n".join(found)


def test_every_help_paragraph_of_the_settings_is_read_with_its_field(demo, client):
    """A field's help text and its explanation (what changing the setting does) are one paragraph; a field with an
    explanation and no help text (the protocol mode, triplets, severity ...) was never described either."""
    project, users, _ = demo
    client.force_login(users["lead"])
    parser = _Ids()
    parser.feed(client.get(f"/p/{project.slug}/settings/").content.decode())
    described = {ref for _, name, ref in parser.references if name == "aria-describedby"}
    assert len(parser.field_help) >= 17
    assert [ident for ident in parser.field_help if ident not in described] == []
