"""Triplets by hand, triplet labels, severity and error types, triplet gold: the write services."""

import pytest

from annotator.models import AnnotationEvent, ClaimTriplet, TripletAdjudication, TripletAnnotation, TripletGold
from annotator.claims import services as svc
from annotator.work.services import assignment_submit
from annotator.work.write import AssignmentClosed, VersionConflict
from annotator.domain.vocabulary import GoldProvenance, Label, Role, TripletLabel, TripletSource

from .factories import member
from .factories_claims import turn_with_triplets, views_project, working
from .factories_workspace import NO_PASSWORD, answer_label, label_all

pytestmark = pytest.mark.django_db


def test_label_a_triplet_is_audited_idempotent_and_versioned():
    project = views_project()
    turn = turn_with_triplets(project)
    assignment, user = working(project, turn)
    first = turn.triplets.first()
    outcome = svc.triplet_label_set(assignment, first.pk, "Contradiction", actor=user, request_id="r1",
                                    expected_version=0)
    assert TripletAnnotation.objects.get(assignment=assignment, triplet=first).label == TripletLabel.CONTRADICTION
    assert outcome.assignment.version == 1
    event = AnnotationEvent.objects.get(assignment=assignment, action="triplet_label")
    assert event.old == {"triplet": first.pk, "label": ""} and event.new["label"] == "Contradiction"
    again = svc.triplet_label_set(assignment, first.pk, "Contradiction", actor=user, request_id="r1")
    assert again.replayed and AnnotationEvent.objects.filter(action="triplet_label").count() == 1
    with pytest.raises(VersionConflict):
        svc.triplet_label_set(assignment, first.pk, "Neutral", actor=user, expected_version=0)
    svc.triplet_label_set(outcome.assignment, first.pk, "bad", actor=user)
    assert TripletAnnotation.objects.get(triplet=first).label == TripletLabel.BAD_TRIPLET
    svc.triplet_label_set(outcome.assignment, first.pk, "", actor=user)
    assert not TripletAnnotation.objects.filter(triplet=first).exists()


def test_triplet_labels_refused_when_switched_off_or_foreign():
    project = views_project(enable_triplets=False)
    turn = turn_with_triplets(project)
    assignment, user = working(project, turn)
    with pytest.raises(svc.ClaimsError, match="switched off"):
        svc.triplet_label_set(assignment, turn.triplets.first().pk, "Neutral", actor=user)
    project.enable_triplets = True
    project.save()
    other = turn_with_triplets(project)
    assignment.project.enable_triplets = True
    with pytest.raises(svc.ClaimsError, match="not part of this turn"):
        svc.triplet_label_set(assignment, other.triplets.first().pk, "Neutral", actor=user)
    with pytest.raises(svc.ClaimsError, match="Unknown triplet label"):
        svc.triplet_label_set(assignment, turn.triplets.first().pk, "maybe", actor=user)


def test_annotator_adds_edits_and_deletes_own_triplet_only():
    project = views_project()
    turn = turn_with_triplets(project)
    assignment, user = working(project, turn)
    sentence = turn.sentences.get(index=1)
    outcome = svc.assignment_triplet_add(assignment, head=" Amazon ", relation="is", tail="important",
                                         sentence=sentence.pk, actor=user)
    added = outcome.extra["triplet"]
    assert (added.index, added.source, added.sentence_id, added.head) == (2, TripletSource.MANUAL, sentence.pk, "Amazon")
    svc.assignment_triplet_edit(outcome.assignment, added.pk, head="Amazon", relation="is", tail="vital", actor=user)
    added.refresh_from_db()
    assert added.tail == "vital" and added.sentence_id is None
    with pytest.raises(svc.ClaimsError, match="only change triplets you added"):
        svc.assignment_triplet_delete(assignment, turn.triplets.get(index=0).pk, actor=user)
    other_assignment, other = working(project, turn)
    svc.triplet_label_set(other_assignment, added.pk, "Neutral", actor=other)
    with pytest.raises(svc.ClaimsError, match="Another annotator"):
        svc.assignment_triplet_delete(assignment, added.pk, actor=user)
    with pytest.raises(svc.ClaimsError, match="needs a head"):
        svc.assignment_triplet_add(assignment, head="", relation="is", tail="x", actor=user)
    actions = list(AnnotationEvent.objects.filter(assignment=assignment).values_list("action", flat=True))
    assert actions == ["triplet_add", "triplet_edit"]


def test_lead_creates_edits_and_deletes_triplets():
    project = views_project()
    turn = turn_with_triplets(project, triplets=())
    lead = member(project, Role.LEAD, password=NO_PASSWORD)
    annotator = member(project, password=NO_PASSWORD)
    triplet = svc.triplet_create(turn, head="A", relation="r", tail="B", actor=lead)
    second = svc.triplet_create(turn, head="C", relation="r", tail="D", actor=lead, sentence=turn.sentences.first())
    assert (triplet.index, second.index) == (0, 1)
    svc.triplet_update(triplet, head="A2", relation="r", tail="B", actor=lead)
    with pytest.raises(svc.ClaimsError, match="Only a lead"):
        svc.triplet_update(triplet, head="A3", relation="r", tail="B", actor=annotator)
    assignment, user = working(project, turn)
    svc.triplet_label_set(assignment, triplet.pk, "Entailment", actor=user)
    with pytest.raises(svc.ClaimsError, match="has labels already"):
        svc.triplet_update(triplet, head="A3", relation="r", tail="B", actor=lead)
    svc.triplet_delete(triplet, actor=lead)
    assert list(ClaimTriplet.objects.filter(turn=turn).values_list("head", flat=True)) == ["C"]


def test_severity_and_error_type_follow_label_and_project_list():
    project = views_project(error_types=["conflation", "other"])
    turn = turn_with_triplets(project, triplets=())
    assignment, user = working(project, turn)
    first, second = turn.sentences.get(index=0), turn.sentences.get(index=1)
    with pytest.raises(svc.ClaimsError, match="Label the sentence first"):
        svc.annotation_set_severity(assignment, first, 4, "", actor=user)
    assignment = answer_label(assignment, first, Label.INVENTED, user)
    assignment = answer_label(assignment, second, Label.RELIABLE, user)
    outcome = svc.annotation_set_severity(assignment, first, "5", " Made-up date ", actor=user)
    assert (outcome.annotation.severity, outcome.annotation.justification) == (5, "Made-up date")
    with pytest.raises(svc.ClaimsError, match="Only invented, misleading or speculative"):
        svc.annotation_set_severity(outcome.assignment, second, 3, "", actor=user)
    outcome = svc.annotation_set_error_type(outcome.assignment, first, "conflation", actor=user)
    assert outcome.annotation.error_type == "conflation"
    with pytest.raises(svc.ClaimsError, match="not one of"):
        svc.annotation_set_error_type(outcome.assignment, first, "entity inversion", actor=user)
    events = AnnotationEvent.objects.filter(assignment=assignment, action__in=["severity", "error_type"])
    assert [e.new for e in events] == [{"severity": 5, "justification": "Made-up date"}, {"error_type": "conflation"}]
    project.enable_severity = False
    project.save()
    outcome.assignment.project.refresh_from_db()
    with pytest.raises(svc.ClaimsError, match="switched off"):
        svc.annotation_set_severity(outcome.assignment, first, 2, "", actor=user)


def test_submit_needs_every_triplet_labelled_then_derives_triplet_gold_and_disputes():
    project = views_project()
    turn = turn_with_triplets(project)
    first, second = turn.triplets.order_by("index")
    (a, user_a), (b, user_b) = working(project, turn), working(project, turn)
    a = label_all(a, Label.FAITHFUL, user_a)
    b = label_all(b, Label.FAITHFUL, user_b)
    a = svc.triplet_label_set(a, first.pk, "Entailment", actor=user_a).assignment
    with pytest.raises(Exception, match="1 of 2 claim triplets have no label"):
        assignment_submit(a, actor=user_a)
    a = svc.triplet_label_set(a, second.pk, "Contradiction", actor=user_a).assignment
    assignment_submit(a, actor=user_a)
    assert not TripletGold.objects.exists()  # one annotator is not enough
    with pytest.raises(AssignmentClosed):
        svc.triplet_label_set(a, first.pk, "Neutral", actor=user_a)
    b = svc.triplet_label_set(b, first.pk, "Entailment", actor=user_b).assignment
    b = svc.triplet_label_set(b, second.pk, "Neutral", actor=user_b).assignment
    assignment_submit(b, actor=user_b)
    gold = TripletGold.objects.get()
    assert (gold.triplet_id, gold.label, gold.provenance) == (first.pk, "Entailment", GoldProvenance.AGREEMENT)
    dispute = TripletAdjudication.objects.get()
    assert dispute.triplet_id == second.pk and dispute.status == TripletAdjudication.Status.OPEN
    assert svc.triplet_gold_derive_for_turn(turn).agreed == []  # idempotent

    with pytest.raises(svc.ClaimsError, match="Only an adjudicator"):
        svc.triplet_adjudication_resolve(dispute, user_a, label="Neutral", reason="x")
    adjudicator = member(project, Role.ADJUDICATOR, password=NO_PASSWORD)
    with pytest.raises(svc.ClaimsError, match="reason"):
        svc.triplet_adjudication_resolve(dispute, adjudicator, label="Neutral", reason=" ")
    decided = svc.triplet_adjudication_resolve(dispute, adjudicator, label="Contradiction", reason="ref says 1950")
    assert (decided.label, decided.provenance, decided.decided_by) == ("Contradiction", GoldProvenance.ADJUDICATION,
                                                                       adjudicator)
    with pytest.raises(svc.ClaimsError, match="already decided"):
        svc.triplet_adjudication_resolve(dispute, adjudicator, label="Neutral", reason="again")
    lead = member(project, Role.LEAD, password=NO_PASSWORD)
    svc.triplet_gold_override(second, lead, label="Neutral", reason="guideline 4")
    assert TripletGold.objects.get(triplet=second).provenance == GoldProvenance.OVERRIDE


def test_a_final_label_without_severity_clears_a_stale_rating_but_an_undo_keeps_it():
    from annotator.work.services import annotation_answer_step, annotation_undo
    from annotator.domain.vocabulary import Step

    project = views_project()
    turn = turn_with_triplets(project, triplets=())
    assignment, user = working(project, turn)
    sentence = turn.sentences.get(index=0)
    assignment = answer_label(assignment, sentence, Label.INVENTED, user)
    assignment = svc.annotation_set_severity(assignment, sentence, 4, "made up", actor=user).assignment
    assignment = svc.annotation_set_error_type(assignment, sentence, "conflation", actor=user).assignment
    assignment = annotation_undo(assignment, sentence, actor=user).assignment  # back one step: label unfinished
    annotation = sentence.annotations.get()
    assert (annotation.label, annotation.severity, annotation.error_type) == ("", 4, "conflation")
    assignment = annotation_answer_step(assignment, sentence, Step.FAITHFULNESS, "faithful", actor=user).assignment
    annotation.refresh_from_db()
    assert (annotation.label, annotation.severity, annotation.justification, annotation.error_type) == (
        Label.FAITHFUL, None, "", "")
