"""Independent mode on a protocol with step kinds (issue 42): a side that picked its label directly, then answered
the kind steps of its walk, shows the adjudicator those values (no choice path: nobody walked it), blind as
before (no annotator names to an adjudicator)."""

import json
import uuid

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotator import models
from annotator.domain.protocol.document import PROTOCOLS_DIR
from annotator.domain.vocabulary import ProtocolMode, Role
from annotator.gold.derivation import gold_derive_for_turn
from annotator.projects.protocol_services import protocol_set
from tests.factories import member
from tests.factories_workspace import annotators, claimed, project_with_turns

pytestmark = pytest.mark.django_db


def pick_then_answer(user, assignment, sentence, severity, text):
    client = Client()
    client.force_login(user)
    steps = [{"action": "pick", "value": "unsupported"},
             {"action": "answer", "step": "error_types", "value": ["fabricated", "outdated_law"]},
             {"action": "answer", "step": "severity", "value": severity},
             {"action": "answer", "step": "justification", "value": text}]
    body = {"version": 0, "changes": [{"request_id": str(uuid.uuid4()), "sentence": sentence.pk, "path": None,
                                       "steps": steps}]}
    response = client.post(reverse("annotate_sync", args=[assignment.pk]), json.dumps(body),
                           content_type="application/json")
    assert response.status_code == 200, response.content
    models.Assignment.objects.filter(pk=assignment.pk).update(status=models.Assignment.Status.SUBMITTED,
                                                              submitted_at=timezone.now())


@pytest.fixture
def dispute():
    project, (turn,) = project_with_turns(1, sentences=["The statute of limitations is three years."])
    document = json.loads((PROTOCOLS_DIR / "halludetect.json").read_text())
    document["modes"] = ["sequential", "independent"]
    protocol_set(project, document)
    models.Project.objects.filter(pk=project.pk).update(protocol_mode=ProtocolMode.INDEPENDENT, overlap=2)
    project.refresh_from_db()
    ann1, ann2 = annotators(project, 2)
    sentence = turn.sentences.get()
    pick_then_answer(ann1, claimed(project, ann1), sentence, 2, "A wrong year, minor.")
    pick_then_answer(ann2, claimed(project, ann2), sentence, 5, "Out of time: the claim is lost.")
    result = gold_derive_for_turn(turn)
    assert result.disputed == [sentence.pk]  # one label, two points: a dispute
    return project, turn, (ann1, ann2)


def card_of(project, turn, user):
    client = Client()
    client.force_login(user)
    response = client.get(f"/p/{project.slug}/adjudication/turn/{turn.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    return html.split('class="card dispute')[1].split("</section>")[0]


def test_the_kind_values_of_sides_that_picked_their_label_are_shown_without_names(dispute):
    project, turn, (ann1, ann2) = dispute
    card = card_of(project, turn, member(project, Role.ADJUDICATOR))
    assert card.count("data-picked") == 2  # both picked: no choice path walked
    rows = card.split("<tbody>")[1].split("final-row")[0]
    assert "Is the sentence supported" not in rows  # the choice step nobody walked is not a row
    assert "Which errors does it make?" in rows and rows.count("Fabricated fact, Outdated law") == 2
    assert "How severe is the worst error?" in rows and "<td>2</td>" in rows and "<td>5</td>" in rows
    assert "A wrong year, minor." in rows and "Out of time: the claim is lost." in rows
    assert ann1.username not in card and ann2.username not in card  # blind, as before
    # A lead reads the names, as before.
    assert f"({ann1.username})" in card_of(project, turn, member(project, Role.LEAD))
