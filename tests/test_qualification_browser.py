"""In headless Chromium: what the queue offers after a failed qualification attempt, and a lead's reason of gold
read by the annotator on their score page."""

import re
import time

import pytest
from playwright.sync_api import expect

from annotator.domain.vocabulary import Role
from annotator.qa import qualification as q
from tests.conftest import press_start, start_from_queue, submit_with_keys
from tests.factories import TurnFactory, member
from tests.factories_qa import finish, gold_turn
from tests.factories_workspace import project_with_turns

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def qualified_project(auto_retries=0):
    project, _ = project_with_turns(1)
    project.qualification_auto_retries = auto_retries
    project.save()
    lead = member(project, Role.LEAD)
    turn = gold_turn(project, ["faithful", "speculative"],
                     texts=["The Amazon flows through Brazil.", "It is probably the greatest river on Earth."])
    q.qualification_set(project=project, actor=lead, turn_ids=[turn.pk], pass_mark=1.0)
    return project, lead


def fail_in_the_screen(page):
    """On the annotation screen of the qualification turn: faithful twice (the second is wrong), then submit."""
    expect(page.locator("#decision-panel")).to_be_visible()
    page.keyboard.press("1")
    page.keyboard.press("1")
    page.keyboard.press("1")
    expect(page.locator("#panel-title")).to_have_text("Sentence 2 of 2")
    page.keyboard.press("1")
    page.keyboard.press("1")
    page.keyboard.press("1")
    submit_with_keys(page)  # waits for the page's saving, then submits


def test_after_a_fail_the_queue_says_what_happens_next_and_focuses_the_one_thing_to_do(page_for):
    project, _ = qualified_project(auto_retries=1)
    annotator = member(project, Role.ANNOTATOR)
    page = page_for(annotator)
    start_from_queue(page, project, says="Start the qualification")
    fail_in_the_screen(page)

    # The project opens one attempt by itself: the queue says so and Enter starts it.
    page.wait_for_url(f"**/p/{project.slug}/work/")
    notice = page.get_by_test_id("qualification-notice")
    expect(notice).to_contain_text("Attempt 1 scored 1 of 2 (50%); the pass mark is 100.0%.")
    expect(page.get_by_test_id("qualification-next")).to_contain_text(
        "A new attempt is open: none left after this one; if it fails, a lead must allow another.")
    expect(page.locator("#start-button")).to_have_text(re.compile(r"^Start attempt 2\s+Enter$"))
    press_start(page)
    fail_in_the_screen(page)

    # The second failure waits for a lead: no Start, the answers are the focused action.
    page.wait_for_url(f"**/p/{project.slug}/qa/qualification/score/")
    page.goto(f"/p/{project.slug}/work/")
    expect(page.get_by_test_id("qualification-next")).to_have_text(
        "A lead must allow another attempt; you'll see it here.")
    expect(page.locator("#start-button")).to_have_count(0)
    expect(page.locator("#see-answers")).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/p/{project.slug}/qa/qualification/results/\d+/"))
    expect(page.get_by_test_id("qualification-score")).to_have_text("1 of 2 sentences right (50%)")


def test_a_lead_writes_the_reason_of_a_gold_label_and_the_annotator_reads_it_on_the_score_page(page_for):
    project, lead = qualified_project()
    annotator = member(project, Role.ANNOTATOR)
    finish(q.qualification_assignment_next(project, annotator), ["faithful", "faithful"])
    result = q.qualification_score_attempt(project, annotator)
    TurnFactory(dialogue__project=project)

    annotator_page = page_for(annotator)
    annotator_page.goto(f"/p/{project.slug}/qa/qualification/results/{result.pk}/")
    wrong = annotator_page.get_by_test_id("detail-wrong")
    expect(wrong.get_by_test_id("gold-explanation")).to_be_visible()  # no reason yet: the protocol explains
    expect(wrong.get_by_test_id("gold-reason")).to_have_count(0)

    lead_page = page_for(lead)
    lead_page.goto(f"/p/{project.slug}/qa/qualification/")
    expect(lead_page.get_by_test_id("waits-for-lead")).to_be_visible()
    reason = lead_page.get_by_label(re.compile(r"Reason for .* turn \d+, sentence 2$"))
    reason.fill("Nothing in the reference ranks rivers: rational but not grounded.")
    lead_page.get_by_role("button", name=re.compile(r"Save reason for .* sentence 2$")).click()
    expect(lead_page.get_by_text("Reason saved")).to_be_visible()
    expect(reason).to_have_value("Nothing in the reference ranks rivers: rational but not grounded.")
    reason.fill("Nothing in the reference ranks rivers, so 'greatest' is speculation.")  # and edits it
    lead_page.get_by_role("button", name=re.compile(r"Save reason for .* sentence 2$")).click()
    expect(lead_page.get_by_text("Reason saved")).to_be_visible()

    annotator_page.reload()
    wrong = annotator_page.get_by_test_id("detail-wrong")
    expect(wrong.get_by_test_id("gold-reason")).to_have_text(
        "Nothing in the reference ranks rivers, so 'greatest' is speculation.")
    expect(wrong.get_by_test_id("gold-explanation")).to_have_count(0)


def test_the_next_attempt_saves_nothing_of_the_submitted_one_is_left_in_the_browser(page_for):
    project, _ = qualified_project(auto_retries=1)
    annotator = member(project, Role.ANNOTATOR)
    page = page_for(annotator)
    start_from_queue(page, project)

    def slow_submit(route):
        time.sleep(1)  # the screen's clock runs on while the submit is answered: leaving counts that time
        route.continue_()

    page.route(re.compile(r"/a/\d+/submit/$"), slow_submit)
    fail_in_the_screen(page)
    page.wait_for_url(f"**/p/{project.slug}/work/")
    left = page.evaluate("Object.keys(localStorage).filter((key) => key.startsWith('annotator-outbox:'))")
    assert left == []  # the submitted turn's page recorded nothing once it had submitted

    press_start(page)
    fail_in_the_screen(page)  # attempt 2 saves and submits (a stale change would stop it: "changed in another tab")
    page.wait_for_url(f"**/p/{project.slug}/qa/qualification/score/")
    expect(page.get_by_test_id("qualification-score")).to_contain_text("1 of 2")
