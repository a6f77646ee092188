"""The annotation write services: autosave, idempotency, version checks, audit, submit rules."""

import pytest

from annotator.models import AnnotationEvent, Assignment, EvidenceSpan, SentenceAnnotation
from annotator.work.services import SubmitRefused, annotation_answer_step, annotation_evidence_add, annotation_evidence_remove, annotation_pick_label, annotation_record_time, annotation_set_note, annotation_undo, assignment_submit
from annotator.work.write import AnnotationError, AssignmentClosed, VersionConflict
from annotator.work.assignment import assignment_next
from annotator.domain.vocabulary import Label, ProtocolMode, Step
from tests.factories_workspace import annotators, label_all, project_with_turns

pytestmark = pytest.mark.django_db


def setup(**project_kwargs):
    project, turns = project_with_turns(1, **project_kwargs)
    user, = annotators(project, 1)
    assignment = Assignment.objects.select_related("project", "turn__dialogue").get(
        pk=assignment_next(project, user).pk
    )
    sentences = list(turns[0].sentences.order_by("index"))
    return project, user, assignment, sentences


def test_answers_are_saved_at_once_and_audited_old_to_new():
    project, user, assignment, sentences = setup()
    out = annotation_answer_step(assignment, sentences[0], Step.RELEVANCE, "relevant", actor=user, request_id="r1", expected_version=0)
    assert out.assignment.version == 1
    saved = SentenceAnnotation.objects.get(assignment=assignment, sentence=sentences[0])
    assert saved.path == {"relevance": "relevant"} and saved.label == ""
    annotation_answer_step(assignment, sentences[0], Step.KIND, "factual", actor=user, request_id="r2", expected_version=1)
    out = annotation_answer_step(assignment, sentences[0], Step.FAITHFULNESS, "invented", actor=user, request_id="r3", expected_version=2)
    assert out.annotation.label == Label.INVENTED
    fresh = Assignment.objects.get(pk=assignment.pk)
    assert fresh.status == Assignment.Status.IN_PROGRESS and fresh.version == 3 and fresh.started_at
    event = AnnotationEvent.objects.get(request_id="r3")
    assert event.actor == user and event.sentence == sentences[0] and event.action == "answer"
    assert event.old == {"path": {"relevance": "relevant", "kind": "factual"}, "label": ""}
    assert event.new["label"] == "invented"


def test_changing_an_earlier_answer_clears_the_later_ones():
    project, user, assignment, sentences = setup()
    for step, value in [("relevance", "relevant"), ("kind", "cognitive"), ("rational", "yes"), ("grounded", "no")]:
        annotation_answer_step(assignment, sentences[0], step, value, actor=user)
    assert SentenceAnnotation.objects.get(sentence=sentences[0]).label == Label.SPECULATIVE
    annotation_answer_step(assignment, sentences[0], "kind", "factual", actor=user)
    saved = SentenceAnnotation.objects.get(sentence=sentences[0])
    assert saved.path == {"relevance": "relevant", "kind": "factual"} and saved.label == ""


def test_an_answer_out_of_order_is_refused_and_nothing_is_written():
    project, user, assignment, sentences = setup()
    with pytest.raises(AnnotationError):
        annotation_answer_step(assignment, sentences[0], "grounded", "yes", actor=user)
    with pytest.raises(AnnotationError):
        annotation_answer_step(assignment, sentences[0], "relevance", "maybe", actor=user)
    assert not SentenceAnnotation.objects.exists()
    assert Assignment.objects.get(pk=assignment.pk).version == 0


def test_a_replayed_request_returns_the_same_result_and_writes_nothing():
    project, user, assignment, sentences = setup()
    first = annotation_answer_step(assignment, sentences[0], "relevance", "irrelevant", actor=user, request_id="same", expected_version=0)
    again = annotation_answer_step(assignment, sentences[0], "relevance", "irrelevant", actor=user, request_id="same", expected_version=0)
    assert again.replayed and again.event.pk == first.event.pk
    assert again.annotation.label == Label.IRRELEVANT
    assert AnnotationEvent.objects.filter(action="answer").count() == 1
    assert Assignment.objects.get(pk=assignment.pk).version == 1


def test_a_stale_version_is_a_conflict_not_a_silent_overwrite():
    project, user, assignment, sentences = setup()
    annotation_answer_step(assignment, sentences[0], "relevance", "relevant", actor=user, request_id="tab1", expected_version=0)
    with pytest.raises(VersionConflict) as conflict:
        annotation_answer_step(assignment, sentences[0], "relevance", "irrelevant", actor=user, request_id="tab2", expected_version=0)
    assert conflict.value.current_version == 1
    assert SentenceAnnotation.objects.get(sentence=sentences[0]).path == {"relevance": "relevant"}


def test_undo_takes_back_the_last_answer():
    project, user, assignment, sentences = setup()
    annotation_answer_step(assignment, sentences[0], "relevance", "relevant", actor=user)
    annotation_answer_step(assignment, sentences[0], "kind", "factual", actor=user)
    annotation_undo(assignment, sentences[0], actor=user)
    assert SentenceAnnotation.objects.get(sentence=sentences[0]).path == {"relevance": "relevant"}
    annotation_undo(assignment, sentences[0], actor=user)
    with pytest.raises(AnnotationError):
        annotation_undo(assignment, sentences[0], actor=user)
    assert [e.action for e in AnnotationEvent.objects.filter(sentence=sentences[0])] == ["answer", "answer", "undo", "undo"]


def test_independent_mode_stores_the_same_path_as_the_walk():
    project, user, assignment, sentences = setup(protocol_mode=ProtocolMode.INDEPENDENT)
    annotation_pick_label(assignment, sentences[0], Label.RELIABLE, actor=user)
    saved = SentenceAnnotation.objects.get(sentence=sentences[0])
    assert saved.label == Label.RELIABLE
    assert saved.path == {"relevance": "relevant", "kind": "cognitive", "rational": "yes", "grounded": "yes", "unequivocal": "no"}
    with pytest.raises(AnnotationError):
        annotation_answer_step(assignment, sentences[0], "relevance", "relevant", actor=user)
    with pytest.raises(AnnotationError):
        annotation_pick_label(assignment, sentences[0], "hallucinated", actor=user)


def test_notes_and_time_are_kept_per_sentence():
    project, user, assignment, sentences = setup()
    annotation_set_note(assignment, sentences[1], "  unsure about the date ", actor=user, seconds=2.5)
    annotation_record_time(assignment, sentences[1], 4)
    annotation_record_time(assignment, sentences[2], 1.5)
    annotation_record_time(assignment, sentences[2], float("nan"))
    one = SentenceAnnotation.objects.get(sentence=sentences[1])
    assert one.note == "unsure about the date" and one.seconds_spent == 6.5
    assert SentenceAnnotation.objects.get(sentence=sentences[2]).seconds_spent == 1.5
    assert AnnotationEvent.objects.get(action="note").new == {"note": "unsure about the date"}


def test_evidence_spans_are_offsets_into_the_reference():
    project, user, assignment, sentences = setup()
    reference = assignment.turn.dialogue.reference
    start = reference.index(" flows through Brazil")  # the selection caught the space before
    out = annotation_evidence_add(assignment, sentences[0], start, start + 21, actor=user)
    span = out.extra["span"]
    assert (span.start, span.end, span.text) == (start + 1, start + 21, "flows through Brazil")
    annotation_evidence_add(assignment, sentences[0], 0, 10, actor=user)
    with pytest.raises(AnnotationError):
        annotation_evidence_add(assignment, sentences[0], 0, 10, actor=user)
    with pytest.raises(AnnotationError):
        annotation_evidence_add(assignment, sentences[0], 5, len(reference) + 5, actor=user)
    annotation_evidence_remove(assignment, sentences[0], span.pk, actor=user)
    assert list(EvidenceSpan.objects.values_list("start", "end")) == [(0, 10)]
    with pytest.raises(AnnotationError):
        annotation_evidence_remove(assignment, sentences[0], span.pk, actor=user)
    assert AnnotationEvent.objects.get(action="evidence_remove").old["text"] == "flows through Brazil"


def test_submit_needs_every_sentence_done_then_closes_the_assignment():
    project, user, assignment, sentences = setup()
    annotation_answer_step(assignment, sentences[0], "relevance", "irrelevant", actor=user)
    with pytest.raises(SubmitRefused) as refused:
        assignment_submit(assignment, actor=user)
    assert "2 of 3 sentences have no label yet (sentence 2, 3)" in str(refused.value)
    label_all(assignment, Label.IRRELEVANT, user)
    out = assignment_submit(assignment, actor=user, request_id="submit-1")
    assert out.assignment.status == Assignment.Status.SUBMITTED
    assert assignment_submit(assignment, actor=user, request_id="submit-1").replayed
    with pytest.raises(AssignmentClosed):
        annotation_answer_step(assignment, sentences[0], "relevance", "relevant", actor=user)
    assert AnnotationEvent.objects.filter(action="submit").count() == 1


def test_required_evidence_is_enforced_for_faithful_and_grounded_answers_at_submit():
    project, user, assignment, sentences = setup(require_evidence=True)
    label_all(assignment, Label.FAITHFUL, user)
    with pytest.raises(SubmitRefused) as refused:
        assignment_submit(assignment, actor=user)
    assert "requires evidence" in str(refused.value) and "sentence 1, 2, 3" in str(refused.value)
    for sentence in sentences:
        annotation_evidence_add(assignment, sentence, 0, 20, actor=user)
    assert assignment_submit(assignment, actor=user).assignment.status == Assignment.Status.SUBMITTED


def test_a_sentence_of_another_turn_is_refused():
    project, turns = project_with_turns(2)
    user, = annotators(project, 1)
    assignment = Assignment.objects.select_related("project").get(pk=assignment_next(project, user).pk)
    other = turns[1].sentences.first()
    with pytest.raises(AnnotationError):
        annotation_answer_step(assignment, other, "relevance", "relevant", actor=user)


def _two_annotators_one_labelled_submitted():
    """A turn of overlap 2: the first annotator's slot submitted, the second's labelled and open."""
    project, (turn,) = project_with_turns(1, overlap=2)
    first, second = annotators(project, 2)
    for user in (first, second):
        assignment_next(project, user)
    slots = {a.annotator_id: a for a in Assignment.objects.select_related("project", "turn__dialogue")}
    assignment_submit(label_all(slots[first.pk], Label.IRRELEVANT, first), actor=first)
    return turn, second, label_all(slots[second.pk], Label.IRRELEVANT, second)


def test_a_submission_whose_gold_cannot_be_decided_is_not_recorded(monkeypatch):
    """The submission and the gold it decides commit together or not at all (no savepoint lets half stand)."""
    from annotator.gold import derivation
    from annotator.models import GoldEvent, GoldLabel

    turn, user, last = _two_annotators_one_labelled_submitted()

    def failing_bump(project_id):
        raise RuntimeError("the gold version could not be moved")

    monkeypatch.setattr(derivation, "gold_version_bump", failing_bump)
    version = last.version
    with pytest.raises(RuntimeError):
        assignment_submit(last, actor=user, expected_version=version)
    fresh = Assignment.objects.get(pk=last.pk)
    assert fresh.status == Assignment.Status.IN_PROGRESS and fresh.version == version
    assert not AnnotationEvent.objects.filter(assignment=last, action="submit").exists()
    assert not GoldLabel.objects.filter(sentence__turn=turn).exists() and not GoldEvent.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_last_submission_of_a_turn_decides_its_gold_in_one_transaction_locking_the_turn_once():
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotator.gold.services import gold_version_bump
    from annotator.models import GoldLabel

    turn, user, last = _two_annotators_one_labelled_submitted()
    gold_version_bump(turn.dialogue.project_id)  # its row made once per project (a savepoint, that once)
    with CaptureQueriesContext(connection) as statements:
        assignment_submit(last, actor=user, expected_version=last.version)
    assert GoldLabel.objects.filter(sentence__turn=turn).count() == turn.sentences.count()
    sql = [statement["sql"] for statement in statements.captured_queries]
    assert not [text for text in sql if "SAVEPOINT" in text.upper()], sql
    turn_reads = [text for text in sql if text.lstrip().upper().startswith("SELECT") and 'FROM "annotator_turn" t' in text]
    assert len(turn_reads) == 1, turn_reads
