"""A change the server refuses (a NUL in a note: 400) is shown on its sentence, never retried as it is, and the rest of
the annotator's work keeps saving; the annotator fixes it (the sentence changed again) or drops it. In Chromium."""

import re

import pytest
from playwright.sync_api import expect

from annotator.domain.vocabulary import Label
from annotator.models import Assignment, SentenceAnnotation
from tests.factories_workspace import annotators, project_with_turns
from tests.test_annotation_outbox_browser import keys_for, open_assignment, saved, type_keys

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

expect.set_options(timeout=30_000)


def write_note(page, text):
    page.locator("#note-input").fill(text)
    page.locator("#note-input").press("Control+Enter")  # saved with Ctrl+Enter (issue 46)
    expect(page.locator("html")).not_to_have_attribute("data-keys-held", "true")  # the keys after it apply again


def saved_answers(user):
    """(label, note) per sentence index, of the rows that hold one (leaving a sentence may save its time alone)."""
    assignment = Assignment.objects.get(annotator=user)
    return {a.sentence.index: (a.label, a.note) for a in SentenceAnnotation.objects.filter(assignment=assignment)
            if a.label or a.note}


def test_a_refused_change_is_shown_the_rest_keeps_saving_and_the_annotator_fixes_or_drops_it(page_for):
    project, _ = project_with_turns(1)
    user, = annotators(project, 1)
    page = open_assignment(page_for, user, project)
    answers = []
    page.on("response", lambda r: answers.append(r.status) if "/sync/" in r.url else None)
    write_note(page, "pasted\u0000text")
    refusal = page.locator("#save-refused")
    expect(refusal).to_contain_text(re.compile(r"note: Null characters are not allowed"))
    expect(page.locator("#drop-refused")).to_be_visible()
    expect(page.locator("#save-status")).to_have_text("Not saved: 1 change refused")
    # The rest keeps saving: sentence 2 is labelled and stored while sentence 1's change waits.
    page.keyboard.press("j")
    type_keys(page, keys_for(Label.FAITHFUL))
    expect(page.locator("#save-status")).to_have_text("Not saved: 1 change refused")
    assert saved_answers(user) == {1: (Label.FAITHFUL, "")}
    # Seen from another sentence, the refusal leads back to its sentence; the fixed note is sent with it.
    expect(refusal).to_contain_text("A change of sentence 1 was not saved")
    page.locator("#refused-go").click()
    expect(page.locator("#panel-title")).to_have_text("Sentence 1 of 3")
    write_note(page, "fixed text")
    saved(page)
    expect(refusal).to_have_count(0)
    assert saved_answers(user) == {0: ("", "fixed text"), 1: (Label.FAITHFUL, "")}
    # Dropped: forgotten, and the page shows what is saved.
    page.locator("a.sentence").nth(2).click()
    write_note(page, "again\u0000")
    expect(page.locator("#drop-refused")).to_be_visible()
    page.locator("#drop-refused").click()
    expect(page.locator("#panel-title")).to_have_text("Sentence 3 of 3")
    saved(page)
    expect(page.locator("#note-input")).to_have_value("")
    assert saved_answers(user) == {0: ("", "fixed text"), 1: (Label.FAITHFUL, "")}
    # Each refusal was answered once: nothing was sent again as it was.
    assert answers.count(400) == 2 and not [status for status in answers if status >= 500]
