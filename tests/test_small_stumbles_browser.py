"""The smaller stumbles of issue 26, item 8, as a person meets them in a real browser."""

import re

import pytest
from playwright.sync_api import expect

from annotator.domain.vocabulary import Label, Role
from annotator.gold.derivation import gold_derive_for_turn
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, member
from tests.factories_gold import annotators, submit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=30_000)

LONG_REFERENCE = " ".join(f"Paragraph {n}: the Amazon river flows through Brazil and carries much water." for n in range(200))


@pytest.fixture
def disputed():
    project = ProjectFactory(slug="amazon")
    ann1, ann2 = annotators(project)
    turn = TurnFactory(dialogue=DialogueFactory(project=project, reference=LONG_REFERENCE))
    submit(turn, ann1, [Label.FAITHFUL, Label.SPECULATIVE, Label.IRRELEVANT])
    submit(turn, ann2, [Label.INVENTED, Label.RELIABLE, Label.IRRELEVANT])
    gold_derive_for_turn(turn)
    return project, turn, member(project, Role.ADJUDICATOR)


def test_the_adjudication_queue_focuses_its_first_turn_and_the_card_prints_no_null(page_for, disputed):
    from tests.test_accessibility_browser import AXE, SERIOUS

    project, turn, judge = disputed
    page = page_for(judge)
    page.goto(f"/p/{project.slug}/adjudication/")
    expect(page.locator("#adjudicate-first")).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/adjudication/turn/{turn.pk}/"))
    cards = page.locator("section.dispute")
    expect(cards.first).to_be_visible()
    for index in range(cards.count()):
        assert "null" not in cards.nth(index).inner_text()
    # The reference scrolls (a long one): it takes the keyboard focus, so axe has nothing serious to say.
    page.evaluate(AXE)
    assert page.evaluate(SERIOUS) == []


def test_a_lead_sees_who_waits_for_a_qualification_retry_and_allows_it_by_its_visible_name(page_for):
    from annotator.models import QualificationResult

    project = ProjectFactory(slug="quals")
    lead = member(project, Role.LEAD)
    waiting = member(project, Role.ANNOTATOR, username="waiting-ann")
    QualificationResult.objects.create(project=project, annotator=waiting, attempt=1, correct=1, total=3)
    page = page_for(lead)
    page.goto("/")
    badge = page.get_by_test_id("nav-waiting-retry")
    expect(badge).to_contain_text("1")
    badge.click()
    page.wait_for_url(f"**/p/{project.slug}/qa/qualification/")
    # Its accessible name holds the words on the button (WCAG 2.5.3), so "Allow a retry" finds it.
    page.get_by_role("button", name="Allow a retry").click()
    expect(page.get_by_test_id("nav-waiting-retry")).to_have_count(0)
    assert QualificationResult.objects.get(annotator=waiting).retry_allowed


def test_the_pass_page_starts_real_work(page_for):
    from annotator.models import Assignment, QualificationResult

    project = ProjectFactory(slug="passed")
    TurnFactory(dialogue__project=project)
    annotator = member(project, Role.ANNOTATOR)
    QualificationResult.objects.create(project=project, annotator=annotator, attempt=1, correct=3, total=3, passed=True)
    page = page_for(annotator)
    page.goto(f"/p/{project.slug}/qa/qualification/score/")
    expect(page.get_by_test_id("qualification-verdict")).to_contain_text("Passed")
    expect(page.get_by_role("button", name="Start real work")).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/a/\d+/"))
    assert Assignment.objects.filter(annotator=annotator, is_qualification=False).count() == 1


def test_feedback_links_to_its_turn_and_the_lead_chooses_the_expected_label(page_for):
    from annotator.domain.protocol import path_for_label
    from annotator.models import Feedback, GoldLabel, SentenceAnnotation
    from annotator.domain.vocabulary import GoldProvenance

    project = ProjectFactory(slug="fb")
    turn = TurnFactory(dialogue__project=project)
    lead = member(project, Role.LEAD)
    annotator = member(project, Role.ANNOTATOR)
    slot = submit(turn, annotator, [Label.FAITHFUL, Label.SPECULATIVE, Label.IRRELEVANT])
    second = turn.sentences.get(index=1)
    GoldLabel.objects.create(sentence=second, label=Label.RELIABLE, path=path_for_label(Label.RELIABLE),
                             provenance=GoldProvenance.IMPORTED)
    lead_page = page_for(lead)
    lead_page.goto(f"/p/{project.slug}/qa/review/?annotator={annotator.pk}")
    annotation = SentenceAnnotation.objects.get(assignment=slot, sentence=second)
    expected = lead_page.locator(f"#expected-{annotation.pk}")
    expect(expected).to_have_value("")  # nothing chosen for the lead, the gold label only marked
    expect(expected.locator("option", has_text="(the gold label)")).to_have_text("Reliable (the gold label)")

    Feedback.objects.create(project=project, annotation=annotation, lead=lead, comment="Look at the reference.")
    page = page_for(annotator)
    page.goto("/qa/feedback/")
    page.get_by_test_id("feedback-turn-link").click()
    page.wait_for_url(re.compile(rf"/a/{slot.pk}/\?sentence={second.pk}"))
    expect(page.locator("#panel-title")).to_have_text("Sentence 2 of 3")
