"""The annotation screen's room for the context (issue 17), in Chromium at the sizes annotators use: the reference
gets most of the height and can be resized and searched, the question being answered comes first, and the current
question's answers are on screen without scrolling, also with the claims and severity panels on."""

import json
import os
import re

import pytest
from playwright.sync_api import expect

from tests.conftest import SHARED_DATA, start_from_queue
from tests.factories import DialogueFactory, TurnFactory
from tests.factories_claims import views_project
from tests.factories_workspace import annotators

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=30_000)


def long_turn(project):
    """The CogniBench sample's longest reference (6,270 characters) after three earlier turns of dialogue."""
    records = json.loads((SHARED_DATA / "cognibench-sample" / "dialogues.json").read_text())
    reference = max((r["reference"] for r in records), key=len)
    history = []
    for n in range(3):
        history += [{"role": "user", "text": f"Earlier question {n}: " + "tell me more. " * 30},
                    {"role": "assistant", "text": f"Earlier answer {n}: " + "here is more. " * 60}]
    dialogue = DialogueFactory(project=project, reference=reference)
    return TurnFactory(dialogue=dialogue, index=3, history=history, user_message="THE QUESTION BEING ANSWERED?",
                       sentences=["The lighthouse was automated in 1984.", "It is probably the oldest on the coast.",
                                  "The keepers left in 1984.", "Hello!"])


def open_screen(page_for, width, height, **options):
    project = views_project(**options)
    turn = long_turn(project)
    (user,) = annotators(project, 1)
    page = page_for(user, width=width, height=height)
    page.set_default_timeout(30_000)
    start_from_queue(page, project)  # waits for the Start button's focus before Enter (Enter before it did nothing)
    return page, turn


def visible_in_viewport(page, locator):
    box = locator.bounding_box()
    size = page.viewport_size
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= size["height"] and box["x"] >= 0 \
        and box["x"] + box["width"] <= size["width"]


def within_its_pane(locator):
    """True when the element is inside the visible part of the scrolling pane that holds it."""
    return locator.evaluate("""(element) => {
        let pane = element.parentElement;
        while (pane && !['auto', 'scroll'].includes(getComputedStyle(pane).overflowY)) { pane = pane.parentElement; }
        if (!pane) { return true; }
        const a = element.getBoundingClientRect(), b = pane.getBoundingClientRect();
        return a.top >= b.top - 1 && a.bottom <= b.bottom + 1;
    }""")


@pytest.mark.parametrize("size", [(1024, 768), (1280, 800), (1920, 1080)])
def test_the_reference_has_most_of_the_height_and_the_answers_are_on_screen_with_claims_and_severity(page_for, size):
    width, height = size
    page, _ = open_screen(page_for, width, height)
    reference = page.locator(".ws-reference")
    column = page.locator(".ws-left").bounding_box()["height"]
    # Most of the screen's height (253 px of 800 before), and most of its column.
    assert reference.bounding_box()["height"] >= max(0.5 * height, 0.6 * column)
    # The question being answered is shown first; the earlier turns are folded away.
    question = page.locator(".ws-history .msg-current-question")
    expect(question).to_contain_text("THE QUESTION BEING ANSWERED?")
    assert within_its_pane(question)
    expect(page.locator(".ws-history details.earlier-turns")).not_to_have_attribute("open", "")
    # Every answer of the current question is visible without scrolling anything.
    for answer in page.locator("#decision-panel .answers .answer").all():
        assert visible_in_viewport(page, answer) and within_its_pane(answer)
    # The shortcut footer stays on one line.
    footer = page.locator(".ws-keys").bounding_box()
    assert footer["height"] <= 34, footer
    if os.environ.get("SCREENSHOTS"):
        page.screenshot(path=f"docs/screenshots/annotation-screen-claims-{width}x{height}.png")


def test_the_split_is_resized_with_the_keyboard_and_kept_over_a_reload(page_for):
    page, _ = open_screen(page_for, 1280, 800)
    reference = page.locator(".ws-reference")
    before = reference.bounding_box()["height"]
    separator = page.locator(".ws-split")
    expect(separator).to_have_attribute("role", "separator")
    separator.focus()
    for _ in range(4):
        page.keyboard.press("ArrowDown")  # the reference grows downwards
    grown = reference.bounding_box()["height"]
    assert grown > before + 50
    page.reload()
    expect(page.locator("#decision-panel")).to_be_visible()
    assert abs(page.locator(".ws-reference").bounding_box()["height"] - grown) < 4


def test_find_in_the_reference_highlights_every_match_and_steps_through_them(page_for):
    page, turn = open_screen(page_for, 1280, 800)
    word = "the"
    expected = len(re.findall(word, turn.dialogue.reference, flags=re.IGNORECASE))
    page.keyboard.press("/")
    find = page.locator("#reference-find")
    expect(find).to_be_focused()
    page.keyboard.type(word)
    reference = page.locator("#reference-text")
    expect(reference).to_have_attribute("data-find-matches", str(expected))
    assert page.evaluate("CSS.highlights.get('reference-find').size") == expected
    expect(page.locator("#reference-find-count")).to_have_text(f"1 of {expected}")
    page.keyboard.press("Enter")
    expect(page.locator("#reference-find-count")).to_have_text(f"2 of {expected}")
    page.keyboard.press("Shift+Enter")
    expect(page.locator("#reference-find-count")).to_have_text(f"1 of {expected}")
    for _ in range(expected - 1):  # the last match, far down the 6,270 characters, is scrolled into view
        page.keyboard.press("Enter")
    expect(page.locator("#reference-find-count")).to_have_text(f"{expected} of {expected}")
    assert page.evaluate("""() => {
        const range = [...CSS.highlights.get('reference-find-current')][0];
        const a = range.getBoundingClientRect(), b = document.querySelector('.ws-reference').getBoundingClientRect();
        return a.top >= b.top && a.bottom <= b.bottom;
    }""")
    page.keyboard.press("Escape")
    expect(page.locator("#reference-find-bar")).to_be_hidden()
    assert page.evaluate("CSS.highlights.get('reference-find').size") == 0
    # The keys work on the sentences again, and the reference text is unchanged (offsets are evidence offsets).
    assert page.locator("#reference-text").inner_text().replace("\n", "") == turn.dialogue.reference.replace("\n", "")
    page.keyboard.press("1")
    expect(page.locator("#question-text")).to_have_text("Factual or cognitive?")


def test_an_evidence_selection_snaps_to_whole_words(page_for):
    page, turn = open_screen(page_for, 1280, 800)
    reference = turn.dialogue.reference
    word_start = re.search(r"\b\w{6,}\b", reference)
    start, end = word_start.start() + 2, word_start.end() - 2  # the middle of a long word
    page.locator("#reference-text").evaluate("""(element, [start, end]) => {
        const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
        let node, seen = 0, range = document.createRange(), started = false;
        while ((node = walker.nextNode())) {
            const length = node.textContent.length;
            if (!started && start <= seen + length) { range.setStart(node, start - seen); started = true; }
            if (started && end <= seen + length) { range.setEnd(node, end - seen); break; }
            seen += length;
        }
        const selection = document.getSelection(); selection.removeAllRanges(); selection.addRange(range);
    }""", [start, end])
    page.keyboard.press("e")
    expect(page.locator("#reference-text mark.evidence")).to_have_text(word_start.group(0))
