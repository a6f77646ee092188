"""The adjudicator's reason is kept in the browser until the dispute is decided: a decision that could not be sent
(offline) and a reload lose nothing that was written (static/js/adjudication.js), in Chromium."""

import re

import pytest
from playwright.sync_api import expect

from annotator.domain.vocabulary import Label, Role
from annotator.models import Adjudication, GoldLabel

from .factories import ProjectFactory, member
from .factories_gold import disputed_turn

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REASON = "The reference names Brazil, not Peru; annotator A read paragraph 1."


def test_a_reason_written_offline_survives_the_refused_send_and_a_reload(page_for):
    project = ProjectFactory()
    turn = disputed_turn(project, [Label.FAITHFUL, Label.FAITHFUL, Label.IRRELEVANT],
                         [Label.INVENTED, Label.FAITHFUL, Label.IRRELEVANT])
    first = turn.sentences.order_by("index").first()
    adjudication = Adjudication.objects.get(sentence=first)
    page = page_for(member(project, Role.ADJUDICATOR))
    page.goto(f"/p/{project.slug}/adjudication/turn/{turn.pk}/")
    dispute = page.locator(f"#dispute-{adjudication.pk}")
    expect(dispute).to_have_class(re.compile(r"\bactive\b"))

    page.keyboard.press("a")  # side with annotator A
    page.keyboard.press("r")
    page.keyboard.type(REASON)
    page.context.set_offline(True)
    page.keyboard.press("Control+Enter")  # the decision cannot be sent
    expect(page.get_by_text("Connection lost")).to_be_visible()
    assert not GoldLabel.objects.filter(sentence=first).exists()
    page.context.set_offline(False)

    page.reload()
    reason = dispute.locator("[data-reason]")
    expect(reason).to_have_value(REASON)  # written before the reload, kept
    page.keyboard.press("a")
    reason.focus()
    page.keyboard.press("Control+Enter")
    expect(dispute).to_have_class(re.compile("dispute-resolved"))
    assert GoldLabel.objects.get(sentence=first).reason == REASON
    kept = page.evaluate("() => Object.keys(localStorage).filter((key) => key.startsWith('adjudication-note:'))")
    assert kept == []  # decided: nothing is kept for it any more


def test_words_kept_for_a_dispute_decided_elsewhere_are_forgotten_when_its_page_opens(page_for):
    project = ProjectFactory()
    turn = disputed_turn(project, [Label.FAITHFUL, Label.FAITHFUL, Label.IRRELEVANT],
                         [Label.INVENTED, Label.FAITHFUL, Label.IRRELEVANT])
    adjudication = Adjudication.objects.get(sentence=turn.sentences.order_by("index").first())
    page = page_for(member(project, Role.ADJUDICATOR))
    url = f"/p/{project.slug}/adjudication/turn/{turn.pk}/"
    page.goto(url)
    page.keyboard.press("r")
    page.keyboard.type("Written, then decided in another tab.")
    key = f"adjudication-note:{adjudication.pk}:reason"
    assert page.evaluate("(key) => localStorage.getItem(key)", key) == "Written, then decided in another tab."
    Adjudication.objects.filter(pk=adjudication.pk).update(status=Adjudication.Status.RESOLVED, label=Label.FAITHFUL,
                                                            reason="decided in another tab")
    page.reload()
    expect(page.locator(f"#dispute-{adjudication.pk}")).to_have_class(re.compile("dispute-resolved"))
    assert page.evaluate("(key) => localStorage.getItem(key)", key) is None
