"""The annotation screen in a real browser (headless Chromium): keyboard only, reload, blind, modes, evidence."""

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotator.models import Assignment, EvidenceSpan, SentenceAnnotation
from annotator.domain.vocabulary import Label, ProtocolMode
from tests.conftest import keys_ready, press_start, start_from_queue, submit_with_keys
from tests.factories_workspace import annotators, project_with_turns

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The machine running the suite may be busy: wait for the page generously (never a timing assertion).
expect.set_options(timeout=30_000)


@pytest.fixture
def page_for(page_for):
    def open_page(user, **kwargs):
        page = page_for(user, **kwargs)
        page.set_default_timeout(30_000)
        return page

    return open_page


def press(page, *keys):
    """Press keys; the page applies each at once (it saves in the background, see ``saved``)."""
    for key in keys:
        page.keyboard.press(key)


def saved(page):
    """Wait until the page has sent every change (the status in the bar says so)."""
    expect(page.locator("#save-status")).to_have_text("Saved")


def chip(page, number):
    return page.locator("a.sentence").nth(number - 1).locator(".chip")


def active_number(page):
    return page.locator("#panel-title")


def test_a_whole_turn_with_the_keyboard_only_survives_a_reload_then_a_second_annotator_works_blind(page_for):
    project, turns = project_with_turns(1)
    first, second = annotators(project, 2)
    page = page_for(first)
    page.on("dialog", lambda dialog: dialog.accept())  # "leave the page with unsent changes?"
    start_from_queue(page, project)
    expect(active_number(page)).to_have_text("Sentence 1 of 3")

    # Sentence 1 "The Amazon flows through Brazil.": relevant (1), factual (1), faithful (1).
    press(page, "1")
    expect(page.locator("#question-text")).to_have_text("Factual or cognitive?")
    press(page, "1")
    press(page, "1")
    expect(chip(page, 1)).to_have_text("Faithful")
    # A finished sentence moves the panel on by itself.
    expect(active_number(page)).to_have_text("Sentence 2 of 3")
    expect(page.locator("a.sentence").nth(1)).to_have_attribute("aria-current", "true")

    # Sentence 2: relevant (y answers "Is the sentence relevant?" with yes, like 1), cognitive (2).
    press(page, "y")
    press(page, "2")
    expect(page.locator("#question-text")).to_have_text("Is it rational?")
    # Undo, then answer again.
    press(page, "u")
    expect(page.locator("#question-text")).to_have_text("Factual or cognitive?")
    press(page, "2")
    press(page, "y")  # rational: yes
    # A note, typed and saved with the keyboard.
    page.keyboard.press("c")
    expect(page.locator("#note-input")).to_be_focused()
    page.keyboard.type("Hedged claim, no source in the reference.")
    press(page, "Control+Enter")  # Ctrl+Enter saves the note (issue 46)

    # Reload half way (the unfinished sentence is not sent yet): every answer and the note are still there.
    page.reload()
    expect(active_number(page)).to_have_text("Sentence 2 of 3")
    expect(chip(page, 1)).to_have_text("Faithful")
    expect(chip(page, 2)).to_have_text("in progress")
    expect(page.locator("#question-text")).to_have_text("Is it grounded in the reference?")
    expect(page.locator("#note-input")).to_have_value("Hedged claim, no source in the reference.")
    expect(page.locator("#ws-progress")).to_have_text("1 of 3 sentences labelled")

    keys_ready(page)  # the reload: a key before the page's scripts ran would be lost
    press(page, "n")  # grounded: no -> speculative
    expect(chip(page, 2)).to_have_text("Speculative")
    expect(active_number(page)).to_have_text("Sentence 3 of 3")
    # Go back and forth with j / k.
    page.keyboard.press("k")
    expect(active_number(page)).to_have_text("Sentence 2 of 3")
    page.keyboard.press("j")
    expect(active_number(page)).to_have_text("Sentence 3 of 3")
    # Submitting too early is refused with a clear message.
    submit_with_keys(page)
    expect(page.locator(".panel-message.error")).to_contain_text("1 of 3 sentences have no label yet (sentence 3)")
    press(page, "2")  # "Hello there!" is irrelevant
    expect(chip(page, 3)).to_have_text("Irrelevant")
    expect(page.locator("#ws-progress")).to_have_text("3 of 3 sentences labelled")
    submit_with_keys(page)
    page.wait_for_url(re.compile(rf"/p/{project.slug}/work/"))
    expect(page.locator(".messages")).to_contain_text("Turn submitted")

    mine = Assignment.objects.get(annotator=first)
    assert mine.status == Assignment.Status.SUBMITTED
    labels = [a.label for a in SentenceAnnotation.objects.filter(assignment=mine).order_by("sentence__index")]
    assert labels == [Label.FAITHFUL, Label.SPECULATIVE, Label.IRRELEVANT]
    assert SentenceAnnotation.objects.get(assignment=mine, sentence__index=1).note == "Hedged claim, no source in the reference."
    assert all(a.seconds_spent > 0 for a in SentenceAnnotation.objects.filter(assignment=mine))

    # The second annotator gets the same turn and sees none of the first one's answers.
    other = page_for(second)
    start_from_queue(other, project)
    assert Assignment.objects.get(annotator=second).turn_id == turns[0].pk
    for number in (1, 2, 3):
        expect(chip(other, number)).to_have_text("to do")
    html = other.content()
    assert "Hedged claim" not in html and "Speculative</span>" not in html
    press(other, "2")
    press(other, "2")
    press(other, "2")
    submit_with_keys(other)
    other.wait_for_url(re.compile(rf"/p/{project.slug}/work/"))
    theirs = Assignment.objects.get(annotator=second)
    assert theirs.status == Assignment.Status.SUBMITTED
    assert set(SentenceAnnotation.objects.filter(assignment=theirs).values_list("label", flat=True)) == {Label.IRRELEVANT}


def test_independent_mode_picks_one_of_seven_labels(page_for):
    project, turns = project_with_turns(1, protocol_mode=ProtocolMode.INDEPENDENT)
    user, = annotators(project, 1)
    page = page_for(user)
    start_from_queue(page, project)
    expect(page.locator(".label-picker button")).to_have_count(7)
    press(page, "2")  # faithful
    press(page, "5")  # speculative
    press(page, "1")  # irrelevant
    saved(page)
    assert [a.label for a in SentenceAnnotation.objects.order_by("sentence__index")] == [
        Label.FAITHFUL, Label.SPECULATIVE, Label.IRRELEVANT]
    assert SentenceAnnotation.objects.get(sentence__index=1).path == {
        "relevance": "relevant", "kind": "cognitive", "rational": "yes", "grounded": "no"}


def test_evidence_is_selected_in_the_reference_attached_highlighted_and_removed(page_for):
    project, turns = project_with_turns(1, require_evidence=True)
    user, = annotators(project, 1)
    page = page_for(user)
    start_from_queue(page, project)
    reference = turns[0].dialogue.reference
    wanted = "flows through Brazil"
    start = reference.index(wanted)
    # Select the words in the reference the way a mouse drag does.
    page.evaluate(
        """([start, end]) => {
            const root = document.getElementById('reference-text');
            const text = root.firstChild;
            const range = document.createRange();
            range.setStart(text, start); range.setEnd(text, end);
            const selection = window.getSelection();
            selection.removeAllRanges(); selection.addRange(range);
        }""",
        [start, start + len(wanted)],
    )
    press(page, "e")
    expect(page.locator("#reference-text mark.evidence")).to_have_text(wanted)
    expect(page.locator(".evidence-list li")).to_have_count(1)
    saved(page)
    span = EvidenceSpan.objects.get()
    assert (span.start, span.end, span.text) == (start, start + len(wanted), wanted)
    # A second span, then remove the first one with the mouse.
    page.evaluate(
        """() => { const root = document.getElementById('reference-text');
                   const range = document.createRange(); range.setStart(root.lastChild, 1); range.setEnd(root.lastChild, 20);
                   const s = window.getSelection(); s.removeAllRanges(); s.addRange(range); }"""
    )
    press(page, "e")
    expect(page.locator(".evidence-list li")).to_have_count(2)
    expect(page.locator("#reference-text mark.evidence")).to_have_count(2)
    page.get_by_role("button", name=re.compile("Remove evidence: flows through Brazil")).click()
    expect(page.locator(".evidence-list li")).to_have_count(1)
    saved(page)
    assert EvidenceSpan.objects.count() == 1
    # Pressing e with nothing selected explains what to do.
    page.evaluate("() => window.getSelection().removeAllRanges()")
    page.keyboard.press("e")
    expect(page.locator(".panel-message.error")).to_contain_text("Select some text in the reference first")



# Two tabs on the same turn: tests/test_annotation_outbox_browser.py (the later tab is told, nothing is overwritten).


def test_an_answer_given_while_offline_is_saved_once_when_the_connection_returns(page_for):
    from annotator.models import AnnotationEvent

    project, turns = project_with_turns(1)
    user, = annotators(project, 1)
    page = page_for(user)
    start_from_queue(page, project)
    page.context.set_offline(True)
    page.keyboard.press("2")
    expect(chip(page, 1)).to_have_text("Irrelevant")
    expect(page.locator("#save-status")).to_have_text("Offline — 1 change kept, will send")
    assert not SentenceAnnotation.objects.exists()
    page.context.set_offline(False)
    saved(page)
    expect(page.locator("#decision-panel")).to_have_attribute("data-version", "1")
    assert AnnotationEvent.objects.filter(action="answer").count() == 1

def test_s_submits_and_opens_the_next_turn_and_submit_and_stop_goes_back_to_the_queue(page_for):
    project, _ = project_with_turns(2)
    user, = annotators(project, 1)
    page = page_for(user)
    start_from_queue(page, project)
    first = page.url
    for number in (1, 2, 3):
        expect(active_number(page)).to_have_text(f"Sentence {number} of 3")
        press(page, "2")  # irrelevant
    submit_with_keys(page)  # waits for the page's saving, submits, opens the next turn
    page.wait_for_url(lambda url: re.search(r"/a/\d+/$", url) is not None and url != first)
    expect(page.locator(".messages")).to_contain_text("Turn submitted")
    for number in (1, 2, 3):
        expect(active_number(page)).to_have_text(f"Sentence {number} of 3")
        press(page, "2")
    page.get_by_role("button", name="Submit and stop").click()
    page.wait_for_url(re.compile(rf"/p/{project.slug}/work/$"))
    expect(page.locator(".messages")).to_contain_text("Turn submitted")
    assert list(Assignment.objects.filter(annotator=user).values_list("status", flat=True)) == ["submitted"] * 2


SCREENSHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"


# Every control an annotator needs, reachable at every window size (issue #26 item 4).
CONTROLS = ["a.ws-back", "#ask-button", "#flag-button", "#help-button", "#submit-button", "#submit-stop-button", "#save-status",
            "#panel-title",
            ".question .answer"]


@pytest.mark.parametrize("width, height", [(800, 600), (1024, 768), (1280, 800), (1920, 1080)])
def test_the_screen_fits_the_window_with_visible_focus(page_for, width, height):
    """Layout from 800x600 to 1920x1080: never a sideways scroll, every control reachable and uncut, focus visible.
    From 1024x768 up the page itself does not scroll: the question, its answers and the key bar are in view.

    With SCREENSHOTS=1 the test also saves the screenshots shown in the README (docs/screenshots/).
    """
    from django.core.management import call_command

    from annotator.models import GuidelineExample, Project
    from annotator.work.services import annotation_evidence_add
    from annotator.domain.vocabulary import Step

    call_command("load_demo", stdout=open(os.devnull, "w"))
    project = Project.objects.get(slug="demo")
    examples = [
        (Step.RELEVANCE, False, "I hope this helps!", "Filler: nothing to check."),
        (Step.RELEVANCE, True, "The bridge opened in 1932.", "Says something about the topic."),
        (Step.KIND, True, "The lantern stood 31 metres above the sea.", "Restates a checkable fact."),
        (Step.KIND, False, "Automation probably saved the town money.", "An inference about consequences."),
        (Step.GROUNDED, True, "The beetles drink fog, so they survive without rain.", "The reference describes fog-drinking."),
        (Step.GROUNDED, False, "The beetles will adapt to any climate.", "Nothing in the reference supports it."),
    ]
    for position, (step, positive, text, why) in enumerate(examples):
        GuidelineExample.objects.create(project=project, step=step, is_positive=positive, text=text, explanation=why,
                                        position=position)
    user = project.memberships.get(user__username="annotator1").user
    # The demo has a qualification set; this annotator passed it, so Start opens real work.
    from annotator.models import QualificationResult

    QualificationResult.objects.create(project=project, annotator=user, passed=True, correct=1, total=1)
    page = page_for(user, width=width, height=height)
    page.goto(f"/p/{project.slug}/work/")
    if os.environ.get("SCREENSHOTS"):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"queue-{width}x{height}.png"))
    press_start(page)
    press(page, "n")  # "Great question!" is not relevant
    for key in "y11":  # the lighthouse was built in 1871: relevant, factual, faithful
        press(page, key)
    for key in "y11":  # it burned paraffin until 1936: relevant, factual, faithful
        press(page, key)
    saved(page)
    # The evidence below is added behind the page's back: the time the page would still send from its old copy would be
    # refused as a conflict (and the page reload itself to show what is saved). Leave first and forget it.
    screen = page.url.split("?")[0]
    page.goto(f"/p/{project.slug}/work/")
    page.evaluate("() => localStorage.clear()")
    assignment = Assignment.objects.select_related("project", "turn__dialogue").get(annotator=user)
    last = assignment.turn.sentences.order_by("index").last()
    reference = assignment.turn.dialogue.reference
    wanted = "automated in 1984"
    annotation_evidence_add(assignment, last, reference.index(wanted), reference.index(wanted) + len(wanted), actor=user)
    page.goto(screen + f"?sentence={last.pk}")
    for key in "y2y":  # "Automation probably saved the town money": relevant, cognitive, rational
        press(page, key)
    expect(page.locator("#question-text")).to_have_text("Is it grounded in the reference?")
    layout = page.evaluate("""() => ({
        scrollWidth: document.documentElement.scrollWidth, scrollHeight: document.documentElement.scrollHeight,
        innerWidth: window.innerWidth, innerHeight: window.innerHeight,
        answers: [...document.querySelectorAll('.question .answer')].map(b => b.getBoundingClientRect().bottom),
        keys: document.querySelector('.ws-keys').getBoundingClientRect().bottom,
    })""")
    assert layout["scrollWidth"] <= layout["innerWidth"], layout
    if height >= 768:
        assert layout["scrollHeight"] <= layout["innerHeight"], layout
        assert layout["answers"] and all(bottom <= layout["innerHeight"] for bottom in layout["answers"]), layout
        assert layout["keys"] <= layout["innerHeight"], layout
    for selector in CONTROLS:
        for control in page.locator(selector).all():
            control.scroll_into_view_if_needed()
            box = page.evaluate("""(el) => { const r = el.getBoundingClientRect(); const x = r.left + r.width / 2, y = r.top + r.height / 2;
                const hit = document.elementFromPoint(x, y);
                return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, cut: el.scrollWidth > el.clientWidth + 1,
                        onTop: !!hit && (hit === el || el.contains(hit))}; }""", control.element_handle())
            assert box["left"] >= 0 and box["right"] <= width and box["top"] >= 0 and box["bottom"] <= height, (selector, box)
            assert box["onTop"] and not box["cut"], (selector, box)
    focused = page.evaluate("() => { const el = document.activeElement; const s = getComputedStyle(el); "
                            "return {cls: el.className, outline: s.outlineStyle, width: s.outlineWidth}; }")
    # After each keyboard answer, focus sits on the new question (never on an answer a Space would press: issue 46),
    # outlined.
    assert "question" in focused["cls"] and focused["outline"] != "none" and focused["width"] != "0px", focused
    if os.environ.get("SCREENSHOTS"):
        page.evaluate("() => window.scrollTo(0, 0)")
        page.screenshot(path=str(SCREENSHOTS / f"annotation-screen-{width}x{height}.png"))
    # Help opens at its top; the decision panel opens each sentence at its head.
    page.locator("#question-text").click()
    page.keyboard.press("?")
    expect(page.locator("#help")).to_be_visible()
    assert page.evaluate("() => document.getElementById('help').scrollTop") == 0
    expect(page.locator("#help-heading")).to_be_in_viewport()
    page.keyboard.press("Escape")
    expect(page.locator("#help")).to_be_hidden()
    page.evaluate("() => { const p = document.getElementById('decision-panel'); p.scrollTop = p.scrollHeight; }")
    page.keyboard.press("k")
    expect(page.locator("#panel-title")).to_have_text(re.compile(r"Sentence \d+ of"))
    assert page.evaluate("() => document.getElementById('decision-panel').scrollTop") == 0


def test_back_to_the_queue_shows_the_counters_as_they_are_now(browser, live_server):
    """The queue left for the annotation screen and come back to with Back is not the stale copy the browser
    kept (the back-forward cache, which annotators' browsers have on; Playwright turns it off by default, so
    this test starts a Chromium with it on): it counts the turn just taken."""
    from django.conf import settings
    from django.test import Client

    from tests.conftest import CHROMIUM, CHROMIUM_ARGS

    project, _ = project_with_turns(2)
    (user,) = annotators(project, 1)
    client = Client()
    client.force_login(user)
    with_cache = browser.browser_type.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
                                             ignore_default_args=["--disable-back-forward-cache"])
    context = with_cache.new_context(base_url=live_server.url)
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                          "url": live_server.url}])
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"/p/{project.slug}/work/")
    expect(page.locator(".counts")).to_contain_text("0assigned")
    page.locator("#start-button").click()
    page.wait_for_url(re.compile(r"/a/\d+/"))
    expect(page.locator("#decision-panel")).to_be_visible()
    page.go_back(wait_until="commit")  # a page restored from the cache fires no load event
    expect(page).to_have_url(re.compile(rf"/p/{project.slug}/work/"))
    # Assigned, or in progress when the screen's time on the sentence, sent as the page was left, landed
    # before the queue was drawn; the stale copy would say 0 of both.
    expect(page.locator(".counts")).to_contain_text(re.compile(r"(?<!\d)1(?:assigned| ?in progress)"))
    context.set_offline(True)
    with_cache.close()

