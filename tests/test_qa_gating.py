"""The qualification set in the work queue, and amending after feedback, through the workspace's services."""

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from annotator.models import Adjudication, AnnotationEvent, Assignment, QualificationResult
from annotator.qa import services as qa
from annotator.work.services import annotation_amend, assignment_submit
from annotator.work.write import AnnotationError
from annotator.work.assignment import assignment_next
from annotator.qa.services import QAError
from annotator.qa.qualification import qualification_allow_retry, qualification_set
from annotator.domain.vocabulary import Role
from tests.factories import member
from tests.factories_qa import gold_turn
from tests.factories_workspace import answer_label, project_with_turns

pytestmark = pytest.mark.django_db


def annotate_and_submit(assignment, labels, user):
    for sentence, label in zip(assignment.turn.sentences.order_by("index"), labels, strict=False):
        assignment = answer_label(assignment, sentence, label, user)
    return assignment_submit(assignment, actor=user).assignment


@pytest.fixture
def project_with_qualification():
    project, work = project_with_turns(2)
    lead = member(project, Role.LEAD)
    qual = [gold_turn(project, ["faithful", "irrelevant"]), gold_turn(project, ["speculative", "reliable"])]
    qualification_set(project=project, actor=lead, turn_ids=[t.pk for t in qual], pass_mark=0.75)
    return project, work, qual, lead


def test_qualification_turns_come_first_and_real_work_only_after_passing(project_with_qualification):
    project, work, qual, _ = project_with_qualification
    ann = member(project, Role.ANNOTATOR)
    first = assignment_next(project, ann)
    assert (first.turn, first.is_qualification) == (qual[0], True)
    assert assignment_next(project, ann).pk == first.pk  # unfinished: the same one again
    annotate_and_submit(first, ["faithful", "irrelevant"], ann)
    second = assignment_next(project, ann)
    assert (second.turn, second.is_qualification) == (qual[1], True)
    assert not QualificationResult.objects.exists()
    annotate_and_submit(second, ["speculative", "speculative"], ann)  # 3 of 4 = 75%: passes
    result = QualificationResult.objects.get(annotator=ann)
    assert (result.correct, result.total, result.passed) == (3, 4, True)
    real = assignment_next(project, ann)
    assert real.turn == work[0] and not real.is_qualification
    # Qualification slots do not take real slots.
    assert Assignment.objects.filter(turn=work[0], is_qualification=False).count() == 1


def test_failing_blocks_real_work_until_a_retry(project_with_qualification):
    project, work, qual, lead = project_with_qualification
    ann = member(project, Role.ANNOTATOR)
    annotate_and_submit(assignment_next(project, ann), ["invented", "irrelevant"], ann)
    annotate_and_submit(assignment_next(project, ann), ["speculative", "faithful"], ann)  # 2 of 4
    result = QualificationResult.objects.get(annotator=ann)
    assert not result.passed
    assert assignment_next(project, ann) is None
    assert not Assignment.objects.filter(annotator=ann, is_qualification=False).exists()
    qualification_allow_retry(result=result, actor=lead)
    retry = assignment_next(project, ann)
    assert (retry.turn, retry.is_qualification, retry.status) == (qual[0], True, "assigned")
    annotate_and_submit(retry, ["faithful", "irrelevant"], ann)
    annotate_and_submit(assignment_next(project, ann), ["speculative", "reliable"], ann)
    assert QualificationResult.objects.get(annotator=ann, attempt=2).passed
    assert assignment_next(project, ann).turn == work[0]


def test_an_interrupted_scoring_is_finished_by_the_queue(project_with_qualification):
    project, work, qual, _ = project_with_qualification
    ann = member(project, Role.ANNOTATOR)
    annotate_and_submit(assignment_next(project, ann), ["faithful", "irrelevant"], ann)
    annotate_and_submit(assignment_next(project, ann), ["speculative", "reliable"], ann)
    QualificationResult.objects.all().delete()  # as if the scoring had been lost
    assert assignment_next(project, ann).turn == work[0]
    assert QualificationResult.objects.get(annotator=ann).passed


def test_projects_without_a_set_and_leads_go_straight_to_work():
    project, work = project_with_turns(1)
    ann = member(project, Role.ANNOTATOR)
    assert assignment_next(project, ann).turn == work[0]


@pytest.fixture
def reviewed():
    """Ann submitted a turn; the lead told her sentence 2 is speculative, not reliable."""
    project, (turn,) = project_with_turns(1)
    ann, lead = member(project, Role.ANNOTATOR), member(project, Role.LEAD)
    assignment = annotate_and_submit(assignment_next(project, ann), ["faithful", "reliable", "irrelevant"], ann)
    annotation = assignment.sentence_annotations.get(sentence__index=1)
    feedback = qa.feedback_give(annotation=annotation, lead=lead, comment="Hedged claim: speculative.",
                                expected_label="speculative")
    return project, turn, ann, lead, feedback


def test_amending_after_feedback_is_audited_and_acknowledges(reviewed):
    project, turn, ann, lead, feedback = reviewed
    with pytest.raises(PermissionDenied):
        qa.feedback_amend(feedback=feedback, user=lead, label="speculative")
    qa.feedback_amend(feedback=feedback, user=ann, label="speculative", request_id="amend-1")
    qa.feedback_amend(feedback=feedback, user=ann, label="speculative", request_id="amend-1")  # replayed
    annotation = feedback.annotation
    annotation.refresh_from_db()
    assert annotation.label == "speculative"
    assert annotation.path == {"relevance": "relevant", "kind": "cognitive", "rational": "yes", "grounded": "no"}
    events = AnnotationEvent.objects.filter(action="amend")
    assert events.count() == 1
    event = events.get()
    assert (event.actor, event.old["label"], event.new["label"]) == (ann, "reliable", "speculative")
    assert event.new["reason"] == f"feedback #{feedback.pk}"
    feedback.refresh_from_db()
    assert feedback.acknowledged_at is not None


def test_no_amending_once_the_turn_is_adjudicated(reviewed):
    project, turn, ann, lead, feedback = reviewed
    Adjudication.objects.create(sentence=feedback.annotation.sentence, turn=turn, status=Adjudication.Status.RESOLVED,
                                label="speculative", adjudicator=lead)
    with pytest.raises(QAError, match="adjudicated"):
        qa.feedback_amend(feedback=feedback, user=ann, label="speculative")
    feedback.annotation.refresh_from_db()
    assert feedback.annotation.label == "reliable"


def test_unfinished_or_qualification_work_is_not_amended_this_way(project_with_qualification):
    project, work, qual, _ = project_with_qualification
    ann = member(project, Role.ANNOTATOR)
    qualification = assignment_next(project, ann)
    answer_label(qualification, qualification.turn.sentences.first(), "faithful", ann)
    with pytest.raises(AnnotationError, match="Only a submitted turn"):
        annotation_amend(qualification, qualification.turn.sentences.first(), "invented", actor=ann)


def test_amend_through_the_feedback_inbox(client, reviewed):
    project, turn, ann, lead, feedback = reviewed
    client.force_login(lead)
    assert client.post(reverse("qa:feedback_amend", args=[feedback.pk]), {"label": "invented"}).status_code == 404
    client.force_login(ann)
    inbox = client.get(reverse("qa:feedback_inbox")).content.decode()
    assert "Amend my answer" in inbox
    response = client.post(reverse("qa:feedback_amend", args=[feedback.pk]),
                           {"label": "speculative", "request_id": "x1"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and b"Your answer was amended." in response.content
    feedback.annotation.refresh_from_db()
    assert feedback.annotation.label == "speculative"
    bad = client.post(reverse("qa:feedback_amend", args=[feedback.pk]), {"label": "dubious"}, HTTP_HX_REQUEST="true")
    assert bad.status_code == 400 and b"Unknown label" in bad.content


def test_the_queue_offers_the_qualification_even_when_no_real_slot_is_open(client, project_with_qualification):
    project, work, qual, _ = project_with_qualification
    for turn in work:  # every real slot taken by others
        for other in (member(project, Role.ANNOTATOR), member(project, Role.ANNOTATOR)):
            Assignment.objects.create(project=project, turn=turn, annotator=other)
            turn.slots_taken += 1
        turn.save(update_fields=["slots_taken"])
    ann = member(project, Role.ANNOTATOR)
    client.force_login(ann)
    queue = client.get(reverse("workspace_queue", args=[project.slug])).content.decode()
    assert "2 of 2 turn(s) left" in queue and 'id="start-button"' in queue
    response = client.post(reverse("workspace_next", args=[project.slug]))
    assignment = Assignment.objects.get(annotator=ann)
    assert response["Location"] == reverse("annotate", args=[assignment.pk]) and assignment.is_qualification
    assert "Qualification</span>" in client.get(response["Location"]).content.decode()
