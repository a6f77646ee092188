"""The annotation page's save route (/a/<id>/sync/) with step kinds (issue 42): a list, an int and a str answer
are stored as such; a value the step refuses is a 400 naming the step, never a 500."""

import json
import uuid

import pytest
from django.urls import reverse

from annotator.domain.protocol.document import PROTOCOLS_DIR
from annotator.models import AnnotationEvent, SentenceAnnotation
from annotator.projects.protocol_services import protocol_set
from tests.factories_workspace import annotators, claimed, halludetect_slot, project_with_turns

pytestmark = pytest.mark.django_db

WALK = [("supported", "no"), ("error_types", ["wrong_citation", "fabricated"]), ("severity", 4),
        ("justification", "The cited case does not exist.")]
STORED = {"supported": "no", "error_types": ["fabricated", "wrong_citation"], "severity": 4,
          "justification": "The cited case does not exist."}


def change(sentence, steps, path):
    return {"request_id": str(uuid.uuid4()), "sentence": sentence.pk, "path": path,
            "steps": [{"action": "answer", "step": s, "value": v, "at": 1_700_000_000_000} for s, v in steps]}


def sync(client, assignment, body):
    return client.post(reverse("annotate_sync", args=[assignment.pk]), json.dumps(body), content_type="application/json")


@pytest.fixture
def setup(client):
    assignment = halludetect_slot(client)
    return client, assignment, list(assignment.turn.sentences.order_by("index"))


def test_a_walk_through_every_kind_is_saved_with_its_values_and_label(setup):
    client, assignment, sentences = setup
    response = sync(client, assignment, {"version": 0, "changes": [change(sentences[0], WALK, STORED)]})
    assert response.status_code == 200, response.content
    saved = SentenceAnnotation.objects.get(sentence=sentences[0])
    assert (saved.path, saved.label) == (STORED, "unsupported")
    events = AnnotationEvent.objects.filter(sentence=sentences[0], action="answer").order_by("id")
    assert [e.new["answer"] for e in events] == [v for _, v in WALK]
    assert events.last().new["path"] == STORED


def test_an_unfinished_walk_keeps_its_kind_values_without_a_label(setup):
    client, assignment, sentences = setup
    partial = {"supported": "no", "error_types": ["outdated_law"], "severity": 2}
    body = {"version": 0, "changes": [change(sentences[0], [("supported", "no"), ("error_types", ["outdated_law"]),
                                                            ("severity", 2)], partial)]}
    assert sync(client, assignment, body).status_code == 200
    saved = SentenceAnnotation.objects.get(sentence=sentences[0])
    assert (saved.path, saved.label) == (partial, "")


@pytest.mark.parametrize("step, value, words", [
    ("severity", 9, "step 'severity' takes a whole number from 1 to 5"),
    ("severity", True, "An answer is a string, a list of strings or an integer."),
    ("severity", "4", "step 'severity' takes a whole number"),
    ("severity", 4.5, "An answer is a string, a list of strings or an integer."),
    ("error_types", [], "step 'error_types' takes 1 to 5 of its answers"),
    ("error_types", ["fabricated", 3], "An answer is a string"),
    ("error_types", {"a": 1}, "An answer is a string"),
    ("error_types", None, "may not be null"),
    ("justification", "", "step 'justification' needs an answer"),
    ("justification", "x" * 2001, "step 'justification' takes at most 2,000 characters"),
    ("justification", "x" * 5001, "An answer is a string"),
    ("justification", "a\x00b", "An answer is a string"),
])
def test_a_value_the_step_refuses_is_a_400_naming_it(setup, step, value, words):
    client, assignment, sentences = setup
    before = {"supported": "no", "error_types": ["fabricated"], "severity": 3}
    steps = [("supported", "no"), ("error_types", ["fabricated"]), ("severity", 3), ("justification", "why")]
    steps = [(s, value if s == step else v) for s, v in steps][:[s for s, _ in steps].index(step) + 1]
    response = sync(client, assignment, {"version": 0, "changes": [change(sentences[0], steps, None)]})
    assert response.status_code == 400, response.content
    assert words in response.json()["error"] and response.json()["error"].startswith("change 1: steps ")
    assert not SentenceAnnotation.objects.filter(sentence=sentences[0]).exists()
    assert before  # the refused change wrote nothing: the sentence has no answer


@pytest.mark.parametrize("path, step", [
    ({"supported": "no", "error_types": ["wrong_citation", "fabricated"]}, "error_types"),  # not in answer order
    ({"supported": "no", "error_types": ["fabricated"], "severity": 7}, "severity"),
    ({"supported": "no", "error_types": ["fabricated"], "severity": [1]}, "severity"),
])
def test_a_path_shown_with_a_value_its_step_refuses_is_a_400_naming_the_step(setup, path, step):
    client, assignment, sentences = setup
    response = sync(client, assignment, {"version": 0, "changes": [change(sentences[0], [], path)]})
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error.startswith("change 1: path: ") and step in error


# -- the API's answer route: the same values, the same refusals -----------------------------------------------

def api_answer(assignment, user, sentence, step, answer, version):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(user)
    return client.post(reverse("api:assignment-answer", kwargs={"slug": assignment.project.slug, "pk": assignment.pk}),
                       {"sentence": sentence.pk, "step": step, "answer": answer, "expected_version": version},
                       format="json")


def test_the_api_answers_each_kind_and_refuses_a_value_its_step_does_not_take(setup):
    _, assignment, sentences = setup
    user = assignment.annotator
    for version, (step, value) in enumerate(WALK):
        response = api_answer(assignment, user, sentences[0], step, value, version)
        assert response.status_code == 200, response.content
    saved = SentenceAnnotation.objects.get(sentence=sentences[0])
    assert (saved.path, saved.label) == (STORED, "unsupported")
    for step, value, words in [("severity", 0, "step 'severity' takes a whole number from 1 to 5"),
                               ("severity", True, "A path value is a string (a choice's answer, a text), an integer"),
                               ("error_types", ["nope"], "step 'error_types' has no answer 'nope'"),
                               ("supported", ["no"], "step 'supported' takes one of its answers: yes, no."),
                               ("supported", "fabricated", "step 'supported' takes yes or no, not 'fabricated'"),
                               ("supported", "maybe", "'maybe' is not a answer of this project's protocol"),
                               ("justification", "", "step 'justification' needs an answer")]:
        response = api_answer(assignment, user, sentences[1], step, value, None)
        assert response.status_code == 400, (step, value, response.content)
        assert words in json.dumps(response.json()), response.json()


# -- independent mode: the pick gives the shape, the kind steps on its walk are answered after it ---------------

def test_in_independent_mode_a_pick_is_followed_by_the_kind_steps_of_its_walk(client):
    from annotator.domain.vocabulary import ProtocolMode
    from annotator.models import Project

    project, _ = project_with_turns(1)
    document = json.loads((PROTOCOLS_DIR / "halludetect.json").read_text())
    document["modes"] = ["sequential", "independent"]
    protocol_set(project, document)
    Project.objects.filter(pk=project.pk).update(protocol_mode=ProtocolMode.INDEPENDENT)
    user, = annotators(project, 1)
    client.force_login(user)
    assignment = claimed(project, user)
    sentence = assignment.turn.sentences.order_by("index").first()

    def send(version, *steps):
        body = {"version": version, "changes": [{"request_id": str(uuid.uuid4()), "sentence": sentence.pk,
                                                  "path": None, "steps": list(steps)}]}
        return sync(client, assignment, body)

    assert send(0, {"action": "pick", "value": "unsupported"}).status_code == 200
    saved = SentenceAnnotation.objects.get(sentence=sentence)
    assert (saved.path, saved.label) == ({"supported": "no"}, "")  # its kind steps are still to be answered
    refused = send(1, {"action": "answer", "step": "supported", "value": "yes"})
    assert refused.status_code == 422 and "independent mode" in refused.json()["error"]
    answers = [{"action": "answer", "step": step, "value": value} for step, value in WALK[1:]]
    assert send(1, *answers).status_code == 200
    saved.refresh_from_db()
    assert (saved.path, saved.label) == (STORED, "unsupported")
    assert send(2, {"action": "undo"}).status_code == 200
    saved.refresh_from_db()
    assert (saved.label, "justification" in saved.path) == ("", False)
    assert send(3, {"action": "undo"}, {"action": "undo"}, {"action": "undo"}).status_code == 200
    saved.refresh_from_db()
    assert (saved.path, saved.label) == ({}, "")  # the last undo takes the pick back
    assert send(4, {"action": "pick", "value": "supported"}).status_code == 200
    saved.refresh_from_db()
    assert (saved.path, saved.label) == ({"supported": "yes"}, "supported")
