"""The protocol page's live preview in Chromium: the tree of the edited document, walked with the keys."""

import json

import pytest
from playwright.sync_api import expect

from annotator.domain.protocol.document import load_shipped
from annotator.domain.vocabulary import Role
from tests.test_security_csp_browser import watched

from .factories import ProjectFactory, member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_lead_walks_the_preview_with_the_keys_and_it_follows_the_editor(page_for):
    project = ProjectFactory()
    lead = member(project, Role.LEAD)
    violations = []
    page = watched(page_for(lead), violations)
    page.goto(f"/p/{project.slug}/protocol/")
    walk = page.get_by_test_id("protocol-walk")
    expect(page.get_by_test_id("protocol-tree")).to_contain_text("Is it unequivocal?")
    walk.focus()
    expect(page.get_by_test_id("walk-question")).to_have_text("Is the sentence relevant?")
    page.keyboard.press("y")  # relevant
    page.keyboard.press("y")  # "Factual or cognitive?" has no yes/no: refused with a word, as on the annotation screen
    expect(page.get_by_test_id("walk-refused")).to_have_text("y does not apply to this question: its keys are 1, 2.")
    expect(page.get_by_test_id("walk-question")).to_have_text("Factual or cognitive?")
    page.keyboard.press("2")  # cognitive
    expect(page.get_by_test_id("walk-refused")).to_have_count(0)
    expect(page.get_by_test_id("walk-question")).to_have_text("Is it rational?")
    page.keyboard.press("y")
    page.keyboard.press("n")
    expect(page.get_by_test_id("walk-label")).to_have_text("Label: Speculative")
    page.keyboard.press("1")
    expect(page.get_by_test_id("walk-refused")).to_contain_text("1 does not apply: the walk has reached a label.")
    page.keyboard.press("u")
    expect(page.get_by_test_id("walk-question")).to_have_text("Is it grounded in the reference?")

    page.locator("#id_document").fill(json.dumps(load_shipped("face4rag").document))

    expect(page.get_by_test_id("walk-question")).to_have_text("Is the sentence consistent with the reference?")
    page.get_by_test_id("protocol-walk").focus()
    page.keyboard.press("n")
    page.keyboard.press("3")
    page.keyboard.press("2")
    expect(page.get_by_test_id("walk-label")).to_have_text("Label: Causal confusion")

    page.locator("#id_document").fill('{"id": "x"}')
    expect(page.get_by_test_id("preview-problems")).to_contain_text("'name' is a required property")
    assert not violations, violations


def test_a_chosen_file_is_loaded_into_the_editor_and_previewed_and_set_only_on_confirmation(page_for, tmp_path):
    """Issue 41, item 4: choosing a file does not set it; the editor and the walkable preview show it first."""
    import yaml

    from annotator.models import Project

    project = ProjectFactory()
    lead = member(project, Role.LEAD)
    face4rag = load_shipped("face4rag")
    upload = tmp_path / "face4rag.yaml"
    upload.write_text(yaml.safe_dump(face4rag.document, allow_unicode=True, sort_keys=False))
    page = page_for(lead)
    page.set_default_timeout(60_000)
    page.goto(f"/p/{project.slug}/protocol/")
    expect(page.get_by_test_id("walk-question")).to_have_text("Is the sentence relevant?")
    page.locator("#id_file").set_input_files(str(upload))
    expect(page.get_by_test_id("file-loaded")).to_contain_text("face4rag.yaml is in the editor")
    expect(page.locator("#id_document")).to_have_value(upload.read_text())
    expect(page.get_by_test_id("walk-question")).to_have_text("Is the sentence consistent with the reference?")
    assert Project.objects.get(pk=project.pk).protocol_version_id is None  # previewed, not set
    page.get_by_role("button", name="Set the protocol").click()
    expect(page.get_by_test_id("protocol-current")).to_contain_text(face4rag.name)
    assert Project.objects.get(pk=project.pk).protocol_version.document == face4rag.document


def test_the_preview_shows_no_null_says_how_many_to_pick_marks_the_picks_and_lists_every_kind_in_its_tree(page_for):
    """Issue 50, item 3: no literal "null" under the answers in any state of the walk; a multiple choice step of four
    answers taking one to three says "pick 1 to 3" (not a range of keys); a picked answer is marked as on the
    annotation screen; the tree lists the multiple step's answers with their keys and the scale's anchors."""
    document = load_shipped("halludetect").document
    types = next(step for step in document["steps"] if step["id"] == "error_types")
    types["answers"] = types["answers"][:4]
    types["max"] = 3
    project = ProjectFactory()
    page = page_for(member(project, Role.LEAD))
    page.goto(f"/p/{project.slug}/protocol/")
    page.locator("#id_document").fill(json.dumps(document))
    walk, question = page.get_by_test_id("protocol-walk"), page.get_by_test_id("walk-question")
    expect(question).to_have_text("Is the sentence supported by the sources?")

    tree = page.get_by_test_id("protocol-tree")
    expect(tree.locator('[data-step=error_types] > ul > [data-listed="4"]')).to_have_text("4 Outdated law")
    expect(tree.locator("[data-step=error_types] > ul > [data-listed]")).to_have_count(4)
    expect(tree.locator('[data-step=severity] [data-listed="1"]')).to_have_text("1 1 — cosmetic")
    expect(tree.locator('[data-step=severity] [data-listed="5"]')).to_have_text("5 5 — outcome-changing")
    expect(tree.locator("[data-step=error_types] > ul > li").last).to_contain_text("Several may apply: pick 1 to 3;")
    expect(tree).not_to_contain_text("Picked:")  # nothing is picked in a tree

    def no_null():
        expect(walk).not_to_contain_text("null")

    walk.focus()
    no_null()  # a choice step
    page.keyboard.press("n")
    expect(question).to_have_text("Which errors does it make?")
    expect(walk).to_contain_text("Several may apply: pick 1 to 3;")
    no_null()
    page.keyboard.press("2")
    picked = walk.locator("button[data-toggle=misattributed]")
    expect(picked).to_have_attribute("aria-pressed", "true")
    expect(picked).to_have_css("font-weight", "700")  # marked on screen, not only for a screen reader
    expect(walk.locator("button[data-toggle=fabricated]")).not_to_have_css("font-weight", "700")
    no_null()
    page.keyboard.press("9")  # refused, with a word
    expect(page.get_by_test_id("walk-refused")).to_be_visible()
    no_null()
    page.keyboard.press("Enter")
    expect(question).to_have_text("How severe is the worst error?")
    no_null()
    page.keyboard.press("5")
    expect(walk.locator("[data-step-text=justification]")).to_be_focused()
    no_null()
    page.keyboard.insert_text("The holding was reversed.")
    page.keyboard.press("Control+Enter")
    expect(page.get_by_test_id("walk-label")).to_have_text("Label: Unsupported")
    no_null()
