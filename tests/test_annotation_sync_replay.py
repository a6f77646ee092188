"""A batch sent again after its answer was lost (POST /a/<id>/sync/, as the outbox does) never carries the page's
queued changes onto units or answers it has not seen: when anything moved the slot's version since (a lead's split,
merge or reopen, another tab), the re-sent batch is answered 409 like a fresh stale one and nothing new is written."""

import pytest
from django.test import Client

from annotator.domain.vocabulary import Label, Role
from annotator.models import AnnotationEvent, Assignment, SentenceAnnotation
from annotator.work.assignment import assignment_next
from tests.factories import member
from annotator.work.services import assignment_submit
from tests.factories_workspace import NO_PASSWORD, project_with_turns
from tests.test_annotation_sync import FAITHFUL, change, sync

pytestmark = pytest.mark.django_db

TWO_IN_ONE = "The lighthouse was automated in 1984. The red and white bands were chosen because they show."
UNITS = ["It stands on the cape.", TWO_IN_ONE, "Hello there!"]


@pytest.fixture
def world():
    project, (turn,) = project_with_turns(1, sentences=UNITS)
    lead = Client()
    lead.force_login(member(project, Role.LEAD, password=NO_PASSWORD))
    annotator = member(project, Role.ANNOTATOR, password=NO_PASSWORD)
    page = Client()
    page.force_login(annotator)
    assignment = Assignment.objects.select_related("project", "turn__dialogue").get(
        pk=assignment_next(project, annotator).pk)
    return project, turn, list(turn.sentences.order_by("index")), lead, page, assignment


def note_on(sentence, text="checked against the reference"):
    return {**change(sentence, [], None), "note": text}


def units_of(turn):
    return list(turn.sentences.order_by("index"))


def test_a_batch_sent_again_across_a_split_is_a_conflict_and_queued_steps_stay_off_the_split_unit(world):
    project, turn, units, lead, page, assignment = world
    first = {"version": 0, "changes": [note_on(units[2])]}
    assert sync(page, assignment, first).json()["version"] == 1  # applied; say the answer was lost on the way
    response = lead.post(f"/p/{project.slug}/turns/{turn.pk}/units/split/",
                         {"sentence": units[1].pk, "offset": TWO_IN_ONE.index(" The red"), "reset": "on"})
    assert response.status_code == 302
    assert len(units_of(turn)) == 4
    again = sync(page, assignment, first)
    assert again.status_code == 409 and again.json()["version"] == 2
    assert "saved earlier" in again.json()["error"]
    # The outbox's next batch was made on the unsplit text: with the re-sent one, still refused, nothing written.
    queued = change(units[1], FAITHFUL, dict(FAITHFUL))
    both = sync(page, assignment, {"version": 0, "changes": [note_on(units[2]) | {"request_id": first["changes"][0]["request_id"]}, queued]})
    assert both.status_code == 409
    assert not SentenceAnnotation.objects.filter(sentence_id=units[1].pk).exists()
    assert AnnotationEvent.objects.filter(assignment=assignment, action="save").count() == 1


def test_a_batch_sent_again_across_a_merge_is_a_conflict_and_queued_steps_stay_off_the_merged_unit(world):
    project, turn, units, lead, page, assignment = world
    first = {"version": 0, "changes": [note_on(units[0])]}
    assert sync(page, assignment, first).status_code == 200
    assert lead.post(f"/p/{project.slug}/turns/{turn.pk}/units/merge/",
                     {"sentence": units[1].pk, "reset": "on"}).status_code == 302
    assert len(units_of(turn)) == 2
    again = sync(page, assignment, first)
    assert again.status_code == 409 and again.json()["version"] == 2
    queued = change(units[1], [("relevance", "irrelevant")], {"relevance": "irrelevant"})
    both = sync(page, assignment, {"version": 0, "changes": [first["changes"][0], queued]})
    assert both.status_code == 409
    assert not SentenceAnnotation.objects.filter(sentence_id=units[1].pk).exists()


def test_a_batch_sent_again_after_a_lead_reopened_the_turn_is_a_conflict(world):
    project, turn, units, lead, page, assignment = world
    body = {"version": 0, "changes": [change(u, [("relevance", "irrelevant")], {"relevance": "irrelevant"}) for u in units]}
    assert sync(page, assignment, body).json()["version"] == 3
    saved = Assignment.objects.select_related("project", "turn").get(pk=assignment.pk)
    assignment_submit(saved, actor=saved.annotator, expected_version=3)
    response = lead.post(f"/p/{project.slug}/gold/assignment/{assignment.pk}/reopen/", {"reason": "check unit 2"})
    assert response.status_code in (200, 302), response.content[:300]
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.IN_PROGRESS
    again = sync(page, assignment, body)
    assert again.status_code == 409
    assert SentenceAnnotation.objects.filter(assignment=assignment, label=Label.IRRELEVANT).count() == 3


def test_a_batch_sent_again_while_it_is_still_the_last_write_continues(world):
    project, turn, units, lead, page, assignment = world
    first = {"version": 0, "changes": [note_on(units[0])]}
    assert sync(page, assignment, first).json()["version"] == 1
    again = sync(page, assignment, first)
    assert again.status_code == 200 and (again.json()["version"], again.json()["chained"]) == (1, True)
    then = change(units[1], [("relevance", "irrelevant")], {"relevance": "irrelevant"})
    with_new = sync(page, assignment, {"version": 0, "changes": [first["changes"][0], then]})
    assert with_new.status_code == 200 and with_new.json()["version"] == 2
