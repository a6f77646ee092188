"""Issue 42's "Done when", the browser's part: the HalluDetect example walked end to end in Chromium by two
annotators (keys 20 ms apart at 300 ms latency), each kind's value saved, then the adjudicator walks the dispute
with the same kinds' keys and the gold keeps the path with its list, integer and text."""

import re

import pytest
from playwright.sync_api import expect

from annotator.domain.protocol.document import load_shipped
from annotator.domain.protocol.kinds import scale
from annotator.models import Adjudication, Assignment, GoldLabel, SentenceAnnotation
from annotator.domain.vocabulary import Role
from tests.conftest import start_from_queue, submit_with_keys
from tests.factories import DialogueFactory, TurnFactory, member
from tests.protocol_walks import TEXTS, example_project
from tests.test_annotation_outbox_browser import emulate
from tests.test_step_kinds_browser import PAUSE, press

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=30_000)


def keys_of(protocol, path):
    """The keys that walk ``path`` on the screen: a choice's key, a multiple step's digits then Enter, a scale
    point's digit, a text's characters then Ctrl+Enter and a wait for the keys held after typing (keymap.js)."""
    keys = []
    for step, value in path.items():
        found = protocol.step(step)
        if found.kind == "choice":
            keys.append(next(a.key for a in found.answers if a.value == value))
        elif found.kind == "multiple":
            keys += [next(a.key for a in found.answers if a.value == chosen) for chosen in value] + ["Enter"]
        elif found.kind == "scale":
            keys.append(scale.key_of(found, value))
        else:
            keys += [*value, "Control+Enter", PAUSE]
    return keys


def unsupported(errors, severity, why):
    return {"supported": "no", "error_types": errors, "severity": severity, "justification": why}


SUPPORTED = {"supported": "yes"}
FIRST = [SUPPORTED, unsupported(["fabricated"], 5, "No such plant."), unsupported(["wrong_citation"], 2, "Wrong page.")]
SECOND = [unsupported(["misattributed", "outdated_law"], 3, "Old statute."), FIRST[1],
          unsupported(["wrong_citation"], 2, "The page cited says otherwise.")]
GOLD = unsupported(["misattributed"], 4, "The source is another court.")


def two_annotators_walk(page_for, slug):
    """Two annotators walk the turn in Chromium (keys 20 ms apart at 300 ms latency) and submit it; each kind's
    value is saved as typed."""
    protocol = load_shipped("halludetect")
    project, _ = example_project("halludetect", slug, overlap=2)
    turn = TurnFactory(dialogue=DialogueFactory(project=project), sentences=TEXTS)
    people = []
    for paths in (FIRST, SECOND):
        annotator = member(project, Role.ANNOTATOR)
        people.append(annotator)
        page = page_for(annotator)
        page.on("dialog", lambda dialog: dialog.accept())
        start_from_queue(page, project)
        emulate(page, latency=300)
        press(page, [key for path in paths for key in keys_of(protocol, path)])
        expect(page.locator("#ws-progress")).to_have_text(f"{len(TEXTS)} of {len(TEXTS)} sentences labelled")
        expect(page.locator("#save-status")).to_have_text("Saved")
        submit_with_keys(page)
        expect(page.locator(".panel-message, #submitted, .message.success")).to_contain_text(re.compile("ubmitted"))
        page.close()
    for annotator, paths in zip(people, (FIRST, SECOND)):
        assignment = Assignment.objects.get(annotator=annotator)
        assert assignment.status == Assignment.Status.SUBMITTED
        saved = SentenceAnnotation.objects.filter(assignment=assignment).order_by("sentence__index")
        assert [(a.label, a.path) for a in saved] == [(protocol.label_of(p), p) for p in paths]
    return protocol, project, turn


def test_two_annotators_walk_halludetect_in_chromium_and_submit_each_kind_s_value(page_for):
    two_annotators_walk(page_for, "halludetect-two")
    # The first sentence's labels differ (supported / unsupported): a dispute for the adjudicator.
    assert Adjudication.objects.filter(status=Adjudication.Status.OPEN, sentence__index=0).exists()


def test_the_adjudicator_walks_a_halludetect_dispute_with_the_kinds_keys(page_for):
    protocol, project, turn = two_annotators_walk(page_for, "halludetect-adjudicated")
    # The first sentence's labels differ (supported / unsupported): a dispute the adjudicator walks with the keys.
    dispute = Adjudication.objects.get(status=Adjudication.Status.OPEN, sentence__index=0)
    page = page_for(member(project, Role.ADJUDICATOR))
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"/p/{project.slug}/adjudication/turn/{turn.pk}/")
    card = page.locator(f"#dispute-{dispute.pk}")
    expect(card).to_have_class(re.compile(r"\bactive\b"))
    page.keyboard.press("2")
    expect(card.locator(".question")).to_contain_text(protocol.step("error_types").question)
    page.keyboard.press("Enter")  # nothing picked: refused, the decision is not saved
    expect(card.locator(".walk-refused")).to_contain_text("Pick at least 1 answer")
    press(page, keys_of(protocol, GOLD)[1:])
    expect(card.locator("[data-walk-label] .chip")).to_have_text(protocol.label("unsupported").name)
    expect(card.locator(".walk-path")).to_contain_text("Misattributed source")
    expect(card.locator(".walk-path")).to_contain_text(protocol.step("severity").question + " 4")
    page.keyboard.press("r")
    page.keyboard.type("The source is another court.")
    page.keyboard.press("Enter")  # Enter alone saves nothing from a text (issue 46): said
    expect(card.locator(".walk-refused")).to_contain_text("Ctrl+Enter")
    expect(card.locator("[data-reason]")).to_be_focused()
    page.keyboard.press("Control+Enter")
    expect(card).to_have_class(re.compile("dispute-resolved"))
    gold = GoldLabel.objects.get(sentence=dispute.sentence)
    assert (gold.label, gold.path) == ("unsupported", GOLD)
