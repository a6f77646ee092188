"""Walking a project's protocol document in Chromium with the document's own keys: shared by the browser walks
of the example protocols (tests/test_protocol_wiring_browser.py, tests/test_protocol_walk_browser.py)."""

from playwright.sync_api import expect

from annotator.domain.protocol.document import load_shipped
from annotator.projects.protocol_services import protocol_set
from annotator.domain.vocabulary import Role
from tests.factories import ProjectFactory, member
from tests.conftest import submit_with_keys

EXAMPLES = ["face4rag", "cognibench_clinical"]
TEXTS = ["The plant opened in 2019.", "Beta acquired Alpha.", "Sales rose because of the new logo."]
# Per example: the labels of a turn's three sentences for one annotator, and the other annotator's label on the
# second sentence. The two walks part at the depth each document adds: Face4RAG's third level (which knowledge
# error?), the clinical variant's harm step after "invented".
DISAGREEMENT = {
    "face4rag": (["consistent", "entity_inversion", "causal_confusion"], "conflation"),
    "cognibench_clinical": (["faithful", "harmful", "speculative"], "invented"),
}


def example_project(name, slug, **kwargs):
    """A project following the shipped example protocol ``name``, and its lead."""
    project = ProjectFactory(slug=slug, **kwargs)
    lead = member(project, Role.LEAD)
    protocol_set(project, load_shipped(name).document, user=lead)
    project.refresh_from_db()
    return project, lead


def keys_for(protocol, path):
    """The keys that walk ``path``: each answer's own key in the document."""
    return [next(a.key for a in protocol.step(step).answers if a.value == value) for step, value in path.items()]


def walk_turn(page, protocol, labels):
    """On the annotation screen: each sentence walked to ``labels[i]`` with the document's keys (its question
    asked first, its label's name on the chip), then the turn submitted with s then Enter once everything is saved."""
    for number, label in enumerate(labels, start=1):
        path = protocol.path_for_label(label)
        expect(page.locator("#panel-title")).to_contain_text(f"Sentence {number} of {len(labels)}")
        expect(page.locator("#question-text")).to_have_text(protocol.step(protocol.start).question)
        for key in keys_for(protocol, path):
            page.keyboard.press(key)
        expect(page.locator("a.sentence").nth(number - 1).locator(".chip")).to_have_text(protocol.label(label).name)
    expect(page.locator("#save-status")).to_have_text("Saved")
    submit_with_keys(page)
