"""Automatic qualification retries (the rule, the service) and the leads' reasons of qualification gold."""

import pytest

from annotator.domain import qualification as rules
from annotator.domain.vocabulary import Role
from annotator.gold.services import GoldError, gold_reason_set
from annotator.models import AnnotationEvent, GoldEvent, GoldLabel, SentenceAnnotation
from annotator.qa import qualification as q
from annotator.qa.qualification import Status
from tests.factories import ProjectFactory, member
from tests.factories_qa import finish, gold_turn


@pytest.mark.parametrize("failed, auto_retries, opens", [
    (1, 0, False), (1, 1, True), (2, 1, False), (2, 2, True), (3, 2, False), (0, 2, False),
])
def test_the_next_attempt_opens_by_itself_while_failures_are_at_most_n(failed, auto_retries, opens):
    assert rules.retry_opens_by_itself(failed, auto_retries) is opens


@pytest.mark.parametrize("failed, auto_retries, left", [(0, 2, 2), (1, 2, 1), (2, 2, 0), (3, 2, 0), (1, 0, 0)])
def test_automatic_retries_left(failed, auto_retries, left):
    assert rules.automatic_retries_left(failed, auto_retries) == left


@pytest.fixture
def project():
    return ProjectFactory()


@pytest.fixture
def lead(project):
    return member(project, Role.LEAD)


@pytest.fixture
def qualification(project, lead):
    turn = gold_turn(project, ["faithful", "speculative"], reasons=["", ""])
    q.qualification_set(project=project, actor=lead, turn_ids=[turn.pk], pass_mark=1.0)
    return turn


def fail_attempt(project, user):
    assignment = q.qualification_assignment_next(project, user)
    finish(assignment, ["faithful", "faithful"])  # one of two right: below the pass mark
    return q.qualification_score_attempt(project, user)


pytestmark = pytest.mark.django_db


def test_without_automatic_retries_a_failure_waits_for_a_lead(project, qualification):
    annotator = member(project, Role.ANNOTATOR)
    result = fail_attempt(project, annotator)
    assert not result.passed and not result.retry_allowed
    assert q.qualification_state(project, annotator).status == Status.FAILED


def test_with_n_automatic_retries_the_nth_failure_reopens_and_the_next_one_waits(project, qualification):
    project.qualification_auto_retries = 2
    project.save()
    annotator = member(project, Role.ANNOTATOR)

    first = fail_attempt(project, annotator)
    first.refresh_from_db()
    assert first.retry_allowed and first.retry_allowed_by is None  # opened automatically, by nobody
    state = q.qualification_state(project, annotator)
    assert state.status == Status.IN_PROGRESS and state.is_retry and state.attempt == 2
    assert [t.pk for t in state.turns_left] == [qualification.pk] and state.automatic_retries_left == 1
    assert not SentenceAnnotation.objects.filter(assignment__annotator=annotator).exists()  # the same reset
    event = AnnotationEvent.objects.get(action="qualification_retry")
    assert event.actor is None and event.new["automatic"] is True and len(event.old["annotations"]) == 2

    second = fail_attempt(project, annotator)  # 2 failures <= 2: opens again
    second.refresh_from_db()
    assert second.attempt == 2 and second.retry_allowed and second.retry_allowed_by is None
    assert q.qualification_state(project, annotator).automatic_retries_left == 0

    third = fail_attempt(project, annotator)  # 3 failures > 2: a lead decides
    third.refresh_from_db()
    assert third.attempt == 3 and not third.retry_allowed
    state = q.qualification_state(project, annotator)
    assert state.status == Status.FAILED and state.attempt == 3 and not state.may_work


def test_a_lead_retry_after_the_automatic_ones_records_the_lead(project, lead, qualification):
    project.qualification_auto_retries = 1
    project.save()
    annotator = member(project, Role.ANNOTATOR)
    fail_attempt(project, annotator)
    second = fail_attempt(project, annotator)
    assert q.qualification_state(project, annotator).status == Status.FAILED
    allowed = q.qualification_allow_retry(result=second, actor=lead)
    assert allowed.retry_allowed_by == lead
    assert AnnotationEvent.objects.filter(action="qualification_retry", actor=lead, new__automatic=False).exists()
    assert q.qualification_state(project, annotator).attempt == 3


def test_a_passed_attempt_opens_nothing(project, qualification):
    project.qualification_auto_retries = 3
    project.save()
    annotator = member(project, Role.ANNOTATOR)
    finish(q.qualification_assignment_next(project, annotator), ["faithful", "speculative"])
    result = q.qualification_score_attempt(project, annotator)
    assert result.passed and not result.retry_allowed
    assert q.qualification_state(project, annotator).status == Status.PASSED


def test_a_lead_writes_edits_and_clears_the_reason_of_gold_and_the_history_keeps_it(project, lead, qualification):
    sentence = qualification.sentences.get(index=1)
    gold = gold_reason_set(sentence, lead, "  'Probably' with nothing in the reference to support it.  ")
    assert gold.reason == "'Probably' with nothing in the reference to support it."
    assert (gold.label, gold.provenance, gold.decided_by) == ("speculative", "imported", None)  # label untouched
    gold_reason_set(sentence, lead, "'Probably' on an unsupported ranking.")
    gold_reason_set(sentence, lead, "'Probably' on an unsupported ranking.")  # unchanged: no event
    gold_reason_set(sentence, lead, "")
    assert GoldLabel.objects.get(sentence=sentence).reason == ""
    events = list(GoldEvent.objects.filter(sentence=sentence).values_list("old_label", "new_label", "reason", "actor"))
    assert events == [
        ("speculative", "speculative", "'Probably' with nothing in the reference to support it.", lead.pk),
        ("speculative", "speculative", "'Probably' on an unsupported ranking.", lead.pk),
        ("speculative", "speculative", "", lead.pk),
    ]


def test_only_a_lead_writes_a_reason_and_only_on_gold(project, qualification):
    sentence = qualification.sentences.get(index=0)
    with pytest.raises(GoldError, match="Only a lead"):
        gold_reason_set(sentence, member(project, Role.ANNOTATOR), "Because.")
    GoldLabel.objects.filter(sentence=sentence).delete()
    with pytest.raises(GoldError, match="no gold label"):
        gold_reason_set(sentence, member(project, Role.LEAD), "Because.")
