"""The smaller stumbles of issue 26, item 8, as a person meets them in a real browser."""

import re

import pytest
from playwright.sync_api import expect

from annotator.domain.vocabulary import Label, Role
from annotator.gold.services import gold_derive_for_turn
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
