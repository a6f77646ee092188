"""The adjudication screen in Chromium (issue 50, item 12): every step two walks differ at is marked, not only the
first; the page says which of the two texts (the own walk's text step, the "Gold text" box) becomes the gold text,
and the gold stored is that one; the screen's keys are in sight without opening anything."""

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


def walk(types, severity, text):
    return {"supported": "no", "error_types": types, "severity": severity, "justification": text}


def dispute_on_two_steps():
    """Two annotators who both say "Unsupported" but differ on the error types and on the severity."""
    protocol = load_shipped("halludetect")
    project = ProjectFactory(slug="two-steps")
    protocol_set(project, protocol.document, user=member(project, Role.LEAD))
    turn = TurnFactory(dialogue=DialogueFactory(project=project), sentences=["The limitation period is ten years."])
    sentence = turn.sentences.get()
    for path in (walk(["fabricated"], 2, "A wrong year."), walk(["fabricated", "wrong_citation"], 5, "Out of time.")):
        assignment = AssignmentFactory(turn=turn, annotator=member(project, Role.ANNOTATOR), submitted_at=timezone.now(),
                                       status=models.Assignment.Status.SUBMITTED)
        models.SentenceAnnotation.objects.create(assignment=assignment, sentence=sentence, path=path,
                                                 label=protocol.label_of(path))
    gold_derive_for_turn(turn)
    return project, turn, models.Adjudication.objects.get(sentence=sentence)


def test_every_step_the_walks_differ_at_is_marked(page_for):
    project, turn, dispute = dispute_on_two_steps()
    violations = []
    page = watched(page_for(member(project, Role.ADJUDICATOR)), violations)
    page.goto(f"/p/{project.slug}/adjudication/turn/{turn.pk}/")
    card = page.locator(f"#dispute-{dispute.pk}")
    expect(card).to_have_class(re.compile(r"\bactive\b"))
    marked = card.locator("tr.diverged")
    expect(marked).to_have_count(2)
    expect(marked.nth(0)).to_have_attribute("data-diverged", "error_types")
    expect(marked.nth(1)).to_have_attribute("data-diverged", "severity")
    expect(card.locator("caption")).to_contain_text(
        "they differ at Which errors does it make? and How severe is the worst error?")
    assert not violations, violations


def test_the_keys_are_in_sight_without_opening_anything(page_for):
    """A bar of the screen's keys, as on the annotation screen, not a list folded in a details element."""
    project, turn, dispute = dispute_on_two_steps()
    violations = []
    page = watched(page_for(member(project, Role.ADJUDICATOR)), violations)
    page.goto(f"/p/{project.slug}/adjudication/turn/{turn.pk}/")
    keys = page.get_by_test_id("adjudication-keys")
    expect(keys).to_be_visible()
    expect(keys).to_contain_text("j/k next / previous dispute")
    expect(keys).to_contain_text("a/b side with annotator A / B")
    expect(keys).to_be_in_viewport()
    assert not violations, violations


def test_the_page_says_the_gold_text_box_wins_over_the_own_walk_s_text_and_it_does(page_for):
    project, turn, dispute = dispute_on_two_steps()
    page = page_for(member(project, Role.ADJUDICATOR))
    page.goto(f"/p/{project.slug}/adjudication/turn/{turn.pk}/")
    card = page.locator(f"#dispute-{dispute.pk}")
    expect(card).to_have_class(re.compile(r"\bactive\b"))
    box_label = card.locator('label[for$="-justification"]')
    expect(box_label).to_contain_text("it replaces the text of the side you pick or the one in your own answers")
    for key in ("n", "1", "Enter", "4"):  # the own walk, up to its text step
        page.keyboard.press(key)
    field = card.locator("[data-walk] [data-step-text=justification]")
    expect(field).to_be_focused()
    expect(card.locator("[data-walk] [data-text-wins]")).to_contain_text(
        "unless you write one in the “Gold text” box below: that one replaces them")
    page.keyboard.insert_text("My own words.")
    page.keyboard.press("Control+Enter")
    expect(card.locator("[data-walk-label]")).to_have_text("Unsupported")
    card.locator('textarea[name="text-justification"]').fill("The box's words.")
    reason = card.locator("[data-reason]")
    reason.fill("The year is wrong.")
    reason.focus()
    page.keyboard.press("Control+Enter")
    expect(card).to_have_class(re.compile("dispute-resolved"))
    gold = models.GoldLabel.objects.get(sentence=dispute.sentence)
    assert gold.path == walk(["fabricated"], 4, "The box's words.")  # as the page said
