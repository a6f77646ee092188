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
