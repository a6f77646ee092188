"""A tab opened before a lead changed the protocol (nothing labelled yet) is refused and reloads onto the new
document with the notice a split or merge shows, in Chromium (issue 38, item 3; the routes that change a protocol
are tested in tests/test_protocol_change_stale_pages.py).

Before, the tab's walk to "faithful" was read under the new document, where the lead had swapped the labels of the
faithfulness step's two answers, and saved as "invented": a label the annotator did not choose."""

import re

import pytest
from playwright.sync_api import expect

from annotator.domain.vocabulary import Label, Role
from annotator.models import SentenceAnnotation
from annotator.projects.protocol_services import protocol_set
from tests.factories import member
from tests.factories_workspace import annotators, project_with_turns
from tests.test_annotation_outbox_browser import labels_in_database, open_assignment, saved, type_keys
from tests.test_protocol_change_stale_pages import SWAPPED

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

expect.set_options(timeout=30_000)


def test_a_tab_opened_before_a_protocol_change_gets_409_and_reloads_with_the_notice(page_for):
    project, _ = project_with_turns(1)
    user, = annotators(project, 1)
    lead = member(project, Role.LEAD)
    page = open_assignment(page_for, user, project)
    conflicts = []
    page.on("response", lambda response: conflicts.append(response.status) if "/sync/" in response.url else None)

    protocol_set(project, SWAPPED.document, user=lead)  # what the page, the API, the command and an import call
    type_keys(page, ["1", "1", "1"])  # relevant, factual, faithful: "Faithful" on the page opened before

    expect(page.locator("#save-conflict")).to_contain_text("the project's protocol")
    expect(page.locator("#save-conflict")).to_contain_text("sentence 1 (Faithful)")
    assert 409 in conflicts
    assert not SentenceAnnotation.objects.exclude(label="").exists()

    # The reloaded page walks the new document: the same keys now end on the label it shows.
    expect(page.locator("#panel-title")).to_have_text("Sentence 1 of 3")
    type_keys(page, ["1", "1", "1"])
    expect(page.locator("a.sentence").nth(0).locator(".chip")).to_have_text("Invented")
    saved(page)
    assert labels_in_database(user) == [Label.INVENTED]


def test_an_adjudication_page_opened_before_a_protocol_change_is_refused_and_reloads_with_the_reason(page_for):
    """The adjudicator walks to "faithful" on a page opened before a lead changed the protocol (with a mapping: the
    project is annotated); saving is a 409, the page reloads with the reason, and the old walk is not read under
    the new document (its draft belongs to the protocol it was walked on)."""
    from annotator.domain.protocol.document import COGNIBENCH
    from annotator.models import Adjudication, GoldLabel
    from tests.factories import ProjectFactory
    from tests.factories_gold import disputed_turn

    project = ProjectFactory()
    turn = disputed_turn(project, [Label.FAITHFUL, Label.IRRELEVANT, Label.IRRELEVANT],
                         [Label.INVENTED, Label.IRRELEVANT, Label.IRRELEVANT])
    dispute = Adjudication.objects.get()
    page = page_for(member(project, Role.ADJUDICATOR))
    page.set_default_timeout(30_000)
    page.goto(f"/p/{project.slug}/adjudication/turn/{turn.pk}/", wait_until="domcontentloaded")
    card = page.locator(f"#dispute-{dispute.pk}")
    expect(card).to_have_class(re.compile(r"\bactive\b"))
    for key in ("1", "1", "1"):  # relevant, factual, faithful
        page.keyboard.press(key)
    expect(card.locator("[data-walk-label]")).to_contain_text("Faithful")

    protocol_set(project, SWAPPED.document, user=member(project, Role.LEAD),
                 label_mapping={label: label for label in COGNIBENCH.labels})
    page.keyboard.press("r")
    page.keyboard.type("The reference says so.")
    page.keyboard.press("Control+Enter")  # the reason is sent with Ctrl+Enter (issue 46)

    expect(page.locator(".messages")).to_contain_text("changed the project's protocol after this page was opened")
    assert Adjudication.objects.get().status == Adjudication.Status.OPEN and not GoldLabel.objects.filter(
        sentence=dispute.sentence, provenance="adjudication").exists()
    card = page.locator(f"#dispute-{dispute.pk}")
    expect(card.locator(".walk-path")).to_have_count(0)  # the walk starts again, on the new document
