"""An adjudicator decides disputes with the keyboard in a real browser, and gold appears."""

import re

import pytest
from playwright.sync_api import expect

from annotator.models import Adjudication, EvidenceSpan, GoldLabel
from annotator.gold.derivation import gold_derive_for_turn
from annotator.domain.vocabulary import GoldProvenance, Label, Role

from .factories import ProjectFactory, TurnFactory, member
from .factories_gold import annotators, submit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Generous waits: the machine running the suite may be busy; a wait is not a timing threshold.
expect.set_options(timeout=20_000)


def test_adjudicator_resolves_disputes_with_the_keyboard(page_for, tmp_path):
    project = ProjectFactory(slug="amazon")
    ann1, ann2 = annotators(project)
    turn = TurnFactory(dialogue__project=project)
    mine = submit(turn, ann1, [Label.FAITHFUL, Label.SPECULATIVE, Label.IRRELEVANT], notes={0: "Paragraph 1 says Brazil."})
    reference = turn.dialogue.reference
    quote = "The Amazon river flows through Brazil."
    EvidenceSpan.objects.create(annotation=mine.sentence_annotations.get(sentence__index=0),
                                start=reference.index(quote), end=reference.index(quote) + len(quote), text=quote)
    submit(turn, ann2, [Label.INVENTED, Label.RELIABLE, Label.IRRELEVANT])
    gold_derive_for_turn(turn)
    first, second, third = turn.sentences.order_by("index")
    judge = member(project, Role.ADJUDICATOR)

    page = page_for(judge)
    page.goto(f"/p/{project.slug}/adjudication/")
    page.get_by_role("link", name=re.compile(r"^Adjudicate ")).click()
    dispute = page.locator(f"#dispute-{Adjudication.objects.get(sentence=first).pk}")
    # Both paths side by side, the step where they diverged marked, the note shown.
    assert dispute.locator("tr.diverged").get_attribute("data-diverged") == "faithfulness"
    assert "Paragraph 1 says Brazil." in dispute.inner_text()
    # Annotator A's evidence is listed and highlighted in the reference while the dispute is active.
    assert quote in dispute.locator(".evidence").inner_text()
    expect(page.locator("#reference-text mark.ev-a")).to_have_text(quote)
    page.screenshot(path=str(tmp_path / "adjudication.png"), full_page=True)

    # First dispute: side with annotator A, give a reason, save with Ctrl+Enter.
    page.keyboard.press("a")
    page.keyboard.press("r")
    page.keyboard.type("The reference names Brazil.")
    page.keyboard.press("Control+Enter")  # Enter alone saves nothing from a text (issue 46)
    expect(dispute).to_have_class(re.compile("dispute-resolved"))
    gold = GoldLabel.objects.get(sentence=first)
    assert (gold.label, gold.provenance, gold.decided_by, gold.reason) == (
        Label.FAITHFUL, GoldProvenance.ADJUDICATION, judge, "The reference names Brazil."
    )

    # The next dispute is active: walk the protocol with 1/2 (relevant, cognitive, rational, not grounded).
    second_card = page.locator(f"#dispute-{Adjudication.objects.get(sentence=second).pk}")
    expect(second_card).to_have_class(re.compile(r"\bactive\b"))
    expect(page.locator("html")).not_to_have_attribute("data-keys-held", "true")  # keys right after typing are held
    for key, asked in (("1", "Is the sentence relevant?"), ("2", "Factual or cognitive?"),
                       ("1", "Is it rational?"), ("2", "Is it grounded in the reference?")):
        expect(second_card.locator(".question")).to_contain_text(asked)
        page.keyboard.press(key)
        expect(second_card.locator(f".walk-path li:has-text('{asked}')")).to_have_count(1)
    expect(second_card.locator("[data-protocol]")).to_be_checked()
    # Saving without a reason is refused; the reason box is marked but not focused, so the next shortcut key
    # is not typed into it: r opens it.
    page.keyboard.press("Enter")
    expect(second_card.locator("[role=alert]")).to_contain_text("reason")
    expect(second_card.locator("[data-reason]")).to_have_attribute("aria-invalid", "true")
    expect(second_card.locator("[data-reason]")).not_to_be_focused()
    assert not GoldLabel.objects.filter(sentence=second).exists()
    page.keyboard.press("r")
    expect(second_card.locator("[data-reason]")).to_be_focused()
    expect(second_card.locator("[data-reason]")).to_have_value("")  # the r opened the box; it typed nothing
    page.keyboard.type("Plausible but the reference does not say so.")
    page.keyboard.press("Control+Enter")  # Enter alone saves nothing from a text (issue 46)
    expect(second_card).to_have_class(re.compile("dispute-resolved"))
    assert GoldLabel.objects.get(sentence=second).label == Label.SPECULATIVE
    expect(page.locator("#turn-done")).to_be_visible()
    page.screenshot(path=str(tmp_path / "adjudication-done.png"), full_page=True)
    # The turn is done: n opens the next turn of the queue (here none is left, so the queue).
    expect(page.locator("#turn-done a")).to_be_focused()
    expect(page.locator("html")).not_to_have_attribute("data-keys-held", "true")  # keys right after typing are held
    page.keyboard.press("n")
    page.wait_for_url(re.compile(rf"/p/{project.slug}/adjudication/$"))

    # The gold and its history are on the sentence page.
    page.goto(f"/p/{project.slug}/gold/sentence/{second.pk}/")
    assert page.locator("[data-gold-label]").get_attribute("data-gold-label") == Label.SPECULATIVE
    assert "Plausible but the reference does not say so." in page.locator(".gold-history").inner_text()


def _emulate_latency(page, latency):
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions",
             {"offline": False, "latency": latency, "downloadThroughput": -1, "uploadThroughput": -1})


def test_the_adjudicators_walk_is_walked_in_the_page_keys_in_a_burst_apply_to_what_is_shown(page_for):
    """300 ms of latency, keys 20 ms apart: every key answers the question on screen (no request per step); the walk
    survives a reload; keys pressed while the decision is on the wire are refused, not applied to the next dispute."""
    project = ProjectFactory(slug="burst")
    ann1, ann2 = annotators(project)
    turn = TurnFactory(dialogue__project=project)
    submit(turn, ann1, [Label.FAITHFUL, Label.SPECULATIVE, Label.IRRELEVANT])
    submit(turn, ann2, [Label.INVENTED, Label.RELIABLE, Label.FAITHFUL])
    gold_derive_for_turn(turn)
    first, second, third = turn.sentences.order_by("index")
    judge = member(project, Role.ADJUDICATOR)
    page = page_for(judge)
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"/p/{project.slug}/adjudication/turn/{turn.pk}/")
    card = page.locator(f"#dispute-{Adjudication.objects.get(sentence=first).pk}")
    expect(card).to_have_class(re.compile(r"\bactive\b"))
    _emulate_latency(page, 300)
    posts = []
    page.on("request", lambda request: posts.append(request.url) if request.method == "POST" else None)

    # relevant (1), cognitive (2), rational yes (1), grounded no (2) -> speculative; take the last back, answer yes (1)
    # -> unequivocal? no (2) -> reliable.
    for key in ["1", "2", "1", "2", "u", "1", "2"]:
        page.keyboard.press(key)
        page.wait_for_timeout(20)
    expect(card.locator("[data-walk-label] .chip")).to_have_text("Reliable")
    expect(card.locator("[data-protocol]")).to_be_checked()
    expect(card.locator(".walk-path li")).to_have_count(5)
    page.keyboard.press("1")  # the walk has its label: refused on screen
    expect(card.locator(".walk-refused")).to_contain_text("the key was not applied")
    assert posts == []  # the walk sent nothing

    # A reload keeps the walk.
    page.reload()
    card = page.locator(f"#dispute-{Adjudication.objects.get(sentence=first).pk}")
    expect(card.locator("[data-walk-label] .chip")).to_have_text("Reliable")
    expect(card.locator("[data-protocol]")).to_be_checked()
    _emulate_latency(page, 300)

    page.keyboard.press("r")
    page.keyboard.type("Hedged and grounded.")
    page.keyboard.press("Control+Enter")  # Enter alone saves nothing from a text (issue 46)
    for key in ["2", "2"]:  # while the decision is on the wire (and right after typing: held)
        page.keyboard.press(key)
    expect(card).to_have_class(re.compile("dispute-resolved"))
    gold = GoldLabel.objects.get(sentence=first)
    assert (gold.label, gold.reason) == (Label.RELIABLE, "Hedged and grounded.")
    next_card = page.locator(f"#dispute-{Adjudication.objects.get(sentence=second).pk}")
    expect(next_card).to_have_class(re.compile(r"\bactive\b"))
    expect(next_card.locator(".walk-path li")).to_have_count(0)  # nothing typed during the save landed here
    assert not GoldLabel.objects.filter(sentence=second).exists()


def test_counters_and_the_badge_follow_the_last_decision_without_a_reload(page_for):
    project = ProjectFactory(slug="counters")
    ann1, ann2 = annotators(project)
    turn = TurnFactory(dialogue__project=project)
    submit(turn, ann1, [Label.FAITHFUL, Label.SPECULATIVE, Label.IRRELEVANT])
    submit(turn, ann2, [Label.INVENTED, Label.SPECULATIVE, Label.IRRELEVANT])
    gold_derive_for_turn(turn)
    judge = member(project, Role.ADJUDICATOR)
    page = page_for(judge)
    page.goto(f"/p/{project.slug}/adjudication/turn/{turn.pk}/")
    expect(page.locator("#open-dispute-count")).to_have_text("1 open dispute")
    expect(page.locator("#gold-nav-badge")).to_contain_text("Disputes 1")
    page.keyboard.press("a")
    page.keyboard.press("r")
    page.keyboard.type("The reference names Brazil.")
    page.keyboard.press("Control+Enter")  # Enter alone saves nothing from a text (issue 46)
    expect(page.locator("#open-dispute-count")).to_have_text("0 open disputes")
    expect(page.locator("#gold-nav-badge")).not_to_contain_text("Disputes")  # fetched again on the decision
    expect(page.locator("#turn-done")).to_be_visible()
    # Enter, like n, leaves the finished turn for the next one (none is left: the queue), once the keys held after
    # typing apply again.
    expect(page.locator("html")).not_to_have_attribute("data-keys-held", "true")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/p/{project.slug}/adjudication/$"))
