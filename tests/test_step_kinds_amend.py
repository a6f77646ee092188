"""Amending after feedback on a protocol with step kinds (issue 42): the inbox's form sends the walk with its
multiple, scale and text values, which the server checks ends on the label; a label whose walk asks such steps,
sent without them, is refused and the annotator's values stay; in Chromium the form walks the kinds' keys."""

import html
import json
import uuid

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from annotator import models
from annotator.domain.protocol.document import load_shipped
from annotator.domain.vocabulary import Role
from annotator.projects.protocol_services import protocol_set
from annotator.qa import services as qa
from tests.factories import AssignmentFactory, DialogueFactory, ProjectFactory, TurnFactory, member
from tests.test_security_csp_browser import watched

SUPPORTED = {"supported": "yes"}
WALK = {"supported": "no", "error_types": ["fabricated", "outdated_law"], "severity": 4,
        "justification": "The statute was repealed.\nIn 2020."}


def reviewed(first_path):
    """An annotator's submitted sentence walked to ``first_path``; a lead's feedback on it."""
    protocol = load_shipped("halludetect")
    project = ProjectFactory()
    lead = member(project, Role.LEAD)
    protocol_set(project, protocol.document, user=lead)
    project.refresh_from_db()
    ann = member(project, Role.ANNOTATOR)
    turn = TurnFactory(dialogue=DialogueFactory(project=project), sentences=["The limitation period is ten years."])
    assignment = AssignmentFactory(turn=turn, project=project, annotator=ann, submitted_at=timezone.now(),
                                   status=models.Assignment.Status.SUBMITTED)
    annotation = models.SentenceAnnotation.objects.create(assignment=assignment, sentence=turn.sentences.get(),
                                                          path=first_path, label=protocol.label_of(first_path))
    feedback = qa.feedback_give(annotation=annotation, lead=lead, comment="Check the statute.",
                                expected_label="unsupported")
    return project, ann, feedback


def amend(ann, feedback, **data):
    client = Client()
    client.force_login(ann)
    return client.post(reverse("qa:feedback_amend", args=[feedback.pk]),
                       {"request_id": str(uuid.uuid4()), **data}, HTTP_HX_REQUEST="true")


@pytest.mark.django_db
def test_the_walk_with_its_kind_values_is_amended_and_one_without_them_is_refused(client):
    project, ann, feedback = reviewed(SUPPORTED)
    refused = amend(ann, feedback, label="unsupported")
    text = html.unescape(refused.content.decode())
    assert "Unsupported also asks “Which errors does it make?” and what follows" in text and "Nothing was changed" in text
    annotation = feedback.annotation
    annotation.refresh_from_db()
    assert (annotation.label, annotation.path) == ("supported", SUPPORTED)
    # A walk that ends elsewhere, or that the protocol refuses, changes nothing either.
    for path, says in ((SUPPORTED, "does not end on Unsupported"), ({**WALK, "severity": 9}, "severity"),
                       ({**WALK, "error_types": "fabricated"}, "error_types")):
        response = amend(ann, feedback, label="unsupported", path=json.dumps(path))
        assert response.status_code in (200, 400) and says in html.unescape(response.content.decode()), path
    annotation.refresh_from_db()
    assert annotation.path == SUPPORTED
    for junk in ("[1]", "{", '{"supported": {"x": 1}}'):
        assert amend(ann, feedback, label="unsupported", path=junk).status_code == 400
    assert "Your answer was amended." in amend(ann, feedback, label="unsupported", path=json.dumps(WALK)).content.decode()
    annotation.refresh_from_db()
    assert (annotation.label, annotation.path) == ("unsupported", WALK)
    event = models.AnnotationEvent.objects.get(action="amend")
    assert event.new["path"] == WALK


@pytest.mark.django_db
def test_amending_to_the_label_already_walked_keeps_the_annotator_s_values():
    project, ann, feedback = reviewed(WALK)
    assert "Your answer was amended." in amend(ann, feedback, label="unsupported").content.decode()
    annotation = feedback.annotation
    annotation.refresh_from_db()
    assert (annotation.label, annotation.path) == ("unsupported", WALK)
    # To a label of choices only: its one path, as before.
    assert "Your answer was amended." in amend(ann, feedback, label="supported").content.decode()
    annotation.refresh_from_db()
    assert (annotation.label, annotation.path) == ("supported", SUPPORTED)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_inbox_form_walks_the_kind_steps_by_keyboard_and_amends(page_for):
    expect.set_options(timeout=30_000)
    project, ann, feedback = reviewed(SUPPORTED)
    problems = []
    page = watched(page_for(ann), problems)
    page.goto("/qa/feedback/")
    item = page.get_by_test_id("feedback-item")
    form = item.locator("form[data-amend-walk]")
    item.get_by_text("Amend my answer").click()
    asked = form.locator("[data-walk-question]")
    expect(asked).to_have_text("Is the sentence supported by the sources?")
    page.keyboard.press("2")  # no
    expect(asked).to_have_text("Which errors does it make?")
    page.keyboard.press("Enter")  # nothing picked: refused, said
    expect(form.locator("[data-walk-refused]")).to_contain_text("Pick at least 1 answer")
    for key in ("1", "4", "Enter"):  # fabricated, outdated law; confirm
        page.keyboard.press(key)
    expect(asked).to_have_text("How severe is the worst error?")
    page.keyboard.press("4")
    expect(asked).to_have_text(load_shipped("halludetect").step("justification").question)
    field = form.locator("[data-step-text]")
    expect(field).to_be_focused()
    page.keyboard.type("The statute was repealed.")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("In 2020.")
    page.keyboard.press("Enter")  # confirms nothing in a text field (issue 46): the form says what does
    expect(form.locator("[data-walk-refused]")).to_contain_text("Ctrl+Enter")
    expect(field).to_have_value("The statute was repealed.\nIn 2020.")
    page.keyboard.press("Control+Enter")
    expect(form.locator("[data-walk-result]")).to_have_text("New label: Unsupported")
    expect(form.locator("[data-walked]")).to_have_count(4)
    expect(form.locator('[data-walked="error_types"]')).to_contain_text("Fabricated fact, Outdated law")
    submit = form.locator("button[type=submit]")
    expect(submit).to_be_focused()
    # Keys right after typing are held: Enter on Amend applies once the hold is over.
    expect(page.locator("html")).not_to_have_attribute("data-keys-held", "true")
    page.keyboard.press("Enter")
    expect(item.get_by_role("status")).to_have_text("Your answer was amended.")
    annotation = feedback.annotation
    annotation.refresh_from_db()
    assert (annotation.label, annotation.path) == ("unsupported", WALK)
    assert problems == []
