"""The qualification set: choosing it, taking it, scoring against gold, retries."""

import pytest
from django.core.exceptions import PermissionDenied

from annotator.models import AnnotationEvent, Assignment, SentenceAnnotation
from annotator.qa import qualification as q
from annotator.qa.qualification import QualificationError, Status
from annotator.domain.vocabulary import Role
from tests.factories import ProjectFactory, TurnFactory, member
from tests.factories_qa import finish, gold_turn, submitted_work

pytestmark = pytest.mark.django_db


@pytest.fixture
def project():
    return ProjectFactory()


@pytest.fixture
def lead(project):
    return member(project, Role.LEAD)


def qualification_of(project, lead, pass_mark=0.8):
    """Two gold turns, 5 sentences in all, made the qualification set."""
    first = gold_turn(project, ["faithful", "speculative", "irrelevant"],
                      reasons=["Restates the reference.", "'Probably' with no support in the reference.", "Greeting."])
    second = gold_turn(project, ["invented", "reliable"], reasons=["The reference gives 7 million km².", ""])
    q.qualification_set(project=project, actor=lead, turn_ids=[first.pk, second.pk], pass_mark=pass_mark)
    return first, second


def take(project, user, answers):
    """Annotate every qualification turn handed out, in order, with ``answers`` (one list per turn)."""
    for labels in answers:
        assignment = q.qualification_assignment_next(project, user)
        assert assignment is not None and assignment.is_qualification
        finish(assignment, labels)
    assert q.qualification_assignment_next(project, user) is None
    return q.qualification_score_attempt(project, user)


def test_no_set_means_no_qualification(project):
    annotator = member(project, Role.ANNOTATOR)
    state = q.qualification_state(project, annotator)
    assert state.status == Status.NOT_REQUIRED and state.may_work
    assert q.qualification_turns_for(project, annotator) == []


def test_the_set_needs_gold_for_every_sentence_and_turns_of_this_project(project, lead):
    no_gold = TurnFactory(dialogue__project=project)
    with pytest.raises(QualificationError, match="lacks a gold label for 3 of its 3 sentences"):
        q.qualification_set(project=project, actor=lead, turn_ids=[no_gold.pk], pass_mark=0.85)
    foreign = gold_turn(ProjectFactory(), ["faithful"])
    with pytest.raises(QualificationError, match="not part of this project"):
        q.qualification_set(project=project, actor=lead, turn_ids=[foreign.pk], pass_mark=0.85)
    ok = gold_turn(project, ["faithful"])
    for bad in (0, 1.5, "abc"):
        with pytest.raises(QualificationError, match="pass mark"):
            q.qualification_set(project=project, actor=lead, turn_ids=[ok.pk], pass_mark=bad)
    with pytest.raises(PermissionDenied):
        q.qualification_set(project=project, actor=member(project, Role.ANNOTATOR), turn_ids=[ok.pk], pass_mark=0.9)
    assert not project.dialogues.filter(turns__is_qualification=True).exists()


def test_a_turn_already_given_out_as_real_work_cannot_become_qualification(project, lead):
    turn = gold_turn(project, ["faithful"])
    submitted_work(turn, member(project, Role.ANNOTATOR), ["faithful"])
    with pytest.raises(QualificationError, match="already assigned as real work"):
        q.qualification_set(project=project, actor=lead, turn_ids=[turn.pk], pass_mark=0.9)


def test_setting_the_set_replaces_the_previous_one_and_the_pass_mark(project, lead):
    first, second = qualification_of(project, lead)
    q.qualification_set(project=project, actor=lead, turn_ids=[second.pk], pass_mark=0.6)
    first.refresh_from_db(), second.refresh_from_db(), project.refresh_from_db()
    assert (first.is_qualification, second.is_qualification, project.qualification_pass_mark) == (False, True, 0.6)


def test_a_new_annotator_gets_the_qualification_turns_first_and_no_real_work(project, lead):
    first, second = qualification_of(project, lead)
    annotator = member(project, Role.ANNOTATOR)
    assert q.qualification_turns_for(project, annotator) == [first, second]
    assert not q.qualification_may_work(project, annotator)
    assignment = q.qualification_assignment_next(project, annotator)
    assert assignment.turn == first
    assert q.qualification_assignment_next(project, annotator) == assignment  # same slot until submitted
    finish(assignment, ["faithful", "speculative", "irrelevant"])
    assert q.qualification_turns_for(project, annotator) == [second]
    assert q.qualification_score_attempt(project, annotator) is None  # not finished yet
    # Leads and adjudicators are not asked to qualify.
    assert q.qualification_state(project, lead).status == Status.NOT_REQUIRED
    assert q.qualification_state(project, member(project, Role.ADJUDICATOR)).may_work


def test_failing_shows_per_sentence_gold_and_reason_and_blocks_until_a_retry(project, lead):
    qualification_of(project, lead, pass_mark=0.8)
    annotator = member(project, Role.ANNOTATOR)
    # 3 of 5 right (60%): the speculative sentence called reliable, the invented one called faithful.
    result = take(project, annotator, [["faithful", "reliable", "irrelevant"], ["faithful", "reliable"]])
    assert (result.attempt, result.correct, result.total, result.passed) == (1, 3, 5, False)
    wrong = [d for d in result.details if not d["correct"]]
    assert [(d["label"], d["gold_label"], d["diverged_at"]) for d in wrong] == [
        ("reliable", "speculative", "grounded"),
        ("faithful", "invented", "faithfulness"),
    ]
    assert wrong[0]["gold_reason"] == "'Probably' with no support in the reference."
    # Blocked: no qualification turns left, no real work either.
    state = q.qualification_state(project, annotator)
    assert state.status == Status.FAILED and not state.may_work
    assert q.qualification_turns_for(project, annotator) == []
    assert q.qualification_assignment_next(project, annotator) is None
    # Scoring again is idempotent.
    assert q.qualification_score_attempt(project, annotator).pk == result.pk


def test_retry_resets_the_work_keeps_history_and_a_second_attempt_can_pass(project, lead):
    first, _ = qualification_of(project, lead, pass_mark=0.8)
    annotator = member(project, Role.ANNOTATOR)
    failed = take(project, annotator, [["faithful", "reliable", "irrelevant"], ["faithful", "reliable"]])
    with pytest.raises(PermissionDenied):
        q.qualification_allow_retry(result=failed, actor=annotator)
    q.qualification_allow_retry(result=failed, actor=lead)
    failed.refresh_from_db()
    assert failed.retry_allowed and failed.retry_allowed_by == lead
    assert not SentenceAnnotation.objects.filter(assignment__annotator=annotator).exists()
    assert set(Assignment.objects.filter(annotator=annotator).values_list("status", flat=True)) == {"assigned"}
    event = AnnotationEvent.objects.get(assignment__turn=first, action="qualification_retry")
    assert [a["label"] for a in event.old["annotations"]] == ["faithful", "reliable", "irrelevant"]
    assert q.qualification_turns_for(project, annotator) != []
    # The first attempt's details survive the reset.
    assert [d["label"] for d in failed.details] == ["faithful", "reliable", "irrelevant", "faithful", "reliable"]
    passed = take(project, annotator, [["faithful", "speculative", "irrelevant"], ["invented", "faithful"]])
    assert (passed.attempt, passed.correct, passed.passed) == (2, 4, True)
    state = q.qualification_state(project, annotator)
    assert state.status == Status.PASSED and state.may_work
    assert q.qualification_turns_for(project, annotator) == []
    with pytest.raises(QualificationError, match="nothing to retry"):
        q.qualification_allow_retry(result=passed, actor=lead)
    with pytest.raises(QualificationError, match="Only the latest attempt"):
        q.qualification_allow_retry(result=failed, actor=lead)


def test_exactly_the_pass_mark_passes(project, lead):
    qualification_of(project, lead, pass_mark=0.8)
    annotator = member(project, Role.ANNOTATOR)
    result = take(project, annotator, [["faithful", "speculative", "irrelevant"], ["invented", "faithful"]])
    assert result.score == pytest.approx(0.8) and result.passed
