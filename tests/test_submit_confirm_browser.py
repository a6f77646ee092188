"""Submitting a turn takes a deliberate key (issue 46, item 1), on the annotation screen in Chromium.

Before, a single `s` submitted the turn once every sentence had a label: an `s` held right after typing did not,
but a stray one a moment later did. Now `s` opens "Submit this turn?" on the decision panel, its Submit button
focused: Enter submits, any other key (`j`, a Space on that button, Esc) closes it and submits nothing. A click on
the bar's Submit buttons is deliberate and submits as before."""

import re

import pytest
from playwright.sync_api import expect

from annotator.models import Assignment
from tests.conftest import submit_with_keys
from tests.factories_workspace import annotators, numbered_sentences, project_with_turns
from tests.test_annotation_outbox_browser import open_assignment, saved
from tests.test_step_kinds_browser import axe_serious

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=30_000)


def label_every_sentence(page, count):
    for number in range(1, count + 1):
        expect(page.locator("#panel-title")).to_have_text(f"Sentence {number} of {count}")
        page.keyboard.press("2")  # irrelevant
    expect(page.locator("#ws-progress")).to_have_text(f"{count} of {count} sentences labelled")
    saved(page)


def test_a_stray_s_submits_nothing_s_then_enter_submits_and_a_click_needs_no_confirming(page_for):
    project, _ = project_with_turns(2, sentences=numbered_sentences(3))
    user, = annotators(project, 1)
    page = open_assignment(page_for, user, project)
    first = page.url
    posts = []
    page.on("request", lambda request: posts.append(request.url) if re.search(r"/a/\d+/submit/$", request.url) else None)
    label_every_sentence(page, 3)
    confirmation = page.locator("#decision-panel .submit-confirm")
    # A stray s (no typing before it): the panel asks, focused on its Submit button; j closes it, submits nothing
    # and moves nowhere; so do a Space (which would press the focused button) and Esc.
    for key in ("j", "Space", "Escape"):
        page.keyboard.press("s")
        expect(confirmation).to_contain_text("Submit this turn? Enter submits · Esc stays")
        expect(page.locator("#submit-confirm")).to_be_focused()
        page.keyboard.press(key)
        expect(confirmation).to_have_count(0)
        expect(page.locator("#panel-title")).to_have_text("Sentence 3 of 3")
    expect(page.locator("#decision-panel .panel-message")).to_have_count(0)  # Esc: closed without a word
    page.keyboard.press("s")
    expect(page.locator("#submit-confirm")).to_be_focused()
    assert axe_serious(page) == []  # the confirmation is named by its question for a screen reader
    page.keyboard.press("Escape")
    page.keyboard.press("s")
    page.keyboard.press("j")
    expect(page.locator("#decision-panel .panel-message")).to_contain_text("Not submitted")
    assert posts == [] and Assignment.objects.get(turn__dialogue__project=project, annotator=user).status != "submitted"
    # A click elsewhere closes it too.
    page.keyboard.press("s")
    page.locator("#ws-progress").click()
    expect(confirmation).to_have_count(0)

    submit_with_keys(page)  # s, then Enter: submitted, the next turn opens
    page.wait_for_url(lambda url: re.search(r"/a/\d+/$", url) is not None and url != first)
    expect(page.locator(".messages")).to_contain_text("Turn submitted")
    assert len(posts) == 1

    # The bar's "& stop" button: one click submits and goes back to the queue, no confirmation asked.
    label_every_sentence(page, 3)
    page.locator("#submit-stop-button").click()
    page.wait_for_url(re.compile(rf"/p/{project.slug}/work/$"))
    assert len(posts) == 2
    assert set(Assignment.objects.filter(annotator=user).values_list("status", flat=True)) == {"submitted"}
