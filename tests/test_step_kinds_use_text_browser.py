"""The adjudication page's "Use this text" (issue 42): each side's text of a text step has a button, reached with
the keyboard, that copies the text as typed (lines and all) into the gold text field, which stays editable; the
page keeps its Content-Security-Policy (no inline script) without a single violation."""

import re

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotator import models
from annotator.domain.protocol.document import load_shipped
from annotator.domain.vocabulary import Role
from annotator.gold.derivation import gold_derive_for_turn
from annotator.projects.protocol_services import protocol_set
from tests.factories import AssignmentFactory, DialogueFactory, ProjectFactory, TurnFactory, member
from tests.test_security_csp_browser import watched

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=30_000)

FIRST = "Minor: a wrong year."
SECOND = "It changes the outcome.\nThe claim is out of time."


def walk(severity, text):
    return {"supported": "no", "error_types": ["fabricated"], "severity": severity, "justification": text}


def test_use_this_text_copies_a_side_s_text_into_the_gold_text_by_keyboard(page_for):
    protocol = load_shipped("halludetect")
    project = ProjectFactory(slug="use-text")
    protocol_set(project, protocol.document, user=member(project, Role.LEAD))
    turn = TurnFactory(dialogue=DialogueFactory(project=project), sentences=["The limitation period is ten years."])
    sentence = turn.sentences.get()
    for path in (walk(2, FIRST), walk(5, SECOND)):
        assignment = AssignmentFactory(turn=turn, annotator=member(project, Role.ANNOTATOR), submitted_at=timezone.now(),
                                       status=models.Assignment.Status.SUBMITTED)
        models.SentenceAnnotation.objects.create(assignment=assignment, sentence=sentence, path=path,
                                                 label=protocol.label_of(path))
    gold_derive_for_turn(turn)
    dispute = models.Adjudication.objects.get(sentence=sentence)
    first_side = models.Assignment.objects.order_by("pk").first()

    violations = []
    page = watched(page_for(member(project, Role.ADJUDICATOR)), violations)
    page.goto(f"/p/{project.slug}/adjudication/turn/{turn.pk}/")
    card = page.locator(f"#dispute-{dispute.pk}")
    expect(card).to_have_class(re.compile(r"\bactive\b"))
    buttons = card.locator("[data-use-text]")
    expect(buttons).to_have_count(2)
    expect(buttons.nth(1)).to_have_text("Use this text")
    field = card.locator('textarea[name="text-justification"]')
    expect(field).to_have_value("")
    # Tab reaches the second side's button (a real button in the tab order), Enter presses it.
    for _ in range(60):
        if buttons.nth(1).evaluate("(b) => b === document.activeElement"):
            break
        page.keyboard.press("Tab")
    else:
        pytest.fail("Tab never reached the second side's 'Use this text' button")
    page.keyboard.press("Enter")
    expect(field).to_have_value(SECOND)
    expect(field).to_be_focused()  # the adjudicator may edit it at once
    page.keyboard.type(" (copied)")
    # The first side's button, pressed with Space once the keys held after typing apply again (keymap.js),
    # replaces it.
    buttons.nth(0).focus()
    expect(page.locator("html")).not_to_have_attribute("data-keys-held", "true")
    page.keyboard.press(" ")
    expect(field).to_have_value(FIRST)
    page.keyboard.type(" Checked.")
    page.keyboard.press("Escape")
    page.keyboard.press("a")  # side with annotator A (severity 2), the gold text as copied and edited
    page.keyboard.press("r")
    page.keyboard.type("The year is wrong, nothing more.")
    page.keyboard.press("Control+Enter")  # Enter alone saves nothing from a text (issue 46)
    expect(card).to_have_class(re.compile("dispute-resolved"))
    gold = models.GoldLabel.objects.get(sentence=sentence)
    assert gold.path == walk(2, FIRST + " Checked.")
    assert dispute.pk and first_side.pk == models.Adjudication.objects.get(pk=dispute.pk).chosen_assignment_id
    assert violations == []
