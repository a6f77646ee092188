"""Triplet labelling and severity in the annotation screen, keyboard only, in headless Chromium."""

import re

import pytest
from playwright.sync_api import expect

from annotator.models import Assignment, SentenceAnnotation, TripletAnnotation
from annotator.vocabulary import Label

from .factories_claims import turn_with_triplets, views_project
from .factories_workspace import annotators

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def press(page, key, version):
    """Press a key that saves something; wait until the screen holds the next assignment version."""
    page.keyboard.press(key)
    expect(page.locator("#decision-panel")).to_have_attribute("data-version", str(version + 1))
    return version + 1


def saved_version(page):
    """Wait until the page has saved everything; the assignment version it holds then."""
    expect(page.locator("#save-status")).to_have_text("Saved")
    return int(page.locator("#decision-panel").get_attribute("data-version"))


def test_label_triplets_and_rate_severity_with_the_keyboard_then_carry_on_without_conflict(page_for):
    project = views_project(error_types=["conflation", "other"])
    turn = turn_with_triplets(project, triplets=(("Amazon", "flows through", "Brazil"),
                                                 ("Amazon", "is", "most important river")))
    (user,) = annotators(project, 1)
    page = page_for(user)
    page.goto(f"/p/{project.slug}/work/")
    expect(page.locator("#start-button")).to_be_focused()
    page.keyboard.press("Enter")  # Start
    # Until the screen's load event its deferred scripts may not have run: a key pressed then is lost
    # (the cause of this test's rare failures, the first "1" never saved). wait_for_url waits for "load".
    page.wait_for_url(re.compile(r"/a/\d+/"))
    expect(page.locator("#decision-panel")).to_be_visible()
    expect(page.locator("#triplet-panel")).to_contain_text("0 of 2 labelled")

    # Sentence 1: relevant, factual, invented (the page walks the protocol and saves the sentence in the background).
    for key in "112":
        page.keyboard.press(key)
    v = saved_version(page)
    # The panel moved on to sentence 2; go back to rate sentence 1.
    page.keyboard.press("k")
    expect(page.locator("#panel-title")).to_have_text("Sentence 1 of 3")
    expect(page.locator("#claims-extras")).to_be_visible()

    # v enters the severity panel; 4 rates; r and Enter save a justification; x and arrows pick an error type.
    page.keyboard.press("v")
    v = press(page, "4", v)
    expect(page.locator('#claims-extras button[data-severity="4"]')).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("r")
    expect(page.locator("#justification-input")).to_be_focused()
    page.keyboard.type("The reference gives no such fact.")
    v = press(page, "Enter", v)
    page.keyboard.press("x")
    expect(page.locator("#error-type-select")).to_be_focused()
    page.locator("#error-type-select").select_option("conflation")  # what arrow keys do on a focused select
    expect(page.locator("#decision-panel")).to_have_attribute("data-version", str(v + 1))
    v += 1
    page.keyboard.press("Escape")
    annotation = SentenceAnnotation.objects.get(sentence__turn=turn, sentence__index=0)
    assert (annotation.label, annotation.severity, annotation.justification, annotation.error_type) == (
        Label.INVENTED, 4, "The reference gives no such fact.", "conflation")

    # t enters the triplets at the first without a label; c labels it Contradiction and moves on; e Entailment.
    page.keyboard.press("t")
    first = page.locator("#triplet-panel .triplet-row").nth(0)
    expect(first).to_be_focused()
    v = press(page, "c", v)
    expect(page.locator("#triplet-panel .triplet-row").nth(0)).to_have_attribute("data-label", "Contradiction")
    expect(page.locator("#triplet-panel .triplet-row").nth(1)).to_be_focused()
    v = press(page, "n", v)
    expect(page.locator("#triplet-panel")).to_contain_text("2 of 2 labelled")
    # k goes back up; 1 relabels the first triplet Entailment.
    page.keyboard.press("k")
    expect(page.locator("#triplet-panel .triplet-row").nth(0)).to_be_focused()
    v = press(page, "1", v)
    labels = dict(TripletAnnotation.objects.values_list("triplet__index", "label"))
    assert labels == {0: "Entailment", 1: "Neutral"}

    # Esc returns to the sentences; the workspace's own keys work on with the version the panels left.
    page.keyboard.press("Escape")
    page.keyboard.press("j")
    expect(page.locator("#panel-title")).to_have_text("Sentence 2 of 3")
    for key in ("1", "2", "1", "1", "1"):  # relevant, cognitive, rational, grounded, unequivocal
        page.keyboard.press(key)
    page.keyboard.press("2")  # sentence 3: irrelevant
    assert saved_version(page) > v
    page.keyboard.press("s")
    page.wait_for_url(f"**/p/{project.slug}/work/")
    assert Assignment.objects.get(annotator=user).status == Assignment.Status.SUBMITTED
    assert not page.locator("#connection-status").is_visible()
