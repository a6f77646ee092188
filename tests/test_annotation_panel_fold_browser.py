"""The decision panel at 1024×768 (issue 50, item 11), in Chromium: the step asked is on screen without scrolling.

At 1024×768, the smallest window the annotation screen is laid out for in two columns (static/css/workspace.css),
a HalluDetect sentence walked to its severity had the scale's points 4–5 below the fold of the decision panel, and
at the justification the text field: the annotator had to scroll the panel to see what the keys answer. Now every
point of the scale and the text field (with its Confirm) are inside the panel's visible box and the window."""

import pytest
from django.test import Client
from playwright.sync_api import expect

from tests.conftest import keys_ready
from tests.factories_workspace import halludetect_slot, numbered_sentences

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=30_000)

# Each element's box against the window's and the decision panel's visible box (the panel scrolls inside itself):
# [text, {top, bottom, left, right, panelTop, panelBottom, innerWidth, innerHeight, pageScrolled}].
BOXES = """(elements) => elements.map((element) => {
  const box = element.getBoundingClientRect();
  const panel = document.getElementById("decision-panel").getBoundingClientRect();
  return [element.textContent.trim() || element.dataset.stepText, {
    top: box.top, bottom: box.bottom, left: box.left, right: box.right, panelTop: panel.top, panelBottom: panel.bottom,
    innerWidth: window.innerWidth, innerHeight: window.innerHeight, pageScrolled: window.scrollY }];
})"""


def hidden(locator):
    """The elements of ``locator`` not wholly in the window and in the panel's visible box, with their boxes."""
    assert locator.count()
    return [(text, box) for text, box in locator.evaluate_all(BOXES)
            if not (max(0, box["panelTop"]) <= box["top"] and box["bottom"] <= min(box["innerHeight"], box["panelBottom"])
                    and 0 <= box["left"] and box["right"] <= box["innerWidth"] and box["pageScrolled"] == 0)]


# Three short sentences (the list takes little of the column) and twelve (it takes its two fifths).
@pytest.mark.parametrize("sentences", [None, numbered_sentences(12)], ids=["three", "twelve"])
def test_at_1024x768_the_scale_s_points_and_the_text_field_are_on_screen_without_scrolling(page_for, sentences):
    assignment = halludetect_slot(Client(), sentences=sentences)
    page = page_for(assignment.annotator, width=1024, height=768)
    page.goto(f"/a/{assignment.pk}/")
    keys_ready(page)
    panel = page.locator("#decision-panel")
    for key in ("n", "1", "3", "Enter"):  # not supported; fabricated and wrong citation, confirmed
        page.keyboard.press(key)
    expect(panel.locator("#question-text")).to_have_text("How severe is the worst error?")
    points = panel.locator(".question .scale-point")
    expect(points).to_have_count(5)
    assert hidden(points) == []
    page.keyboard.press("4")
    expect(panel.locator("#question-text")).to_have_text("Why? Name the source and what it says.")
    field = panel.locator(".question [data-step-text=justification]")
    expect(field).to_be_focused()
    assert hidden(panel.locator(".question [data-step-text=justification], .question button.confirm")) == []
