"""The pages that show a stored path, on a project whose protocol has step kinds (issue 42): the annotation page
after a walk through every kind, the adjudicator's dispute rows (a multiple step's answers by their wording),
the protocol page and the format's description. Never a 500."""

import json
import uuid

import pytest
from django.test import Client
from django.urls import reverse

from annotator.domain.protocol.document import PROTOCOLS_DIR
from annotator.domain.vocabulary import Role
from annotator.models import Adjudication, Project
from annotator.projects.protocol_services import protocol_set
from annotator.templatetags.qa_tags import path_steps
from annotator.work.services import assignment_submit
from tests.factories import member
from tests.factories_workspace import annotators, claimed, project_with_turns

pytestmark = pytest.mark.django_db

UNSUPPORTED = [("supported", "no"), ("error_types", ["fabricated", "wrong_citation"]), ("severity", 5),
               ("justification", "No such case is reported.")]


def signed_in(user):
    client = Client()
    client.force_login(user)
    return client


def walk_and_submit(project, user, walk):
    client = signed_in(user)
    assignment = claimed(project, user)
    changes = [{"request_id": str(uuid.uuid4()), "sentence": sentence.pk, "path": None,
                "steps": [{"action": "answer", "step": step, "value": value} for step, value in walk]}
               for sentence in assignment.turn.sentences.order_by("index")]
    saved = client.post(reverse("annotate_sync", args=[assignment.pk]),
                        json.dumps({"version": 0, "changes": changes}), content_type="application/json")
    assert saved.status_code == 200, saved.content
    assert client.get(reverse("annotate", args=[assignment.pk])).status_code == 200
    assignment_submit(assignment, actor=user)
    return assignment


def test_a_dispute_on_a_kind_protocol_shows_each_sides_answers_in_words():
    project, turns = project_with_turns(1)
    Project.objects.filter(pk=project.pk).update(overlap=2)
    project.refresh_from_db()
    protocol_set(project, json.loads((PROTOCOLS_DIR / "halludetect.json").read_text()))
    first, second = annotators(project, 2)
    walk_and_submit(project, first, [("supported", "yes")])
    walk_and_submit(project, second, UNSUPPORTED)
    assert Adjudication.objects.filter(turn=turns[0]).exists()
    lead = signed_in(member(project, Role.LEAD))
    for url in (reverse("gold_queue", args=[project.slug]), reverse("project_protocol", args=[project.slug]),
                reverse("turn_detail", args=[project.slug, turns[0].pk]), reverse("protocol_format")):
        assert lead.get(url).status_code == 200, url
    screen = lead.get(reverse("gold_turn", args=[project.slug, turns[0].pk]))
    assert screen.status_code == 200
    assert "Fabricated fact, Wrong citation" in screen.content.decode()


def test_a_path_with_kind_values_is_shown_step_by_step_in_words():
    project, _ = project_with_turns(1)
    protocol_set(project, json.loads((PROTOCOLS_DIR / "halludetect.json").read_text()))
    project.refresh_from_db()
    rows = path_steps(dict(UNSUPPORTED), project)
    assert [answer for _, answer in rows] == ["No", "Fabricated fact, Wrong citation", "5",
                                              "No such case is reported."]
