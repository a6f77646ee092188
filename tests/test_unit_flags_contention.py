"""A lead's split while the turn's annotators save answers on the unit being split, all at the same moment.

Whatever the order the database lets them through (PostgreSQL: row locks; SQLite: IMMEDIATE transactions),
each answer is either saved before the split, and then removed by it and kept in its audit, or refused as
stale (the version every open slot of the turn moved to): no answer ends up on the changed unit, and none is
lost without a trace.
"""

import threading

import pytest
from django.db import connection

from annotator.corpus.unit_services import unit_split
from annotator.domain.vocabulary import Role
from annotator.models import SegmentationChange, SentenceAnnotation
from annotator.work.services import annotation_answer_step
from annotator.work.write import VersionConflict
from tests.factories import AssignmentFactory, member
from tests.factories_workspace import NO_PASSWORD, project_with_turns

TWO_IN_ONE = "The lighthouse was automated in 1984. The red and white bands were chosen because they show."
ANNOTATORS = 8


@pytest.mark.django_db(transaction=True)
def test_answers_racing_a_split_are_saved_then_kept_in_its_audit_or_refused_as_stale():
    project, (turn,) = project_with_turns(1, sentences=["It stands on the cape.", TWO_IN_ONE, "Hello there!"],
                                          overlap=ANNOTATORS)
    lead = member(project, Role.LEAD, password=NO_PASSWORD)
    people = [member(project, Role.ANNOTATOR, password=NO_PASSWORD) for _ in range(ANNOTATORS)]
    slots = [AssignmentFactory(turn=turn, annotator=person) for person in people]
    # One more annotator has the page open and answers only after the split: the page's copy is stale.
    late = AssignmentFactory(turn=turn, annotator=member(project, Role.ANNOTATOR, password=NO_PASSWORD))
    unit = turn.sentences.get(index=1)
    barrier = threading.Barrier(ANNOTATORS + 1)
    saved, refused, failures = set(), set(), []

    def answer(slot):
        try:
            barrier.wait(30)
            annotation_answer_step(slot, unit, "relevance", "relevant", actor=slot.annotator,
                                   expected_version=slot.version)
            saved.add(slot.annotator.username)
        except VersionConflict:
            refused.add(slot.annotator.username)
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(repr(error))
        finally:
            connection.close()

    def split():
        try:
            barrier.wait(30)
            unit_split(turn, unit.pk, TWO_IN_ONE.index(" The red"), actor=lead, reset=False)
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(repr(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=answer, args=(slot,)) for slot in slots] + [threading.Thread(target=split)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not failures, failures
    assert saved | refused == {person.username for person in people} and not saved & refused
    assert turn.sentences.count() == 4
    assert not SentenceAnnotation.objects.filter(sentence__turn=turn).exists()
    change = SegmentationChange.objects.get()
    assert {record["owner"] for record in change.reset} == saved
    assert all(record["kind"] == "unsubmitted annotation" for record in change.reset)
    with pytest.raises(VersionConflict):
        annotation_answer_step(late, unit, "relevance", "relevant", actor=late.annotator, expected_version=late.version)
