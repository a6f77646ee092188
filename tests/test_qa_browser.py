"""The QA loop in headless Chromium."""

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotator.models import Assignment, GuidelineExample, Question
from annotator.qa import services as qa
from annotator.qa.qualification import qualification_set
from annotator.domain.vocabulary import Role
from tests.conftest import start_from_queue, submit_with_keys
from tests.factories import ProjectFactory, TurnFactory, member
from tests.factories_qa import gold_turn
from tests.factories_workspace import project_with_turns

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

DOCS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"



def pick_answer(page, step, value):
    """Choose the right answer of ``step`` in the promote form (only that step's answers are offered)."""
    answer = page.get_by_label("Right answer at that step")
    option = page.locator(f'#promote-answer optgroup[data-step="{step}"] option[value="{value}"]')
    answer.select_option(element=option.element_handle())
    expect(answer).to_have_value(value)

def screenshot(page, name):
    """With SCREENSHOTS=1, save a screenshot for the docs (as the workspace's browser tests do)."""
    if os.environ.get("SCREENSHOTS"):
        DOCS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS / name))


def test_lead_answers_in_the_thread_and_the_asker_sees_it_without_reloading(page_for):
    project = ProjectFactory()
    turn = TurnFactory(dialogue__project=project)
    ann, lead = member(project, Role.ANNOTATOR), member(project, Role.LEAD)
    question = qa.question_ask(project=project, user=ann, turn=turn, sentence=turn.sentences.get(index=1),
                               path={"relevance": "relevant", "kind": "cognitive"},
                               body="Is 'the most important river' rational without a measure?")
    asker = page_for(ann)
    asker.goto(f"/qa/questions/{question.pk}/")
    asker.evaluate("window.__notReloaded = true")
    expect(asker.get_by_test_id("question-status")).to_have_text("Open")

    lead_page = page_for(lead)
    lead_page.goto("/")
    expect(lead_page.get_by_test_id("nav-open-questions")).to_contain_text("1")
    lead_page.get_by_test_id("nav-open-questions").click()
    lead_page.get_by_role("link", name=f"#{question.pk}").click()
    expect(lead_page.get_by_test_id("question-step")).to_have_text("Is it rational?")
    lead_page.get_by_label("Your answer").fill("Rational, but not grounded: speculative.")
    lead_page.get_by_role("button", name="Send answer").click()
    expect(lead_page.get_by_test_id("question-status")).to_have_text("Answered")
    expect(lead_page.get_by_label("Your answer")).to_have_value("")

    # The asker's open page picks the answer up by itself.
    expect(asker.get_by_text("Rational, but not grounded: speculative.")).to_be_visible(timeout=20000)
    expect(asker.get_by_test_id("question-status")).to_have_text("Answered")
    assert asker.evaluate("window.__notReloaded") is True

    # The lead promotes it to a guideline example at the step it concerns.
    lead_page.get_by_label("Step", exact=True).select_option("grounded")
    pick_answer(lead_page, "grounded", "no")
    lead_page.get_by_role("button", name="Promote to guideline example").click()
    expect(lead_page.get_by_text("Added to the guideline examples")).to_be_visible()
    example = GuidelineExample.objects.get()
    assert (example.step, example.is_positive, example.source_question_id) == ("grounded", False, question.pk)
    lead_page.get_by_role("button", name="Close question").click()
    expect(lead_page.get_by_test_id("question-status")).to_have_text("Closed")
    assert Question.objects.get().status == Question.Status.CLOSED


# --- on the annotation screen -----------------------------------------------------------------

def press(page, keys):
    """Press keys; the page applies each at once and saves in the background."""
    for key in keys:
        page.keyboard.press(key)


def test_a_new_annotator_takes_the_qualification_fails_one_item_and_sees_why(page_for):
    project, (work,) = project_with_turns(1)
    lead = member(project, Role.LEAD)
    qualification = gold_turn(
        project, ["faithful", "speculative", "irrelevant"],
        texts=["The Amazon flows through Brazil.", "It is probably the most important river on Earth.", "Hello there!"],
        reasons=["", "Nothing in the reference ranks rivers: rational but not grounded.", ""],
    )
    qualification_set(project=project, actor=lead, turn_ids=[qualification.pk], pass_mark=0.9)
    ann = member(project, Role.ANNOTATOR)
    page = page_for(ann)
    page.goto(f"/p/{project.slug}/work/")
    expect(page.get_by_test_id("qualification-notice")).to_contain_text("1 of 1 turn(s) left")
    start_from_queue(page, project)
    assert Assignment.objects.get(annotator=ann).turn_id == qualification.pk
    press(page, "111")  # relevant, factual, faithful: right
    expect(page.locator("#panel-title")).to_have_text("Sentence 2 of 3")
    press(page, "12112")  # relevant, cognitive, rational, grounded, not unequivocal -> reliable: wrong
    expect(page.locator("#panel-title")).to_have_text("Sentence 3 of 3")
    press(page, "2")  # irrelevant: right
    submit_with_keys(page)  # waits for the page's saving, then submits
    page.wait_for_url(f"**/p/{project.slug}/qa/qualification/score/")
    expect(page.get_by_test_id("qualification-score")).to_have_text("2 of 3 sentences right (67%)")
    expect(page.get_by_test_id("qualification-verdict")).to_contain_text("Not passed")
    wrong = page.get_by_test_id("detail-wrong")
    expect(wrong).to_have_count(1)
    expect(wrong).to_contain_text("It is probably the most important river on Earth.")
    expect(wrong).to_contain_text("Reliable")
    expect(wrong).to_contain_text("Speculative")
    expect(wrong.get_by_test_id("diverged-at")).to_have_text("Is it grounded in the reference?")
    expect(wrong.get_by_test_id("gold-reason")).to_have_text(
        "Nothing in the reference ranks rivers: rational but not grounded.")
    expect(page.get_by_test_id("detail-right")).to_have_count(2)
    # No real work until a lead allows a retry.
    page.goto(f"/p/{project.slug}/work/")
    expect(page.get_by_test_id("qualification-notice")).to_contain_text("not passed")
    assert not Assignment.objects.filter(annotator=ann, is_qualification=False).exists()
    screenshot(page, "qa-qualification-failed-queue.png")


def test_ask_mid_turn_lead_answers_annotator_sees_it_live_then_it_becomes_a_guideline_example(page_for):
    project, (turn,) = project_with_turns(1)
    lead = member(project, Role.LEAD)
    ann, other = member(project, Role.ANNOTATOR), member(project, Role.ANNOTATOR)
    page = page_for(ann)
    start_from_queue(page, project)
    press(page, "111")
    press(page, "12")  # sentence 2: relevant, cognitive (not saved yet: the sentence is unfinished)
    expect(page.locator("#question-text")).to_have_text("Is it rational?")
    page.evaluate("window.__notReloaded = true")

    page.keyboard.press("q")
    dialog = page.locator("#ask-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("It is probably the most important river on Earth.")
    expect(page.locator("#ask-body")).to_be_focused()
    page.keyboard.type("Is a superlative with 'probably' rational")
    page.keyboard.press("Shift+Enter")  # a new line, not sent
    expect(dialog).to_be_visible()
    page.keyboard.type("when the reference does not rank rivers?")
    page.keyboard.press("Enter")  # sends
    expect(dialog).to_be_hidden()
    pane = page.locator("#turn-questions")
    expect(pane.get_by_test_id("turn-question")).to_contain_text("Open")
    question = Question.objects.get()
    assert question.sentence.index == 1 and question.step == "rational"
    assert question.path == {"relevance": "relevant", "kind": "cognitive"}
    screenshot(page, "qa-question-asked.png")

    lead_page = page_for(lead)
    lead_page.goto("/qa/questions/")
    lead_page.get_by_role("link", name=f"#{question.pk}").click()
    expect(lead_page.get_by_test_id("question-sentence")).to_have_text(
        "It is probably the most important river on Earth.")
    lead_page.get_by_label("Your answer").fill("Rational (a coherent evaluation) but not grounded: speculative.")
    lead_page.get_by_role("button", name="Send answer").click()
    expect(lead_page.get_by_test_id("question-status")).to_have_text("Answered")

    # The annotator's screen shows the answer by itself, without a reload.
    expect(pane.get_by_test_id("turn-question-answer")).to_contain_text(
        "Rational (a coherent evaluation) but not grounded", timeout=20000)
    assert page.evaluate("window.__notReloaded") is True
    expect(page.locator("#question-text")).to_have_text("Is it rational?")  # work untouched

    # The lead promotes it: "yes" is the right answer at "Is it rational?".
    expect(lead_page.get_by_label("Step", exact=True)).to_have_value("rational")
    offered = "[...document.querySelectorAll('#promote-answer option')].filter(o => !o.disabled && !o.parentElement.disabled)" \
              ".map(o => o.parentElement.label + ':' + o.value)"
    assert lead_page.evaluate(offered) == ["Is it rational?:yes", "Is it rational?:no"]  # that step's answers only
    lead_page.get_by_label("Step", exact=True).select_option("kind")
    assert lead_page.evaluate(offered) == ["Factual or cognitive?:factual", "Factual or cognitive?:cognitive"]
    lead_page.get_by_label("Step", exact=True).select_option("rational")
    pick_answer(lead_page, "rational", "yes")
    lead_page.get_by_role("button", name="Promote to guideline example").click()
    expect(lead_page.get_by_text("Added to the guideline examples")).to_be_visible()

    # Another annotator sees it at that step.
    other_page = page_for(other)
    start_from_queue(other_page, project)
    other_page.keyboard.press("j")
    expect(other_page.locator("#panel-title")).to_have_text("Sentence 2 of 3")
    press(other_page, "1")
    expect(other_page.locator("#decision-panel .examples")).to_have_count(0)
    press(other_page, "2")
    expect(other_page.locator("#question-text")).to_have_text("Is it rational?")
    examples = other_page.locator("#decision-panel .examples")
    expect(examples).to_contain_text("It is probably the most important river on Earth.")
    expect(examples).to_contain_text("Rational (a coherent evaluation) but not grounded")
    screenshot(other_page, "qa-promoted-example.png")
