"""Flags, split and merge in a real browser (headless Chromium): an annotator flags with the keyboard, a lead
splits on the turn page, a split refused because of a submitted annotation, then done with a reset."""


import pytest
from playwright.sync_api import expect

from annotator.domain.vocabulary import Label, Role
from annotator.models import Assignment, SegmentationChange, UnitFlag
from tests.conftest import keys_ready, start_from_queue
from tests.factories import member
from tests.factories_gold import submit
from tests.factories_workspace import NO_PASSWORD, project_with_turns

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The machine running the suite may be busy: wait for the page generously (never a timing assertion).
expect.set_options(timeout=30_000)

TWO_IN_ONE = "The lighthouse was automated in 1984. The red and white bands were chosen because they show."
UNITS = ["It stands on the cape.", TWO_IN_ONE, "Hello there!"]
CUT = TWO_IN_ONE.index(" The red")  # the gap between the two sentences


@pytest.fixture
def page_for(page_for):
    def open_page(user, **kwargs):
        page = page_for(user, **kwargs)
        page.set_default_timeout(30_000)
        return page

    return open_page


def split_on_turn_page(page, project, turn, unit_index, offset):
    page.goto(f"/p/{project.slug}/turns/{turn.pk}/")
    row = page.locator(f"#unit-{unit_index}")
    row.locator(f'label.unit-gap:has(input[value="{offset}"])').click()
    expect(row.locator(f'input[value="{offset}"]')).to_be_checked()
    row.get_by_role("button", name="Split here").click()


def test_an_annotator_flags_with_the_keyboard_and_the_lead_splits_the_unit(page_for):
    project, (turn,) = project_with_turns(1, sentences=UNITS)
    annotator = member(project, Role.ANNOTATOR, password=NO_PASSWORD)
    lead = member(project, Role.LEAD, password=NO_PASSWORD)

    page = page_for(annotator)
    start_from_queue(page, project)
    page.keyboard.press("j")
    expect(page.locator("#panel-title")).to_have_text("Sentence 2 of 3")
    page.keyboard.press("f")
    dialog = page.locator("#flag-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text(TWO_IN_ONE)
    page.keyboard.press("1")  # two sentences: the note box takes the next keys
    expect(page.locator("#flag-note")).to_be_focused()
    page.keyboard.type("Two sentences, one label each.")
    page.keyboard.press("Enter")
    expect(dialog).to_be_hidden()
    expect(page.locator("a.sentence").nth(1).locator(".flag-mark")).to_have_text("flagged")
    # The mark does not push the label chip off the text's row (it used to wrap into the number's column, clipped).
    text_box = page.locator("a.sentence").nth(1).locator(".sentence-text").bounding_box()
    chip_box = page.locator("a.sentence").nth(1).locator(".chip").bounding_box()
    mark_box = page.locator("a.sentence").nth(1).locator(".flag-mark").bounding_box()
    assert chip_box["y"] < text_box["y"] + text_box["height"] and chip_box["x"] >= text_box["x"] + text_box["width"]
    assert mark_box["y"] >= text_box["y"] + text_box["height"] - 1 and mark_box["x"] >= text_box["x"] - 1
    flag = UnitFlag.objects.get()
    # Neither the f that opened the dialog nor the 1 that chose the kind was typed into the note.
    assert (flag.kind, flag.note, flag.sentence_index) == ("two_sentences", "Two sentences, one label each.", 1)
    # Again: the dialog shows the open flag; Esc leaves it as it was.
    page.keyboard.press("f")
    expect(page.locator('#flag-dialog input[value="two_sentences"]')).to_be_checked()
    expect(page.locator("#flag-note")).to_have_value("Two sentences, one label each.")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    assert page.locator("#panel-title").text_content() == "Sentence 2 of 3"  # no key reached the screen behind

    lead_page = page_for(lead)
    lead_page.goto(f"/p/{project.slug}/")
    lead_page.locator("#unit-flags-link").click()
    lead_page.get_by_role("link", name=turn.dialogue.external_id).click()
    expect(lead_page.locator("#unit-1 .unit-flag")).to_contain_text("Two sentences, one label each.")
    split_on_turn_page(lead_page, project, turn, 1, CUT)
    expect(lead_page.locator(".messages")).to_contain_text("the turn has 4 units (it had 3)")
    expect(lead_page.locator("#unit-1 .unit-words")).to_have_text("The lighthouse was automated in 1984.")
    expect(lead_page.locator("#unit-2 .unit-words")).to_contain_text("The")
    expect(lead_page.locator("#unit-3 .unit-words")).to_have_text("Hello there!")
    audit = lead_page.locator(".segmentation-change")
    expect(audit).to_contain_text(f"Before: [2] “{TWO_IN_ONE}”")
    expect(audit).to_contain_text("[2] “The lighthouse was automated in 1984.”, [3] “The red and white bands")
    assert turn.sentences.count() == 4
    assert UnitFlag.objects.get().status == UnitFlag.Status.RESOLVED
    expect(lead_page.locator("#unit-1 .unit-flag")).to_have_count(0)
    # Back on the annotation screen (reloaded: the units changed), the mark is gone and the dialog says why.
    page.reload()
    expect(page.locator("a.sentence")).to_have_count(4)
    expect(page.locator(".flag-mark")).to_have_count(0)
    # CI once clicked before the page's scripts ran: the click followed the link (a navigation) and the f was lost.
    keys_ready(page)
    page.locator("a.sentence").nth(1).click()
    page.keyboard.press("f")
    expect(page.locator("[data-flag-outcome]")).to_contain_text("resolved (split or merged) — “Split into units 2 and 3.”")
    page.keyboard.press("Escape")


def test_a_split_refused_because_of_a_submitted_annotation_then_done_with_a_reset(page_for):
    project, (turn,) = project_with_turns(1, sentences=UNITS)
    annotator = member(project, Role.ANNOTATOR, password=NO_PASSWORD)
    lead = member(project, Role.LEAD, password=NO_PASSWORD)
    slot = submit(turn, annotator, [Label.FAITHFUL, Label.INVENTED, Label.IRRELEVANT])

    page = page_for(lead)
    split_on_turn_page(page, project, turn, 1, CUT)
    refused = page.locator("#change-refused")
    expect(refused).to_contain_text(f"Unit 2 cannot be split: 1 submitted annotation ({annotator.username})")
    expect(page.locator(".dependent")).to_contain_text("invented")
    assert turn.sentences.count() == 3
    page.get_by_label("Reset this turn's annotations").check()
    page.get_by_label("Reason (shown in the audit)").fill("Two sentences, one label each.")
    page.get_by_role("button", name="Split and reset").click()
    expect(page.locator(".messages")).to_contain_text("1 record(s) removed, kept in the audit")
    page.locator(".segmentation-change details summary").click()
    expect(page.locator(".reset-record")).to_contain_text(f"submitted annotation · {annotator.username} · unit 2 · invented")
    assert turn.sentences.count() == 4
    slot.refresh_from_db()
    assert slot.status == Assignment.Status.IN_PROGRESS
    assert SegmentationChange.objects.get().reason == "Two sentences, one label each."
