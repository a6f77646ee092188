"""Invite links in a real browser (issue 41, items 1 and 2): the lead copies the whole link with the Copy button;
someone without an account opens it signed out, creates their account there and lands in the project with the
link's role, and neither of them opens the admin."""

import pytest
from playwright.sync_api import expect

from annotator import models
from annotator.domain.vocabulary import Role
from tests.factories import ProjectFactory, TurnFactory, UserFactory, member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=30_000)


@pytest.fixture
def signed_out_page(browser, live_server):
    """A browser page with no session: someone who has no account on the site."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=live_server.url)
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    context.set_offline(True)
    context.close()


def test_a_lead_copies_an_invite_link_and_a_newcomer_signs_up_through_it_without_the_admin(
        page_for, signed_out_page, live_server):
    project = ProjectFactory(slug="pilot", name="Pilot study")
    lena = member(project, Role.LEAD, username="lena")
    TurnFactory(dialogue__project=project)
    lead = page_for(lena)
    lead.set_default_timeout(60_000)
    lead.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    visited = []
    lead.on("request", lambda request: visited.append(request.url))
    signed_out_page.on("request", lambda request: visited.append(request.url))

    lead.goto("/p/pilot/people/")
    lead.get_by_label("They join as").select_option("annotator")
    lead.get_by_role("button", name="Make an invite link").click()
    field = lead.get_by_label("Invite link 1")
    link = field.input_value()
    assert "/join/" in link
    # The whole link shows in its field (it was cut off), and Copy puts it on the clipboard.
    assert field.evaluate("el => el.scrollWidth <= el.clientWidth")
    lead.get_by_role("button", name="Copy invite link 1").click()
    expect(lead.locator(f"#invite-{models.ProjectInvite.objects.get().pk}-status")).to_have_text("Link copied.")
    assert lead.evaluate("navigator.clipboard.readText()") == link

    page = signed_out_page
    page.goto(link)
    expect(page).to_have_url(f"{live_server.url}/join/")  # the token left the address bar
    expect(page.get_by_role("heading", name="Join Pilot study")).to_be_visible()
    expect(page.locator("main")).to_contain_text("as annotator")
    signup = page.locator("#join-signup")
    signup.get_by_label("Username").fill("nina")
    signup.get_by_label("Password", exact=True).fill("violet-harbour-1987")
    signup.get_by_label("Password confirmation").fill("violet-harbour-1987")
    signup.get_by_role("button", name="Create my account and join as annotator").click()
    expect(page.get_by_text("You joined Pilot study as annotator.")).to_be_visible()
    expect(page.get_by_role("heading", name="Pilot study")).to_be_visible()
    assert models.Membership.objects.get(project=project, user__username="nina").role == Role.ANNOTATOR
    assert not [url for url in visited if "/admin/" in url]


def test_the_signed_out_invite_page_and_the_creators_page_have_no_serious_accessibility_violation(
        page_for, signed_out_page):
    from tests.test_accessibility_browser import violations_on

    project = ProjectFactory(slug="pilot", name="Pilot")
    invite = models.ProjectInvite.objects.create(project=project, token="t" * 43, role=Role.ADJUDICATOR,
                                                 expires_at="2099-01-01T00:00:00Z")
    found = violations_on(signed_out_page, f"/join/{invite.token}/")
    expect(signed_out_page.get_by_role("heading", name="Join Pilot")).to_be_visible()
    root = page_for(UserFactory(username="root", is_staff=True, is_superuser=True))
    root.set_default_timeout(60_000)
    found += violations_on(root, "/site/project-creators/")
    assert not found, "\n".join(found)
