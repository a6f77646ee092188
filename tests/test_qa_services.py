"""Questions, answers, guideline examples and feedback through the service layer."""

import pytest
from django.core.exceptions import PermissionDenied

from annotator.models import AnnotationEvent, Assignment, GuidelineExample, Question
from annotator.qa import services as qa
from annotator.qa.services import QAError
from annotator.domain.vocabulary import Role, Step
from tests.factories import AssignmentFactory, ProjectFactory, TurnFactory, UserFactory, member
from tests.factories_qa import submitted_work

pytestmark = pytest.mark.django_db


@pytest.fixture
def setting():
    project = ProjectFactory()
    turn = TurnFactory(dialogue__project=project)
    return project, turn, member(project, Role.ANNOTATOR), member(project, Role.LEAD)


def ask(project, turn, user, path=None, body="Is a hedge like 'probably' cognitive?", sentence_index=1):
    sentence = turn.sentences.get(index=sentence_index)
    return qa.question_ask(project=project, user=user, turn=turn, sentence=sentence, path=path or {}, body=body)


def test_a_question_carries_sentence_turn_path_and_the_step_being_asked(setting):
    project, turn, annotator, _ = setting
    question = ask(project, turn, annotator, path={"relevance": "relevant", "kind": "cognitive"})
    assert question.turn == turn and question.sentence.index == 1
    assert question.path == {"relevance": "relevant", "kind": "cognitive"}
    assert question.step == Step.RATIONAL  # the step the annotator was looking at
    assert question.status == Question.Status.OPEN
    assert [m.body for m in question.messages.all()] == ["Is a hedge like 'probably' cognitive?"]


def test_a_question_on_a_finished_path_concerns_its_last_step(setting):
    project, turn, annotator, _ = setting
    question = ask(project, turn, annotator, path={"relevance": "relevant", "kind": "factual", "faithfulness": "invented"})
    assert question.step == Step.FAITHFULNESS


@pytest.mark.parametrize("path, body, message", [
    ({"kind": "factual"}, "why?", "decision path is not valid"),
    ({}, "   ", "question is empty"),
    ({}, "x" * 5001, "longer than 5000"),
])
def test_bad_questions_are_refused_with_a_reason(setting, path, body, message):
    project, turn, annotator, _ = setting
    with pytest.raises(QAError, match=message):
        ask(project, turn, annotator, path=path, body=body)
    assert not Question.objects.exists()


def test_a_sentence_of_another_turn_or_project_is_refused(setting):
    project, turn, annotator, _ = setting
    other_turn = TurnFactory(dialogue__project=project)
    with pytest.raises(QAError, match="not part of this turn"):
        qa.question_ask(project=project, user=annotator, turn=turn, sentence=other_turn.sentences.first(), body="?")
    foreign = TurnFactory()
    with pytest.raises(QAError, match="not part of this project"):
        qa.question_ask(project=project, user=annotator, turn=foreign, body="?")


def test_only_members_ask(setting):
    project, turn, _, _ = setting
    with pytest.raises(PermissionDenied):
        ask(project, turn, UserFactory())


def test_lead_answer_marks_answered_and_unread_then_follow_up_reopens(setting):
    project, turn, annotator, lead = setting
    question = ask(project, turn, annotator)
    qa.question_answer(question=question, lead=lead, body="Yes: it is an evaluation.")
    question.refresh_from_db()
    assert question.status == Question.Status.ANSWERED and question.unread_by_asker
    qa.question_mark_read(question=question, user=lead)  # the lead reading it changes nothing
    question.refresh_from_db()
    assert question.unread_by_asker
    qa.question_mark_read(question=question, user=annotator)
    question.refresh_from_db()
    assert not question.unread_by_asker
    qa.question_follow_up(question=question, user=annotator, body="And 'perhaps'?")
    question.refresh_from_db()
    assert question.status == Question.Status.OPEN
    assert question.messages.count() == 3


def test_only_leads_answer_and_close_and_only_the_asker_follows_up(setting):
    project, turn, annotator, lead = setting
    question = ask(project, turn, annotator)
    other_annotator = member(project, Role.ANNOTATOR)
    adjudicator = member(project, Role.ADJUDICATOR)
    for user in (annotator, other_annotator, adjudicator):
        with pytest.raises(PermissionDenied):
            qa.question_answer(question=question, lead=user, body="Answer")
        with pytest.raises(PermissionDenied):
            qa.question_close(question=question, actor=user)
    with pytest.raises(PermissionDenied):
        qa.question_follow_up(question=question, user=other_annotator, body="me too")
    qa.question_close(question=question, actor=lead)
    question.refresh_from_db()
    assert question.status == Question.Status.CLOSED


def test_promote_attaches_question_and_answer_at_the_step_it_concerns(setting):
    project, turn, annotator, lead = setting
    question = ask(project, turn, annotator, path={"relevance": "relevant", "kind": "cognitive"},
                   body="Is a ranking without evidence rational?")
    with pytest.raises(QAError, match="Answer the question"):
        qa.question_promote_to_guideline(question=question, actor=lead, expected_answer="yes")
    qa.question_answer(question=question, lead=lead, body="Rational, but not grounded.")
    example = qa.question_promote_to_guideline(question=question, actor=lead, expected_answer="yes")
    assert example.step == Step.RATIONAL and example.is_positive
    assert example.text == question.sentence.text
    assert example.explanation == "Q: Is a ranking without evidence rational?\nA: Rational, but not grounded."
    assert example.source_question == question
    # Promoting again (the lead changes their mind about the step) updates the same example.
    again = qa.question_promote_to_guideline(question=question, actor=lead, step=Step.GROUNDED, expected_answer="no",
                                             explanation="Speculative: nothing in the reference supports it.")
    assert again.pk == example.pk and GuidelineExample.objects.count() == 1
    assert (again.step, again.is_positive) == (Step.GROUNDED, False)


def test_promote_refuses_an_answer_the_step_does_not_take_and_non_leads(setting):
    project, turn, annotator, lead = setting
    question = ask(project, turn, annotator, path={"relevance": "relevant"})
    qa.question_answer(question=question, lead=lead, body="Factual.")
    with pytest.raises(QAError, match="expected answer is factual or cognitive"):
        qa.question_promote_to_guideline(question=question, actor=lead, expected_answer="yes")
    with pytest.raises(PermissionDenied):
        qa.question_promote_to_guideline(question=question, actor=annotator, expected_answer="factual")
    assert not GuidelineExample.objects.exists()


def test_feedback_only_on_submitted_work_only_by_leads(setting):
    project, turn, annotator, lead = setting
    open_assignment = AssignmentFactory(turn=turn, annotator=annotator, status=Assignment.Status.IN_PROGRESS)
    from annotator.models import SentenceAnnotation

    draft = SentenceAnnotation.objects.create(assignment=open_assignment, sentence=turn.sentences.first(),
                                              label="faithful", path={"relevance": "relevant", "kind": "factual",
                                                                      "faithfulness": "faithful"})
    with pytest.raises(QAError, match="submitted work only"):
        qa.feedback_give(annotation=draft, lead=lead, comment="Too early")
    done = submitted_work(TurnFactory(dialogue__project=project), annotator, ["faithful", "reliable", "irrelevant"])
    annotation = done.sentence_annotations.get(sentence__index=1)
    with pytest.raises(PermissionDenied):
        qa.feedback_give(annotation=annotation, lead=annotator, comment="Self-review")
    with pytest.raises(QAError, match="not a label"):
        qa.feedback_give(annotation=annotation, lead=lead, comment="?", expected_label="dubious")
    with pytest.raises(QAError, match="comment is empty"):
        qa.feedback_give(annotation=annotation, lead=lead, comment=" ")
    feedback = qa.feedback_give(annotation=annotation, lead=lead, comment="'Probably' makes it speculative.",
                                expected_label="speculative")
    assert (feedback.project, feedback.expected_label) == (project, "speculative")


def test_acknowledge_is_the_annotators_and_keeps_the_first_time(setting):
    project, turn, annotator, lead = setting
    done = submitted_work(turn, annotator, ["faithful", "reliable", "irrelevant"])
    feedback = qa.feedback_give(annotation=done.sentence_annotations.first(), lead=lead, comment="Good.")
    with pytest.raises(PermissionDenied):
        qa.feedback_acknowledge(feedback=feedback, user=lead)
    qa.feedback_acknowledge(feedback=feedback, user=annotator)
    first = feedback.acknowledged_at
    assert first is not None
    qa.feedback_acknowledge(feedback=feedback, user=annotator)
    assert feedback.acknowledged_at == first
    assert not AnnotationEvent.objects.exists()  # acknowledging does not touch the annotation


def test_a_path_read_back_from_jsonb_in_any_key_order_is_accepted(setting):
    project, turn, annotator, _ = setting
    question = ask(project, turn, annotator, path={"rational": "yes", "kind": "cognitive", "relevance": "relevant"})
    assert list(question.path) == ["relevance", "kind", "rational"]
    assert question.step == Step.GROUNDED
