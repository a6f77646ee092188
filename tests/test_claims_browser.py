"""Triplet labelling and severity in the annotation screen, keyboard only, in headless Chromium."""

import re

import pytest
from playwright.sync_api import expect

from annotator.models import Assignment, SentenceAnnotation, TripletAnnotation
from annotator.domain.vocabulary import Label

from .conftest import start_from_queue, submit_with_keys
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
    start_from_queue(page, project)
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
    # Saved: the focus is back on the severity chosen, where x works. Pressed while the input still has the focus,
    # x is a letter of the justification (a failure seen once under load; why the version had moved then is not
    # known).
    expect(page.locator("#claims-extras .severity-picker button.chosen")).to_be_focused()
    expect(page.locator("html")).not_to_have_attribute("data-keys-held", "true")  # keys right after typing are held
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
    submit_with_keys(page)
    page.wait_for_url(f"**/p/{project.slug}/work/")
    assert Assignment.objects.get(annotator=user).status == Assignment.Status.SUBMITTED
    assert not page.locator("#connection-status").is_visible()


def _until(page, check, what):
    """Wait (up to 30 s, polling) until ``check()`` holds: the page saves in the background."""
    for _ in range(150):
        if check():
            return
        page.wait_for_timeout(200)
    raise AssertionError(f"not reached: {what}")


def test_triplet_and_severity_keys_in_a_burst_under_latency_apply_to_what_is_shown(page_for):
    """300 ms of latency, keys 20 ms apart: each triplet key labels the row focused on screen (the focus moves on
    before the server answers), and a severity given just before moving to the next sentence stays on its sentence."""
    project = views_project()
    turn = turn_with_triplets(project, triplets=(("Amazon", "flows through", "Brazil"), ("Amazon", "is", "long"),
                                                 ("Nile", "is", "in Egypt"), ("Nile", "is", "long")))
    (user,) = annotators(project, 1)
    page = page_for(user)
    start_from_queue(page, project)
    expect(page.locator("#triplet-panel")).to_contain_text("0 of 4 labelled")
    for key in "112":  # sentence 1: relevant, factual, invented
        page.keyboard.press(key)
    saved_version(page)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions",
             {"offline": False, "latency": 300, "downloadThroughput": -1, "uploadThroughput": -1})

    page.keyboard.press("t")
    expect(page.locator("#triplet-panel .triplet-row").nth(0)).to_be_focused()
    for key in "cnec":
        page.keyboard.press(key)
        page.wait_for_timeout(20)
    wanted = {0: "Contradiction", 1: "Neutral", 2: "Entailment", 3: "Contradiction"}
    _until(page, lambda: dict(TripletAnnotation.objects.values_list("triplet__index", "label")) == wanted,
           "the four triplet labels typed")
    expect(page.locator("#triplet-panel")).to_contain_text("4 of 4 labelled")
    for index, label in wanted.items():
        expect(page.locator("#triplet-panel .triplet-row").nth(index)).to_have_attribute("data-label", label)

    # Back to sentence 1 (k); a justification saved with Enter and x at once: x is held (keymap.js: keys right after
    # typing are not applied), not typed into the text being saved (which the server's answer then replaced: the key
    # was lost); pressed again after the hold, it goes to the error type shown.
    page.keyboard.press("Escape")
    page.keyboard.press("k")
    expect(page.locator("#panel-title")).to_have_text("Sentence 1 of 3")
    expect(page.locator("#claims-extras")).to_be_visible()
    page.keyboard.press("v")
    page.keyboard.press("r")
    expect(page.locator("#justification-input")).to_be_focused()
    page.keyboard.type("No such fact.")
    page.keyboard.press("Enter")
    page.wait_for_timeout(20)
    page.keyboard.press("x")
    expect(page.locator("#key-refused")).to_contain_text("Held")
    expect(page.locator("html")).not_to_have_attribute("data-keys-held", "true")
    page.keyboard.press("x")
    expect(page.locator("#error-type-select")).to_be_focused()
    first = SentenceAnnotation.objects.filter(sentence__turn=turn, sentence__index=0)
    _until(page, lambda: first.get().justification == "No such fact.", "the justification as typed")
    page.wait_for_timeout(1000)  # the answer is in: the select shown keeps the focus, the text is what was typed
    expect(page.locator("#error-type-select")).to_be_focused()
    expect(page.locator("#justification-input")).to_have_value("No such fact.")

    # Rate sentence 1 2 then 5, and move on (Escape, j) while the ratings are on the wire.
    page.keyboard.press("Escape")
    expect(page.locator("a.sentence.active")).to_be_focused()
    page.keyboard.press("v")
    for key in ("2", "5", "Escape", "j"):
        page.keyboard.press(key)
        page.wait_for_timeout(20)
    expect(page.locator("#panel-title")).to_have_text("Sentence 2 of 3")
    _until(page, lambda: first.get().severity == 5, "sentence 1 rated 5")
    page.wait_for_timeout(1000)  # both answers are in: none of them drew sentence 1's panel onto sentence 2
    assert page.locator("#claims-extras").count() == 0 or \
        page.locator("#claims-extras").get_attribute("data-sentence") != str(first.get().sentence_id)
    assert not SentenceAnnotation.objects.filter(sentence__turn=turn, sentence__index=1, severity__isnull=False).exists()
