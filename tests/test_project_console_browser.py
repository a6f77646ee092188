"""A lead who is not staff runs a project from the app alone, in a real browser (issue 26, item 1): creates it,
imports its data, adds two annotators and an adjudicator, and exports gold, without opening the admin."""

import json
import re

import pytest
from django.contrib.auth.models import Group, Permission
from playwright.sync_api import expect

from annotator import models
from annotator.domain.vocabulary import Role
from tests.conftest import SHARED_DATA
from tests.factories import ProjectFactory, UserFactory, member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

expect.set_options(timeout=30_000)
CB = SHARED_DATA / "cognibench-sample"


@pytest.fixture
def worker(start_celery_worker, private_files):
    start_celery_worker(extra_env={"MEDIA_ROOT": str(private_files)})


def test_a_lead_who_is_not_staff_creates_imports_staffs_and_exports_without_the_admin(page_for, worker):
    # The site administrator lets Lena create projects (a group holding "Can add project", as README says).
    lena = UserFactory(username="lena")
    group = Group.objects.create(name="Project creators")
    group.permissions.add(Permission.objects.get(codename="add_project", content_type__app_label="annotator"))
    lena.groups.add(group)
    # Two people Lena already works with on an earlier project; a third she knows nothing about yet.
    earlier = ProjectFactory(slug="earlier")
    models.Membership.objects.create(project=earlier, user=lena, role=Role.LEAD)
    member(earlier, Role.ANNOTATOR, username="ana")
    member(earlier, Role.ANNOTATOR, username="adi")
    bea = UserFactory(username="bea")

    page = page_for(lena)
    visited = []
    page.on("request", lambda request: visited.append(request.url))
    page.goto("/")
    page.get_by_role("link", name="New project").click()
    page.get_by_label("Name", exact=True).fill("Pilot study")
    page.get_by_role("button", name="Create the project").click()
    expect(page.get_by_role("heading", name="Pilot study")).to_be_visible()
    expect(page.locator("#step-import")).to_contain_text("To do")

    # Import the data from the guide's first step.
    page.locator("#step-import").get_by_role("link", name="Import a file").click()
    page.get_by_label("Format").select_option("cognibench")
    page.get_by_label("File").set_input_files(str(CB / "dialogues.json"))
    page.get_by_label("labels.json (CogniBench, optional)").set_input_files(str(CB / "labels.json"))
    page.get_by_role("button", name="Import").click()
    expect(page.locator(".import-summary")).to_contain_text("50 turns", timeout=120_000)

    # People: one annotator and the adjudicator by username, the other annotator with an invite link.
    page.goto("/p/pilot-study/")
    expect(page.locator("#step-import")).to_contain_text("Done")
    page.locator("#step-people").get_by_role("link", name="Add people").click()
    page.get_by_label("Username", exact=True).fill("ana")
    page.get_by_label("Role", exact=True).select_option("annotator")
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.get_by_text("ana joined as annotator.")).to_be_visible()
    page.get_by_label("Username", exact=True).fill("bea")  # not someone Lena can see: one answer, nothing learned
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.get_by_text("Nobody you can add by username is called 'bea'")).to_be_visible()
    page.get_by_label("Username", exact=True).fill("adi")
    page.get_by_label("Role", exact=True).select_option("adjudicator")
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.get_by_text("adi joined as adjudicator.")).to_be_visible()
    page.get_by_label("They join as").select_option("annotator")
    page.get_by_role("button", name="Make an invite link").click()
    link = page.get_by_label("Invite link 1").input_value()

    newcomer = page_for(bea)
    newcomer.goto(link)
    newcomer.get_by_role("button", name="Join as annotator").click()
    expect(newcomer.get_by_role("heading", name="Pilot study")).to_be_visible()

    page.reload()
    for name, role in (("ana", "annotator"), ("adi", "adjudicator"), ("bea", "annotator")):
        expect(page.get_by_label(f"Role of {name}")).to_have_value(role)
    page.goto("/p/pilot-study/")
    expect(page.locator("#step-people")).to_contain_text("Done")

    # Gold: the imported labels, exported from the project page.
    with page.expect_download() as download:
        page.get_by_role("link", name="Export gold JSONL", exact=True).click()
    lines = [json.loads(line) for line in open(download.value.path()) if line.strip()]
    assert len(lines) == 50 and any(sentence.get("gold") for line in lines for sentence in line["sentences"])
    assert not [url for url in visited if "/admin/" in url]
    assert not lena.is_staff


def test_the_console_pages_have_no_serious_accessibility_violation(page_for):
    from tests.test_accessibility_browser import violations_on

    project = ProjectFactory(slug="pilot", name="Pilot")
    lena = member(project, Role.LEAD, username="lena")
    lena.is_superuser = True  # may create projects; still a member-lead of this one
    lena.save(update_fields=["is_superuser"])
    ana = member(project, Role.ANNOTATOR, username="ana")
    invite = models.ProjectInvite.objects.create(project=project, token="t" * 43, role=Role.ANNOTATOR,
                                                 expires_at="2099-01-01T00:00:00Z")
    lead = page_for(lena)
    found = []
    for path in ("/", "/projects/new/", "/p/pilot/", "/p/pilot/settings/", "/p/pilot/people/",
                 f"/p/pilot/people/{ana.pk}/remove/"):
        found += violations_on(lead, path)
    found += violations_on(page_for(UserFactory(username="newcomer")), f"/join/{invite.token}/")
    assert not found, "\n".join(found)
