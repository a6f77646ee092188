"""Typed text is text, never a label (issue 46, items 1 and 2), on the annotation screen in Chromium.

An annotator writing the justification of a HalluDetect sentence (a text step) presses Enter in the middle of it
and keeps typing letters, spaces and digits, 20 ms apart: before, Enter ended the text step and the sentence, and
the keys that followed answered the next sentences, toggled their error types and, once every sentence had a
label, an `s` submitted the turn. Now no key typed as part of a text changes another sentence: in the field only
Ctrl+Enter confirms; keys right after typing are held (static/js/keymap.js); the focus after a sentence never rests
on an answer button; `u` from a finished text step takes answers back instead of typing "u" into the field."""

import pytest
from playwright.sync_api import expect

from annotator.models import Assignment
from tests.factories_workspace import annotators, numbered_sentences
from tests.test_annotation_outbox_browser import open_assignment, saved
from tests.test_step_kinds_browser import PAUSE, halludetect_turn, press, saved_paths

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=30_000)

# Letters, spaces and digits after an early Enter, with every key the screen has a use for outside a field.
TYPED = "Cites a case\nunder appeal since 2019 s j n y 1 2 3 u k v e c q f t ? / s"


def chips(page):
    return page.locator("a.sentence .chip")


def test_an_early_enter_in_a_text_and_the_keys_after_it_change_no_other_sentence_and_submit_nothing(page_for):
    project, _, _ = halludetect_turn("typed-text", numbered_sentences(3))
    user, = annotators(project, 1)
    page = open_assignment(page_for, user, project)
    panel = page.locator("#decision-panel")
    press(page, ["y"])  # sentence 1: supported, the screen moves on to sentence 2
    expect(page.locator("#panel-title")).to_have_text("Sentence 2 of 3")
    # The focus rests on the question, not on its first answer: a Space presses nothing.
    expect(panel.locator(".question")).to_be_focused()
    press(page, [" "])
    expect(chips(page)).to_have_text(["Supported", "to do", "to do"])
    press(page, ["n", "1", "Enter", "4"])  # unsupported, fabricated, severity 4: the justification is asked
    field = panel.locator("[data-step-text=justification]")
    expect(field).to_be_focused()
    page.keyboard.type(TYPED, delay=20)
    # Enter confirmed nothing (the screen says what does); every other key is in the field, as typed.
    expect(field).to_have_value(TYPED.replace("\n", ""))
    expect(panel.locator(".panel-message")).to_contain_text("Ctrl+Enter")
    expect(chips(page)).to_have_text(["Supported", "in progress", "to do"])
    expect(page.locator("#help")).not_to_be_visible()

    # Confirmed with Ctrl+Enter: sentence 2 is labelled and the screen moves on to sentence 3; the typist goes on
    # typing, and those keys are held (said), not applied to sentence 3: it stays to do.
    page.keyboard.press("Control+Enter")
    expect(page.locator("#panel-title")).to_have_text("Sentence 3 of 3")
    page.keyboard.type(" and n y 1 2 s j k u", delay=20)
    expect(page.locator("#key-refused")).to_contain_text("Held")
    expect(page.locator("html")).not_to_have_attribute("data-keys-held", "true")
    expect(chips(page)).to_have_text(["Supported", "Unsupported", "to do"])
    expect(page.locator("#panel-title")).to_have_text("Sentence 3 of 3")
    assert "/a/" in page.url

    # Every sentence labelled, then a text confirmed and an `s` typed right after it: the turn is not submitted.
    press(page, ["y"])
    expect(chips(page)).to_have_text(["Supported", "Unsupported", "Supported"])
    press(page, ["k"])
    expect(page.locator("#panel-title")).to_have_text("Sentence 2 of 3")
    press(page, ["u"])  # the justification taken back: its words are kept, the field is not entered
    expect(panel.locator("#question-text")).to_have_text("Why? Name the source and what it says.")
    expect(field).not_to_be_focused()
    press(page, ["Enter", *" yes", "Control+Enter", "s", "s"])
    expect(chips(page)).to_have_text(["Supported", "Unsupported", "Supported"])
    expect(page.locator("html")).not_to_have_attribute("data-keys-held", "true")
    saved(page)
    assert Assignment.objects.get(annotator=user).status != "submitted"
    assert "/a/" in page.url
    justification = TYPED.replace("\n", "") + " yes"
    assert saved_paths(user) == [
        ("supported", {"supported": "yes"}),
        ("unsupported", {"supported": "no", "error_types": ["fabricated"], "severity": 4, "justification": justification}),
        ("supported", {"supported": "yes"})]


def test_u_from_a_finished_text_step_takes_the_answers_back_one_by_one_and_types_nothing(page_for):
    """Item 2: before, u re-opened the text step with the focus in its field, and the next u presses were typed
    into it (a justification stored as "uuu241")."""
    project, _, _ = halludetect_turn("typed-undo", numbered_sentences(2))
    user, = annotators(project, 1)
    page = open_assignment(page_for, user, project)
    panel = page.locator("#decision-panel")
    press(page, ["n", "1", "Enter", "2", *"Old", "Control+Enter", PAUSE, "k"])
    expect(page.locator("#panel-title")).to_have_text("Sentence 1 of 2")
    press(page, ["u", "u", "u"])  # the text, the severity, the error types
    expect(page.locator("#question-text")).to_have_text("Which errors does it make?")
    expect(panel.locator(".walk")).to_contain_text("No")
    # In a text field u is a letter: Esc first, then u takes the answer back (the help says so).
    press(page, ["Enter", "2"])
    field = panel.locator("[data-step-text=justification]")
    expect(field).to_be_focused()
    expect(field).to_have_value("Old")
    press(page, ["u", "Escape", "u"])
    expect(page.locator("#question-text")).to_have_text("How severe is the worst error?")
    press(page, ["3"])
    expect(field).to_have_value("Oldu")
    press(page, ["Control+Enter", PAUSE])
    page.keyboard.press("?")
    expect(page.locator("#help")).to_contain_text("then u takes the last answer back")
    expect(page.locator("#help")).to_contain_text("In a text field every key is text")
    saved(page)
    assert saved_paths(user)[0] == ("unsupported", {"supported": "no", "error_types": ["fabricated"], "severity": 3,
                                                    "justification": "Oldu"})


def test_the_sentence_the_screen_moves_on_to_does_not_take_the_keys_typed_on_into_its_text_field(page_for):
    """A text confirmed, the screen moves on to a sentence whose walk stopped at its text step: that field is not
    entered (Enter goes in), so the words typed on are held, not written into another sentence's text."""
    project, _, _ = halludetect_turn("typed-moved-on", numbered_sentences(3))
    user, = annotators(project, 1)
    page = open_assignment(page_for, user, project)
    panel = page.locator("#decision-panel")
    field = panel.locator("[data-step-text=justification]")
    press(page, ["y", "n", "1", "Enter", "2"])  # sentence 1 supported; sentence 2 walked to its justification
    expect(field).to_be_focused()
    press(page, ["Escape", "j", "n", "1", "Enter", "3", *"Why", "Control+Enter"])  # sentence 3, confirmed
    expect(page.locator("#panel-title")).to_have_text("Sentence 2 of 3")
    page.keyboard.type(" and more", delay=20)
    expect(page.locator("html")).not_to_have_attribute("data-keys-held", "true")
    expect(field).not_to_be_focused()
    expect(field).to_have_value("")
    press(page, ["Enter", *"Its own", "Control+Enter"])
    expect(chips(page)).to_have_text(["Supported", "Unsupported", "Unsupported"])
    saved(page)
    assert [path.get("justification") for _, path in saved_paths(user)] == [None, "Its own", "Why"]
