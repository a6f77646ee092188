"""The background save endpoint of the annotation page (/a/<id>/sync/), and what the page embeds."""

import json
import uuid

import pytest
from django.urls import reverse
from django.utils import timezone

from annotator.models import AnnotationEvent, Assignment, EvidenceSpan, SentenceAnnotation
from annotator.domain.vocabulary import Label, ProtocolMode
from tests.factories_workspace import annotators, claimed, project_with_turns

pytestmark = pytest.mark.django_db


def rid():
    return str(uuid.uuid4())


def change(sentence, steps, path, **extra):
    return {"request_id": extra.pop("request_id", rid()), "sentence": sentence.pk, "path": path,
            "steps": [{"action": "answer", "step": s, "value": v, "at": 1_700_000_000_000} for s, v in steps], **extra}


def sync(client, assignment, body):
    raw = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return client.post(reverse("annotate_sync", args=[assignment.pk]), raw, content_type="application/json")


FAITHFUL = [("relevance", "relevant"), ("kind", "factual"), ("faithfulness", "faithful")]


@pytest.fixture
def setup(client):
    project, turns = project_with_turns(1)
    user, = annotators(project, 1)
    client.force_login(user)
    assignment = claimed(project, user)
    sentences = list(assignment.turn.sentences.order_by("index"))
    return client, project, user, assignment, sentences


def test_a_batch_of_sentences_is_saved_with_every_step_in_the_audit_history(setup):
    client, project, user, assignment, sentences = setup
    body = {"version": 0, "changes": [
        change(sentences[0], FAITHFUL, dict(FAITHFUL), note="  checked  ", seconds=4.5),
        change(sentences[1], [("relevance", "irrelevant")], {"relevance": "irrelevant"}),
    ]}
    response = sync(client, assignment, body)
    assert response.status_code == 200, response.content
    assert response.json()["version"] == 2
    assert [s["label"] for s in response.json()["saved"]] == [Label.FAITHFUL, Label.IRRELEVANT]
    first = SentenceAnnotation.objects.get(sentence=sentences[0])
    assert (first.label, first.note, first.seconds_spent) == (Label.FAITHFUL, "checked", 4.5)
    steps = list(AnnotationEvent.objects.filter(sentence=sentences[0], action="answer").order_by("id"))
    assert [(e.new["step"], e.new["answer"]) for e in steps] == FAITHFUL
    assert steps[-1].new["label"] == Label.FAITHFUL and steps[0].new["answered_at"].startswith("2023-11-14")
    assert AnnotationEvent.objects.filter(action="note").count() == 1
    assert AnnotationEvent.objects.filter(action="save").count() == 2
    # The same batch again (its answer was lost on the network) is applied once.
    again = sync(client, assignment, body)
    assert again.status_code == 200 and again.json()["version"] == 2
    assert AnnotationEvent.objects.filter(action="answer").count() == 4


def test_a_retried_batch_with_a_new_change_after_it_applies_only_the_new_one(setup):
    client, project, user, assignment, sentences = setup
    first = change(sentences[0], FAITHFUL, dict(FAITHFUL))
    assert sync(client, assignment, {"version": 0, "changes": [first]}).status_code == 200
    second = change(sentences[1], [("relevance", "irrelevant")], {"relevance": "irrelevant"})
    response = sync(client, assignment, {"version": 0, "changes": [first, second]})
    assert response.status_code == 200 and response.json()["version"] == 2
    assert AnnotationEvent.objects.filter(action="save").count() == 2
    # But not when another write came in between: the new change was made on a stale copy.
    other = Assignment.objects.select_related("project", "turn__dialogue").get(pk=assignment.pk)
    from annotator.work.services import annotation_set_note
    annotation_set_note(other, sentences[2], "from another tab", actor=user, expected_version=2)
    third = change(sentences[2], [("relevance", "irrelevant")], {"relevance": "irrelevant"})
    conflict = sync(client, assignment, {"version": 1, "changes": [second, third]})
    assert conflict.status_code == 409 and conflict.json()["version"] == 3
    assert not SentenceAnnotation.objects.get(sentence=sentences[2]).label


def test_a_stale_version_is_a_conflict_and_writes_nothing(setup):
    client, project, user, assignment, sentences = setup
    assert sync(client, assignment, {"version": 0, "changes": [change(sentences[0], FAITHFUL, dict(FAITHFUL))]}).status_code == 200
    response = sync(client, assignment, {"version": 0, "changes": [
        change(sentences[0], [("relevance", "irrelevant")], {"relevance": "irrelevant"})]})
    assert response.status_code == 409 and "another tab" in response.json()["error"]
    assert SentenceAnnotation.objects.get(sentence=sentences[0]).label == Label.FAITHFUL


def test_undo_and_changed_answers_are_replayed_through_the_protocol(setup):
    client, project, user, assignment, sentences = setup
    steps = [{"action": "answer", "step": "relevance", "value": "relevant"},
             {"action": "answer", "step": "kind", "value": "cognitive"},
             {"action": "undo"},
             {"action": "answer", "step": "kind", "value": "factual"},
             {"action": "answer", "step": "relevance", "value": "irrelevant"}]
    body = {"version": 0, "changes": [{"request_id": rid(), "sentence": sentences[0].pk, "steps": steps,
                                       "path": {"relevance": "irrelevant"}}]}
    assert sync(client, assignment, body).status_code == 200
    assert SentenceAnnotation.objects.get().label == Label.IRRELEVANT
    assert list(AnnotationEvent.objects.exclude(action__in=["save", "assign"]).values_list("action", flat=True)) == [
        "answer", "answer", "undo", "answer", "answer"]
    # Steps that do not lead to the path shown are refused as a whole.
    body = {"version": 1, "changes": [change(sentences[1], [("relevance", "relevant")], {"relevance": "irrelevant"})]}
    response = sync(client, assignment, body)
    assert response.status_code == 422 and "do not lead" in response.json()["error"]
    assert not SentenceAnnotation.objects.filter(sentence=sentences[1]).exists()


def test_evidence_is_the_whole_list_kept_by_the_page(setup):
    client, project, user, assignment, sentences = setup
    reference = assignment.turn.dialogue.reference
    start = reference.index("flows through Brazil")
    span = {"start": start, "end": start + len("flows through Brazil")}
    body = {"version": 0, "changes": [change(sentences[0], FAITHFUL, dict(FAITHFUL), evidence=[span, {"start": 0, "end": 5}])]}
    response = sync(client, assignment, body)
    assert [e["text"] for e in response.json()["saved"][0]["evidence"]] == [reference[0:5], "flows through Brazil"]
    body = {"version": 1, "changes": [{"request_id": rid(), "sentence": sentences[0].pk, "evidence": [span]}]}
    assert sync(client, assignment, body).status_code == 200
    assert list(EvidenceSpan.objects.values_list("text", flat=True)) == ["flows through Brazil"]
    assert list(AnnotationEvent.objects.filter(action__startswith="evidence").values_list("action", flat=True)) == [
        "evidence_add", "evidence_add", "evidence_remove"]


def test_independent_mode_picks(client):
    project, turns = project_with_turns(1, protocol_mode=ProtocolMode.INDEPENDENT)
    user, = annotators(project, 1)
    client.force_login(user)
    assignment = claimed(project, user)
    sentence = assignment.turn.sentences.order_by("index").first()
    body = {"version": 0, "changes": [{"request_id": rid(), "sentence": sentence.pk,
                                       "steps": [{"action": "pick", "value": "speculative"}],
                                       "path": {"relevance": "relevant", "kind": "cognitive", "rational": "yes", "grounded": "no"}}]}
    assert sync(client, assignment, body).status_code == 200
    assert SentenceAnnotation.objects.get().label == Label.SPECULATIVE
    sequential = {"version": 1, "changes": [change(sentence, [("relevance", "irrelevant")], {"relevance": "irrelevant"})]}
    assert sync(client, assignment, sequential).status_code == 422


@pytest.mark.parametrize("body", [
    b"not json", "[]", {"version": 0}, {"version": -1, "changes": []}, {"version": "1", "changes": [{}]},
    {"version": 0, "changes": []}, {"version": 0, "changes": ["x"]},
    {"version": 0, "changes": [{"request_id": "short", "sentence": 1}]},
    {"version": 0, "changes": [{"request_id": "a" * 20, "sentence": 999999}]},
    {"version": 0, "changes": [{"request_id": "a" * 20, "sentence": "SENTENCE", "extra": 1}]},
    {"version": 0, "changes": [{"request_id": "a" * 20, "sentence": "SENTENCE", "path": {"kind": "factual"}}]},
    {"version": 0, "changes": [{"request_id": "a" * 20, "sentence": "SENTENCE", "path": ["relevance"]}]},
    {"version": 0, "changes": [{"request_id": "a" * 20, "sentence": "SENTENCE", "steps": [{"action": "drop"}]}]},
    {"version": 0, "changes": [{"request_id": "a" * 20, "sentence": "SENTENCE", "steps": [{"action": "undo", "at": "now"}]}]},
    {"version": 0, "changes": [{"request_id": "a" * 20, "sentence": "SENTENCE", "evidence": [{"start": 1}]}]},
    {"version": 0, "changes": [{"request_id": "a" * 20, "sentence": "SENTENCE", "seconds": -1}]},
    {"version": 0, "changes": [{"request_id": "a" * 20, "sentence": "SENTENCE", "note": 5}]},
    {"version": 0, "changes": [{"request_id": "a" * 20, "sentence": "SENTENCE"}, {"request_id": "a" * 20, "sentence": "SENTENCE"}]},
])
def test_malformed_batches_are_a_400_with_a_message_never_a_500(setup, body):
    client, project, user, assignment, sentences = setup
    if isinstance(body, dict):
        body = json.loads(json.dumps(body).replace('"SENTENCE"', str(sentences[0].pk)))
    response = sync(client, assignment, body)
    assert response.status_code == 400 and response.json()["error"]
    assert not AnnotationEvent.objects.exclude(action="assign").exists()


def test_another_annotators_assignment_is_a_404_and_a_submitted_one_refuses(setup):
    client, project, user, assignment, sentences = setup
    other, = annotators(project, 1)
    from django.test import Client
    stranger = Client()
    stranger.force_login(other)
    body = {"version": 0, "changes": [change(sentences[0], FAITHFUL, dict(FAITHFUL))]}
    assert sync(stranger, assignment, body).status_code == 404
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.SUBMITTED, submitted_at=timezone.now())
    response = sync(client, assignment, body)
    assert response.status_code == 422 and "submitted" in response.json()["error"]


def page_data(client, assignment):
    html = client.get(reverse("annotate", args=[assignment.pk])).content.decode()
    start = html.index('<script id="annotation-data" type="application/json">') + len('<script id="annotation-data" type="application/json">')
    return html, json.loads(html[start:html.index("</script>", start)])


def test_the_page_embeds_the_protocol_the_examples_and_only_the_annotators_own_answers(setup):
    from annotator.domain import protocol
    from annotator.models import GuidelineExample
    client, project, user, assignment, sentences = setup
    GuidelineExample.objects.create(project=project, step="kind", is_positive=True, text="<b>The bridge opened in 1932.</b>")
    assert sync(client, assignment, {"version": 0, "changes": [change(sentences[0], FAITHFUL, dict(FAITHFUL))]}).status_code == 200
    html, data = page_data(client, assignment)
    assert data["protocol"]["steps"] == protocol.describe()["steps"]
    assert data["protocol"]["tree"]["then"]["relevant"]["then"]["factual"]["then"]["faithful"] == {"label": "faithful", "evidence": True}
    assert data["examples"]["kind"]["positive"][0]["text"] == "<b>The bridge opened in 1932.</b>"
    assert "<b>The bridge" not in html  # escaped by json_script
    assert [s["label"] for s in data["sentences"]] == [Label.FAITHFUL, "", ""] and data["version"] == 1
    assert all("prelabel" not in s for s in data["sentences"])


def _finished_job_with_predictions(project, turn, label):
    from autolabel.models import AutoLabelJob, LLMProfile, Prediction, PromptVersion
    profile = LLMProfile.objects.create(name=f"p-{project.pk}", base_url="http://127.0.0.1:1/v1")
    prompt = PromptVersion.objects.create(project=project, version=1)
    job = AutoLabelJob.objects.create(project=project, profile=profile, prompt_version=prompt,
                                      status=AutoLabelJob.Status.DONE, finished_at=timezone.now())
    for sentence in turn.sentences.all():
        Prediction.objects.create(job=job, sentence=sentence, label=label)


@pytest.mark.parametrize("shown", [False, True])
def test_pre_labels_reach_the_page_only_when_the_project_shows_them(client, shown):
    project, turns = project_with_turns(1, show_prelabels=shown)
    _finished_job_with_predictions(project, turns[0], Label.SPECULATIVE)
    user, = annotators(project, 1)
    client.force_login(user)
    assignment = claimed(project, user)
    html, data = page_data(client, assignment)
    prelabels = [s.get("prelabel") for s in data["sentences"]]
    panel = client.get(reverse("annotate", args=[assignment.pk]), {"sentence": data["sentences"][0]["id"]},
                       HTTP_HX_REQUEST="true").content.decode()
    if shown:
        assert prelabels == [{"label": "speculative", "display": "Speculative"}] * 3
    else:
        assert prelabels == [None] * 3
        # Every label's name is in the protocol's description; no prediction is anywhere.
        assert '"prelabel"' not in html and "pre-label" not in html.lower() and "pre-label" not in panel.lower()


def test_an_answer_says_whether_its_version_was_reached_by_the_batch_alone(setup):
    """`chained`: the page moves its queued changes on only when no other write came in between or since."""
    client, project, user, assignment, sentences = setup
    first = {"version": 0, "changes": [change(sentences[0], [("relevance", "irrelevant")], {"relevance": "irrelevant"})]}
    applied = sync(client, assignment, first).json()
    assert (applied["version"], applied["chained"]) == (1, True)
    # The same batch again (its answer was lost): still the last write, so the page may continue from version 1.
    assert (sync(client, assignment, first).json()["version"], sync(client, assignment, first).json()["chained"]) == (1, True)
    other_tab = {"version": 1, "changes": [change(sentences[1], [("relevance", "irrelevant")], {"relevance": "irrelevant"})]}
    assert sync(client, assignment, other_tab).json()["chained"] is True
    # Once another write came since, the same batch again is a conflict: the page's queued changes did not see it.
    replayed = sync(client, assignment, first)
    assert replayed.status_code == 409 and replayed.json()["version"] == 2


@pytest.mark.parametrize("body, message", [
    ("null", "No data provided"),
    ("[]", "Invalid data. Expected a dictionary, but got list."),
    ({"version": 0, "changes": []}, "changes: Ensure this field has at least 1 elements."),
    ({"version": 0, "changes": [{"request_id": "a" * 20, "sentence": "SENTENCE", "note": 5}]},
     "change 1: note: Not a valid string."),
    ({"version": 0, "changes": [{"request_id": "a" * 20, "sentence": "SENTENCE", "steps": [{"action": "drop"}]}]},
     'change 1: steps 1: action: "drop" is not a valid choice.'),
    ({"version": 0, "changes": [{"request_id": "a" * 20, "sentence": 999999}]},
     "change 1: sentence: Sentence 999999 is not part of this turn."),
])
def test_a_malformed_batch_is_answered_with_the_message_naming_the_change_and_the_field(setup, body, message):
    # The serializer is built once and shared by every request: its answers stay those of a fresh one.
    client, project, user, assignment, sentences = setup
    if isinstance(body, dict):
        body = json.loads(json.dumps(body).replace('"SENTENCE"', str(sentences[0].pk)))
    for _ in range(2):
        response = sync(client, assignment, body)
        assert response.status_code == 400 and response.json()["error"] == message
