"""Face4RAG's three-level protocol walked in Chromium: the annotation screen asks the document's questions and
takes its keys, two annotators disagree, the adjudicator walks the document on the dispute, and the reports
show agreement per step of the document (tests/test_protocol_wiring.py walks both example protocols at
service and page level, export and qualification included)."""

import re

import pytest
from playwright.sync_api import expect

from annotator.domain.protocol_document import load_shipped
from annotator.models import Adjudication, GoldLabel
from annotator.projects.protocol_services import protocol_set
from annotator.reports.agreement import project_agreement
from annotator.domain.vocabulary import Role
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory, member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
expect.set_options(timeout=30_000)

FACE4RAG = load_shipped("face4rag")
TEXTS = ["The plant opened in 2019.", "Beta acquired Alpha.", "Sales rose because of the new logo."]


def keys_for(path):
    """The keys that walk ``path``: each answer's own key in the document."""
    return [next(a.key for a in FACE4RAG.step(step).answers if a.value == value) for step, value in path.items()]


def path_to(label):
    return next(path for path in FACE4RAG.paths() if FACE4RAG.label_of(path) == label)


def annotate_with_keys(page, project, paths):
    page.goto(f"/p/{project.slug}/work/")
    expect(page.locator("#start-button")).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/a/\d+/"))
    for number, path in enumerate(paths, start=1):
        expect(page.locator("#panel-title")).to_contain_text(f"Sentence {number} of 3")
        first_step = next(iter(path))
        expect(page.locator("#question-text")).to_have_text(FACE4RAG.step(first_step).question)
        for key in keys_for(path):
            page.keyboard.press(key)
        label = FACE4RAG.label_of(path)
        expect(page.locator("a.sentence").nth(number - 1).locator(".chip")).to_have_text(FACE4RAG.label(label).name)
    expect(page.locator("#save-status")).to_have_text("Saved")
    page.keyboard.press("s")
    expect(page.locator(".panel-message, #submitted, .message")).to_contain_text(re.compile("ubmitted"))


def test_face4rag_in_chromium_annotation_dispute_and_adjudication(page_for):
    project = ProjectFactory(slug="face4rag-browser", overlap=2)
    lead = member(project, Role.LEAD)
    protocol_set(project, FACE4RAG.document, user=lead)
    project.refresh_from_db()
    turn = TurnFactory(dialogue=DialogueFactory(project=project), sentences=TEXTS)
    consistent, inversion, causal = path_to("consistent"), path_to("entity_inversion"), path_to("causal_confusion")
    assert len(inversion) == 3  # three levels: consistent? -> which error? -> which type?

    first, second = member(project, Role.ANNOTATOR), member(project, Role.ANNOTATOR)
    for user, paths in ((first, [consistent, inversion, causal]), (second, [consistent, path_to("conflation"), causal])):
        page = page_for(user)
        page.on("dialog", lambda dialog: dialog.accept())
        annotate_with_keys(page, project, paths)
        page.close()

    dispute = Adjudication.objects.get(status=Adjudication.Status.OPEN)
    assert dispute.sentence.index == 1
    assert set(GoldLabel.objects.values_list("label", flat=True)) == {"consistent", "causal_confusion"}

    judge = member(project, Role.ADJUDICATOR)
    page = page_for(judge)
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"/p/{project.slug}/adjudication/turn/{turn.pk}/")
    card = page.locator(f"#dispute-{dispute.pk}")
    expect(card).to_have_class(re.compile(r"\bactive\b"))
    # The two walks diverged at the third level, named in the document's words.
    expect(card.locator("[data-diverged]")).to_have_attribute("data-diverged", "knowledge")
    for key, step in zip(keys_for(inversion), inversion):
        expect(card.locator(".question")).to_contain_text(FACE4RAG.step(step).question)
        page.keyboard.press(key)
    expect(card.locator("[data-walk-label] .chip")).to_have_text(FACE4RAG.label("entity_inversion").name)
    page.keyboard.press("r")
    page.keyboard.type("The reference has Alpha acquiring Beta.")
    page.keyboard.press("Enter")
    expect(card).to_have_class(re.compile("dispute-resolved"))
    gold = GoldLabel.objects.get(sentence=dispute.sentence)
    assert (gold.label, gold.path) == ("entity_inversion", inversion)

    measures = {m["variable"]: m for m in project_agreement(project)["measures"]}
    assert list(measures) == ["label", *FACE4RAG.agreement_steps]
    # The third level was asked of both on one sentence only: counted, but one unit is no figure (n/a).
    assert measures["knowledge"]["units"] == 1 and measures["knowledge"]["percent"] is None
    assert measures["category"]["units"] == 2 and measures["category"]["percent"] == 1.0
    assert measures["consistent"]["units"] == 3 and measures["consistent"]["percent"] == 1.0
    page_for(lead).goto(f"/p/{project.slug}/reports/")
