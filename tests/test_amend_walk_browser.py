"""The "Amend my answer" form of the feedback inbox walks the protocol (static/js/amend_walk.js), in Chromium."""

import pytest
from playwright.sync_api import expect

from annotator.domain import protocol
from annotator.models import AnnotationEvent
from annotator.domain.vocabulary import Label
from tests.test_security_csp_browser import watched
from tests.test_qa_gating import reviewed  # noqa: F401 (fixture: a submitted turn, feedback on sentence 2)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WALKED = {"relevance": "relevant", "kind": "cognitive", "rational": "yes", "grounded": "no"}


def open_amend(page):
    """Open the inbox and "Amend my answer" of its one item; returns the item and its form."""
    page.goto("/qa/feedback/")
    item = page.get_by_test_id("feedback-item")
    form = item.locator("form[data-amend-walk]")
    expect(amend_button(form)).to_be_disabled()
    item.get_by_text("Amend my answer").click()
    expect(asked(form)).to_have_text("Is the sentence relevant?")
    # The keys answer at once; the focus is on the question, not on an answer a Space would press (issue 46).
    expect(form.locator(".amend-question")).to_be_focused()
    return item, form


def amend_button(form):
    return form.locator("button[type=submit]")  # by CSS: a role locator skips it while <details> is closed


def asked(form):
    return form.locator("[data-walk-question]")


def walked(form):
    return form.locator("[data-walked]")


def press(page, keys):
    for key in keys:
        page.keyboard.press(key)


def test_the_annotator_walks_to_a_label_by_keyboard_takes_one_back_and_amends(reviewed, page_for):  # noqa: F811
    project, turn, ann, lead, feedback = reviewed
    problems = []  # CSP violations and uncaught exceptions
    page = watched(page_for(ann), problems)
    item, form = open_amend(page)

    press(page, "y2")  # "Is the sentence relevant?" yes; cognitive
    expect(asked(form)).to_have_text("Is it rational?")
    expect(walked(form)).to_have_text(["Is the sentence relevant? → Relevant", "Factual or cognitive? → Cognitive"])
    expect(amend_button(form)).to_be_disabled()
    press(page, "yy")  # rational; grounded: not at a label yet
    expect(asked(form)).to_have_text("Is it unequivocal?")
    expect(amend_button(form)).to_be_disabled()
    page.keyboard.press("u")  # take "grounded: yes" back, answer it again
    expect(asked(form)).to_have_text("Is it grounded in the reference?")
    expect(walked(form)).to_have_count(3)
    page.keyboard.press("n")
    expect(form.locator("[data-walk-result]")).to_have_text("New label: Speculative")
    expect(form.locator("[data-walk-question]")).to_have_count(0)
    expect(form.locator("input[name=label]")).to_have_value("speculative")
    expect(amend_button(form)).to_be_enabled()
    expect(amend_button(form)).to_be_focused()
    page.keyboard.press("Enter")

    expect(item.get_by_role("status")).to_have_text("Your answer was amended.")
    expect(item.locator(".chip").first).to_have_text("Speculative")
    annotation = feedback.annotation
    annotation.refresh_from_db()
    assert (annotation.label, annotation.path) == ("speculative", WALKED)
    event = AnnotationEvent.objects.get(action="amend")
    assert (event.sentence_id, event.actor_id) == (annotation.sentence_id, ann.pk)
    assert (event.old["label"], event.new["label"], event.new["path"]) == ("reliable", "speculative", WALKED)

    # The item htmx swapped in has a form of its own, walked afresh.
    item.get_by_text("Amend my answer").click()
    expect(asked(form)).to_have_text("Is the sentence relevant?")
    expect(walked(form)).to_have_count(0)
    expect(amend_button(form)).to_be_disabled()
    # A key pressed before the toggle event moves the focus into the form (the summary just clicked holds it) still
    # answers: CI once pressed "n" in that moment and the key went nowhere.
    item.locator("summary").focus()
    page.keyboard.press("n")  # "Is the sentence relevant?" no
    expect(form.locator("[data-walk-result]")).to_have_text("New label: Irrelevant")
    assert problems == [], "\n".join(problems)


def test_a_key_that_is_not_an_answer_is_refused_visibly_and_changes_nothing(reviewed, page_for):  # noqa: F811
    project, turn, ann, lead, feedback = reviewed
    page = page_for(ann)
    item, form = open_amend(page)
    refused = form.get_by_role("alert")

    page.keyboard.press("3")
    expect(refused).to_have_text("Key 3 is not an answer to “Is the sentence relevant?”: it was not applied.")
    expect(asked(form)).to_have_text("Is the sentence relevant?")
    expect(walked(form)).to_have_count(0)
    page.keyboard.press("u")
    expect(refused).to_have_text("Nothing to take back: no question is answered yet.")

    page.keyboard.press("1")  # relevant: the message goes
    expect(refused).to_be_hidden()
    expect(asked(form)).to_have_text("Factual or cognitive?")
    page.keyboard.press("y")  # this question has no yes/no
    expect(refused).to_have_text("Key y is not an answer to “Factual or cognitive?”: it was not applied.")
    expect(asked(form)).to_have_text("Factual or cognitive?")
    expect(walked(form)).to_have_count(1)

    press(page, "11")  # factual, faithful
    expect(form.locator("[data-walk-result]")).to_have_text("New label: Faithful")
    page.keyboard.press("2")
    expect(refused).to_have_text("Key 2 was not applied: the walk has reached Faithful. u takes the last answer back.")
    expect(form.locator("[data-walk-result]")).to_have_text("New label: Faithful")
    expect(form.locator("input[name=label]")).to_have_value("faithful")

    # With the form closed, keys reach no walk at all.
    item.get_by_text("Amend my answer").click()
    expect(form).to_be_hidden()
    press(page, "u2")
    item.get_by_text("Amend my answer").click()
    expect(form.locator("[data-walk-result]")).to_have_text("New label: Faithful")
    expect(walked(form)).to_have_count(3)

    feedback.annotation.refresh_from_db()
    assert feedback.annotation.label == "reliable"
    assert not AnnotationEvent.objects.filter(action="amend").exists()


def test_every_label_path_walked_in_the_form_ends_on_that_label(reviewed, page_for):  # noqa: F811
    project, turn, ann, lead, feedback = reviewed
    page = page_for(ann)
    item, form = open_amend(page)
    undo = form.get_by_role("button", name="Take back last answer")
    expect(undo).to_be_disabled()
    for label in Label:
        path = protocol.path_for_label(label)
        for step, value in path.items():
            expect(amend_button(form)).to_be_disabled()
            form.locator(f'[data-walk-step="{step}"][data-walk-value="{value}"]').click()
        expect(form.locator("[data-walk-result]")).to_have_text(f"New label: {label.label}")
        expect(form.locator("input[name=label]")).to_have_value(label.value)
        expect(amend_button(form)).to_be_enabled()
        for _ in path:
            undo.click()
        expect(asked(form)).to_have_text("Is the sentence relevant?")
        expect(form.locator("input[name=label]")).to_have_value("")
        expect(undo).to_be_disabled()
