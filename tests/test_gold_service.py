"""Gold from agreement, adjudication, lead override and reopening (services)."""

import pytest

from annotator.models import Adjudication, AnnotationEvent, Assignment, GoldEvent, GoldLabel
from annotator.gold.services import GoldError, adjudication_resolve, annotation_reopen, gold_override
from annotator.gold.derivation import gold_derive_for_turn
from annotator.domain.vocabulary import Answer, GoldProvenance, Label, Role, Step

from .factories import AssignmentFactory, ProjectFactory, TurnFactory, member
from .factories_gold import annotators, submit

pytestmark = pytest.mark.django_db

F, I, S, X = Label.FAITHFUL, Label.INVENTED, Label.SPECULATIVE, Label.IRRELEVANT


@pytest.fixture
def project():
    return ProjectFactory()


@pytest.fixture
def turn(project):
    return TurnFactory(dialogue__project=project)


def test_agreeing_sentences_get_gold_and_disputes_open(project, turn):
    ann1, ann2 = annotators(project)
    submit(turn, ann1, [F, S, X])
    submit(turn, ann2, [F, Label.RELIABLE, X])
    result = gold_derive_for_turn(turn)
    first, second, third = turn.sentences.order_by("index")
    assert result.complete and result.agreed == [first.pk, third.pk] and result.disputed == [second.pk]
    assert first.gold.label == F and first.gold.provenance == GoldProvenance.AGREEMENT
    assert first.gold.path == {Step.RELEVANCE: Answer.RELEVANT, Step.KIND: Answer.FACTUAL, Step.FAITHFULNESS: F}
    assert third.gold.label == X
    assert not GoldLabel.objects.filter(sentence=second).exists()
    assert Adjudication.objects.get(sentence=second).status == Adjudication.Status.OPEN
    assert list(GoldEvent.objects.filter(sentence=first).values_list("old_label", "new_label", "provenance")) == [
        ("", F, GoldProvenance.AGREEMENT)
    ]


def test_deriving_twice_creates_nothing_new(project, turn):
    ann1, ann2 = annotators(project)
    submit(turn, ann1, [F, S, X])
    submit(turn, ann2, [I, S, X])
    gold_derive_for_turn(turn)
    counts = (GoldLabel.objects.count(), GoldEvent.objects.count(), Adjudication.objects.count())
    again = gold_derive_for_turn(turn)
    assert again.agreed == [] and again.disputed == []
    assert (GoldLabel.objects.count(), GoldEvent.objects.count(), Adjudication.objects.count()) == counts == (2, 2, 1)


def test_nothing_happens_until_every_overlap_slot_is_submitted(project, turn):
    ann1, ann2 = annotators(project)
    submit(turn, ann1, [F, S, X])
    AssignmentFactory(turn=turn, annotator=ann2, status=Assignment.Status.IN_PROGRESS)
    assert gold_derive_for_turn(turn).complete is False
    assert not GoldLabel.objects.exists() and not Adjudication.objects.exists()


def test_qualification_assignments_do_not_count(project, turn):
    ann1, ann2 = annotators(project)
    submit(turn, ann1, [F, S, X])
    qualification = submit(turn, ann2, [F, S, X])
    Assignment.objects.filter(pk=qualification.pk).update(is_qualification=True)
    assert gold_derive_for_turn(turn).complete is False
    assert not GoldLabel.objects.exists()


def test_a_sentence_one_annotator_left_unanswered_is_disputed(project, turn):
    ann1, ann2 = annotators(project)
    submit(turn, ann1, [F, None, X])
    submit(turn, ann2, [F, S, X])
    result = gold_derive_for_turn(turn)
    assert len(result.disputed) == 1


def test_three_annotators_must_all_agree(turn):
    project = turn.dialogue.project
    project.overlap = 3
    project.save()
    people = annotators(project, 3)
    submit(turn, people[0], [F, S, X])
    submit(turn, people[1], [F, S, X])
    assert gold_derive_for_turn(turn).complete is False
    submit(turn, people[2], [F, I, X])
    result = gold_derive_for_turn(turn)
    assert len(result.agreed) == 2 and len(result.disputed) == 1


@pytest.fixture
def dispute(project, turn):
    ann1, ann2 = annotators(project)
    a1 = submit(turn, ann1, [F, S, X])
    a2 = submit(turn, ann2, [F, Label.RELIABLE, X])
    gold_derive_for_turn(turn)
    return Adjudication.objects.get(), a1, a2


def test_adjudicator_sides_with_an_annotator(project, dispute):
    adjudication, a1, a2 = dispute
    judge = member(project, Role.ADJUDICATOR)
    gold = adjudication_resolve(adjudication, judge, side=a2, reason="The reference states it.")
    adjudication.refresh_from_db()
    assert gold.label == Label.RELIABLE and gold.provenance == GoldProvenance.ADJUDICATION
    assert gold.decided_by == judge and gold.reason == "The reference states it."
    assert adjudication.status == Adjudication.Status.RESOLVED and adjudication.chosen_assignment == a2
    assert GoldEvent.objects.filter(sentence=adjudication.sentence).get().new_label == Label.RELIABLE


def test_adjudicator_walks_the_protocol(project, dispute):
    adjudication, *_ = dispute
    judge = member(project, Role.LEAD)
    path = {Step.RELEVANCE: Answer.RELEVANT, Step.KIND: Answer.COGNITIVE, Step.RATIONAL: Answer.NO}
    gold = adjudication_resolve(adjudication, judge, path=path, reason="Not rational.")
    assert gold.label == Label.MISLEADING


def test_adjudication_needs_a_reason_a_complete_path_and_a_third_person(project, dispute):
    adjudication, a1, _ = dispute
    judge = member(project, Role.ADJUDICATOR)
    with pytest.raises(GoldError, match="reason"):
        adjudication_resolve(adjudication, judge, label=F, reason="  ")
    with pytest.raises(GoldError, match="every question"):
        adjudication_resolve(adjudication, judge, path={Step.RELEVANCE: Answer.RELEVANT}, reason="x")
    with pytest.raises(GoldError, match="annotated this turn"):
        adjudication_resolve(adjudication, a1.annotator, label=F, reason="mine is right")
    with pytest.raises(GoldError, match="Only adjudicators"):
        adjudication_resolve(adjudication, member(project, Role.ANNOTATOR), label=F, reason="x")
    adjudication_resolve(adjudication, judge, label=F, reason="ok")
    with pytest.raises(GoldError, match="already been decided"):
        adjudication_resolve(adjudication, judge, label=I, reason="changed my mind")
    assert GoldLabel.objects.get(sentence=adjudication.sentence).label == F


def test_annotator_of_the_turn_is_refused_even_as_lead(project, dispute):
    adjudication, a1, _ = dispute
    a1.annotator.memberships.update(role=Role.LEAD)
    with pytest.raises(GoldError, match="annotated this turn"):
        adjudication_resolve(adjudication, a1.annotator, label=F, reason="x")


def test_lead_override_keeps_history_and_closes_open_dispute(project, dispute):
    adjudication, *_ = dispute
    lead = member(project, Role.LEAD)
    sentence = adjudication.sentence
    gold_override(sentence, lead, Label.UNEQUIVOCAL, "Guideline 4.2")
    gold_override(sentence, lead, Label.RELIABLE, "On second reading")
    adjudication.refresh_from_db()
    assert adjudication.status == Adjudication.Status.RESOLVED
    assert sentence.gold.label == Label.RELIABLE and sentence.gold.provenance == GoldProvenance.OVERRIDE
    assert list(GoldEvent.objects.filter(sentence=sentence).values_list("old_label", "new_label", "reason")) == [
        ("", Label.UNEQUIVOCAL, "Guideline 4.2"),
        (Label.UNEQUIVOCAL, Label.RELIABLE, "On second reading"),
    ]
    with pytest.raises(GoldError, match="Only a lead"):
        gold_override(sentence, member(project, Role.ADJUDICATOR), F, "x")


def test_reopen_clears_derived_gold_and_resubmission_derives_again(project, turn, dispute):
    adjudication, a1, a2 = dispute
    lead = member(project, Role.LEAD)
    first = turn.sentences.get(index=0)
    with pytest.raises(GoldError, match="reason"):
        annotation_reopen(a2, lead, "")
    annotation_reopen(a2, lead, "Check sentence 2 again")
    a2.refresh_from_db()
    assert a2.status == Assignment.Status.IN_PROGRESS and a2.submitted_at is None
    assert not GoldLabel.objects.filter(sentence__turn=turn).exists()
    assert not Adjudication.objects.filter(status=Adjudication.Status.OPEN).exists()
    assert GoldEvent.objects.filter(sentence=first).last().new_label == ""
    assert AnnotationEvent.objects.get(assignment=a2, action="reopen").actor == lead
    # The annotator changes sentence 2 to match and submits again.
    a2.sentence_annotations.filter(sentence__index=1).update(label=S)
    Assignment.objects.filter(pk=a2.pk).update(status=Assignment.Status.SUBMITTED)
    result = gold_derive_for_turn(turn)
    assert len(result.agreed) == 3
    assert list(GoldEvent.objects.filter(sentence=first).values_list("old_label", "new_label")) == [
        ("", F), (F, ""), ("", F)
    ]


def test_reopen_keeps_a_lead_override(project, turn, dispute):
    adjudication, a1, _ = dispute
    lead = member(project, Role.LEAD)
    gold_override(adjudication.sentence, lead, I, "Known error in the reference")
    annotation_reopen(a1, lead, "again")
    assert GoldLabel.objects.get(sentence=adjudication.sentence).label == I
    with pytest.raises(GoldError, match="Only a submitted"):
        annotation_reopen(a1, lead, "twice")


def test_rederive_after_an_amendment(project, turn, dispute):
    from annotator.gold.derivation import gold_rederive_sentence

    adjudication, a1, a2 = dispute
    first, second, _ = turn.sentences.order_by("index")
    lead = member(project, Role.LEAD)
    # Annotator B amends sentence 2 to agree: the dispute is withdrawn and gold comes from agreement.
    a2.sentence_annotations.filter(sentence=second).update(label=S)
    result = gold_rederive_sentence(second, lead, "amended after feedback")
    assert result.agreed == [second.pk]
    assert not Adjudication.objects.filter(sentence=second, status=Adjudication.Status.OPEN).exists()
    assert GoldLabel.objects.get(sentence=second).label == S
    # Annotator A amends sentence 1 to disagree: agreement gold is cleared and a dispute opens.
    a1.sentence_annotations.filter(sentence=first).update(label=I)
    result = gold_rederive_sentence(first, lead, "amended after feedback")
    assert result.disputed == [first.pk]
    assert not GoldLabel.objects.filter(sentence=first).exists()
    assert GoldEvent.objects.filter(sentence=first).last().reason == "amended after feedback"
    # Adjudicated gold is never touched.
    resolved = Adjudication.objects.get(sentence=first, status=Adjudication.Status.OPEN)
    adjudication_resolve(resolved, member(project, Role.ADJUDICATOR), label=F, reason="F")
    assert gold_rederive_sentence(first, lead, "again").agreed == []
    assert GoldLabel.objects.get(sentence=first).provenance == GoldProvenance.ADJUDICATION


def test_a_walk_in_any_key_order_resolves(project, dispute):
    """PostgreSQL's jsonb returns keys in its own order; resolving a walk must not depend on it."""
    adjudication, *_ = dispute
    judge = member(project, Role.ADJUDICATOR)
    walked = {"faithfulness": "invented", "kind": "factual", "relevance": "relevant"}
    gold = adjudication_resolve(adjudication, judge, path=walked, reason="walked")
    assert gold.label == I
