"""A lead's actions over the API: gold override, reopen, release, reassign, the qualification set, and a
job's evaluation. Each answers what the page does (same services, same numbers), refuses non-leads with
the API's 404, checks the body's shape (400 by field) and passes a service's refusal on in the error body."""

import json

import pytest

from annotator.models import AnnotationEvent, Assignment, GoldEvent, GoldLabel, QualificationResult, Turn
from annotator.domain.vocabulary import GoldProvenance, Label, Role
from autolabel.evaluation.selectors import job_evaluation_report
from autolabel.models import Prediction
from autolabel.jobs.services import job_create
from tests.factories import TurnFactory, member
from tests.factories_api import fast, token_client, url, world  # noqa: F401 (fixtures)
from tests.factories_autolabel import gold_turn as autolabel_gold_turn
from tests.factories_gold import submit
from tests.factories_qa import gold_turn

pytestmark = pytest.mark.django_db


def lead(world):
    return token_client(world.users["lead"])


def assert_refused_to_non_leads(world, method, address, body=None):
    """The API's answer to a member without the role, and to someone outside the project: 404."""
    for role in ("annotator", "adjudicator", "outsider"):
        response = getattr(token_client(world.users[role]), method)(address, body or {}, format="json")
        assert response.status_code == 404, role
        assert response.json()["code"] == "not_found"


def assert_service_refusal(response, message):
    assert response.status_code == 400, response.json()
    assert response.json()["code"] == "invalid" and response.json()["detail"] == message


# --- gold override -----------------------------------------------------------------------------------

def test_a_lead_overrides_gold_and_the_history_says_who_and_why(world):
    sentence = world.gold.sentence
    response = lead(world).post(url("gold-override", world, sentence_id=sentence.pk),
                                {"label": "invented", "reason": "The reference says otherwise."}, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["sentence"], body["label"], body["provenance"], body["decided_by"]) == (
        sentence.pk, "invented", "override", "lea")
    gold = GoldLabel.objects.get(sentence=sentence)
    assert (gold.label, gold.provenance, gold.reason) == ("invented", GoldProvenance.OVERRIDE,
                                                          "The reference says otherwise.")
    event = GoldEvent.objects.filter(sentence=sentence).latest("id")
    assert (event.old_label, event.new_label, event.actor, event.reason) == (
        "faithful", "invented", world.users["lead"], "The reference says otherwise.")


def test_an_override_closes_the_open_dispute_on_the_sentence(world):
    sentence = world.adjudication.sentence
    response = lead(world).post(url("gold-override", world, sentence_id=sentence.pk),
                                {"label": "speculative", "reason": "Ungrounded superlative."}, format="json")
    assert response.status_code == 200
    world.adjudication.refresh_from_db()
    assert world.adjudication.status == "resolved" and world.adjudication.label == "speculative"


def test_gold_override_refusals(world):
    address = url("gold-override", world, sentence_id=world.gold.sentence_id)
    assert_refused_to_non_leads(world, "post", address, {"label": "invented", "reason": "x"})
    bad = lead(world).post(address, {"label": "wrong", "reason": "x"}, format="json")
    assert bad.status_code == 400 and "label" in bad.json()["errors"]
    assert_service_refusal(lead(world).post(address, {"label": "invented"}, format="json"),
                           "Give a reason for the decision.")
    assert_service_refusal(lead(world).post(address, {"label": "invented", "reason": "  "}, format="json"),
                           "Give a reason for the decision.")
    elsewhere = TurnFactory(dialogue__project=world.other_project).sentences.first()
    missing = lead(world).post(url("gold-override", world, sentence_id=elsewhere.pk),
                               {"label": "invented", "reason": "x"}, format="json")
    assert missing.status_code == 404
    assert GoldLabel.objects.get(pk=world.gold.pk).label == "faithful"  # nothing changed


# --- reopen --------------------------------------------------------------------------------------------

def test_a_lead_reopens_a_submitted_annotation_and_its_derived_gold_is_cleared(world):
    annotator = member(world.project, Role.ANNOTATOR, username="grace")
    done = submit(world.other_turn, annotator, ["faithful", "faithful", "irrelevant"])
    first = world.other_turn.sentences.order_by("index").first()
    GoldLabel.objects.create(sentence=first, label=Label.FAITHFUL, provenance=GoldProvenance.AGREEMENT,
                             path={"relevance": "relevant", "kind": "factual", "faithfulness": "faithful"})
    response = lead(world).post(url("assignment-reopen", world, pk=done.pk), {"reason": "Check sentence 2."},
                                format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["id"], body["annotator"], body["status"], body["submitted_at"]) == (
        done.pk, "grace", "in_progress", None)
    assert body["version"] == done.version + 1
    assert not GoldLabel.objects.filter(sentence=first).exists()
    assert AnnotationEvent.objects.filter(assignment=done, action="reopen").exists()


def test_reopen_refusals(world):
    address = url("assignment-reopen", world, pk=world.assignment.pk)
    assert_refused_to_non_leads(world, "post", address, {"reason": "x"})
    bad = lead(world).post(address, {"reason": ["not", "a", "string"]}, format="json")
    assert bad.status_code == 400 and "reason" in bad.json()["errors"]
    # world.assignment is still being worked on.
    assert_service_refusal(lead(world).post(address, {"reason": "Redo it."}, format="json"),
                           "Only a submitted annotation can be reopened.")
    done = submit(world.other_turn, member(world.project, Role.ANNOTATOR), ["faithful"] * 3)
    assert_service_refusal(lead(world).post(url("assignment-reopen", world, pk=done.pk), {}, format="json"),
                           "Give a reason for the decision.")
    assert Assignment.objects.get(pk=done.pk).status == Assignment.Status.SUBMITTED


# --- release and reassign ------------------------------------------------------------------------------

def test_a_lead_releases_an_unfinished_assignment(world):
    response = lead(world).post(url("assignment-release", world, pk=world.assignment.pk),
                                {"reason": "Away for two weeks."}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["status"] == "released"
    assert Assignment.objects.get(pk=world.assignment.pk).status == Assignment.Status.RELEASED
    event = AnnotationEvent.objects.get(assignment=world.assignment, action="release")
    assert event.new["reason"] == "Away for two weeks." and event.actor == world.users["lead"]


def test_release_refusals(world):
    address = url("assignment-release", world, pk=world.assignment.pk)
    assert_refused_to_non_leads(world, "post", address)
    bad = lead(world).post(address, {"reason": "x" * 5001}, format="json")
    assert bad.status_code == 400 and "reason" in bad.json()["errors"]
    assert lead(world).post(address, {}, format="json").status_code == 200  # the reason is optional
    assert_service_refusal(lead(world).post(address, {}, format="json"),
                           "Only unfinished assignments can be released; this one is released.")


def test_a_lead_reassigns_a_turn_to_another_annotator(world):
    grace = member(world.project, Role.ANNOTATOR, username="grace")
    response = lead(world).post(url("assignment-reassign", world, pk=world.assignment.pk),
                                {"annotator": "grace"}, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["annotator"], body["turn"], body["status"]) == ("grace", world.turn.pk, "assigned")
    assert Assignment.objects.get(pk=body["id"]).annotator == grace
    assert Assignment.objects.get(pk=world.assignment.pk).status == Assignment.Status.RELEASED
    # The new holder sees the turn in their own list.
    mine = token_client(grace).get(url("assignment-list", world)).json()["results"]
    assert [(a["id"], a["turn"]) for a in mine] == [(body["id"], world.turn.pk)]


def test_reassign_refusals(world):
    address = url("assignment-reassign", world, pk=world.assignment.pk)
    assert_refused_to_non_leads(world, "post", address, {"annotator": "ann"})
    missing = lead(world).post(address, {}, format="json")
    assert missing.status_code == 400 and missing.json()["errors"]["annotator"] == ["This field is required."]
    # Only an annotator of this project can be given the turn: not a stranger, an outsider or an adjudicator.
    for username in ("nobody", "out", "adj"):
        response = lead(world).post(address, {"annotator": username}, format="json")
        assert response.status_code == 400
        assert response.json()["errors"]["annotator"] == [f"'{username}' is not an annotator of this project."]
    assert_service_refusal(lead(world).post(address, {"annotator": "ann"}, format="json"),
                           "That annotator already holds this assignment.")
    assert Assignment.objects.get(pk=world.assignment.pk).status == world.assignment.status


# --- qualification -------------------------------------------------------------------------------------

def test_a_lead_sets_the_qualification_set_and_reads_it_back(world):
    turns = [gold_turn(world.project, ["faithful", "invented"]), gold_turn(world.project, ["irrelevant"])]
    ids = sorted(turn.pk for turn in turns)
    response = lead(world).put(url("qualification", world), {"turns": ids, "pass_mark": 0.8}, format="json")
    assert response.status_code == 200, response.json()
    assert sorted(response.json()["turns"]) == ids and response.json()["pass_mark"] == 0.8
    assert sorted(Turn.objects.filter(is_qualification=True).values_list("pk", flat=True)) == ids
    world.project.refresh_from_db()
    assert world.project.qualification_pass_mark == 0.8
    read = lead(world).get(url("qualification", world)).json()
    assert sorted(read["turns"]) == ids and read["pass_mark"] == 0.8 and read["results"] == []


def test_qualification_set_refusals(world):
    address = url("qualification", world)
    for role in ("annotator", "adjudicator", "outsider"):
        assert token_client(world.users[role]).get(address).status_code == 404
    assert_refused_to_non_leads(world, "put", address, {"turns": [], "pass_mark": 0.8})
    bad = lead(world).put(address, {"turns": ["x"], "pass_mark": "high"}, format="json")
    assert bad.status_code == 400 and {"turns.0", "pass_mark"} <= set(bad.json()["errors"])
    # world.other_turn has no gold: the service says which turn and why.
    no_gold = lead(world).put(address, {"turns": [world.other_turn.pk], "pass_mark": 0.8}, format="json")
    name = f"{world.other_turn.dialogue.external_id} turn {world.other_turn.index}"
    assert_service_refusal(no_gold, f"{name} lacks a gold label for 3 of its 3 sentences.")
    assert_service_refusal(lead(world).put(address, {"turns": [], "pass_mark": 0}, format="json"),
                           "The pass mark must be above 0% and at most 100%.")
    assert not Turn.objects.filter(is_qualification=True).exists()


def test_a_lead_sees_the_results_and_allows_a_retry(world):
    annotator = world.users["annotator"]
    QualificationResult.objects.create(project=world.project, annotator=annotator, attempt=1, correct=2, total=5)
    latest = QualificationResult.objects.create(project=world.project, annotator=annotator, attempt=2, correct=3,
                                                total=5)
    results = lead(world).get(url("qualification", world)).json()["results"]
    assert [(r["annotator"], [a["attempt"] for a in r["attempts"]]) for r in results] == [("ann", [2, 1])]
    assert results[0]["attempts"][0]["score"] == 0.6 and results[0]["attempts"][0]["passed"] is False

    response = lead(world).post(url("qualification-retry", world, pk=latest.pk))
    assert response.status_code == 200, response.json()
    assert response.json()["retry_allowed"] is True and response.json()["retry_allowed_by"] == "lea"
    latest.refresh_from_db()
    assert latest.retry_allowed and latest.retry_allowed_by == world.users["lead"]


def test_retry_refusals(world):
    annotator = world.users["annotator"]
    older = QualificationResult.objects.create(project=world.project, annotator=annotator, attempt=1, total=5)
    passed = QualificationResult.objects.create(project=world.project, annotator=annotator, attempt=2, correct=5,
                                                total=5, passed=True)
    assert_refused_to_non_leads(world, "post", url("qualification-retry", world, pk=older.pk))
    assert_service_refusal(lead(world).post(url("qualification-retry", world, pk=passed.pk)),
                           "This attempt passed; there is nothing to retry.")
    assert_service_refusal(lead(world).post(url("qualification-retry", world, pk=older.pk)),
                           "Only the latest attempt can be retried.")
    elsewhere = QualificationResult.objects.create(project=world.other_project, annotator=world.users["outsider"],
                                                   total=5)
    assert lead(world).post(url("qualification-retry", world, pk=elsewhere.pk)).status_code == 404
    assert not QualificationResult.objects.filter(retry_allowed=True).exists()


# --- auto-label evaluation -----------------------------------------------------------------------------

def test_a_jobs_evaluation_has_the_numbers_of_its_page(world):
    turn = autolabel_gold_turn(world.project)
    job = job_create(project=world.project, profile=world.job.profile, samples=3, threshold=2,
                     turn_ids=[turn.pk], enqueue=False)
    votes = {
        "irrelevant": [{"hallucinated": False}] * 3,
        "faithful": [{"hallucinated": False}, {"hallucinated": True, "label": "invented", "kind": "factual"},
                     {"hallucinated": False}],
        "invented": [{"hallucinated": True, "label": "invented", "kind": "factual"}] * 3,
        "speculative": [{"hallucinated": True, "label": "speculative", "kind": "cognitive"}] * 2
                       + [{"hallucinated": False}],
    }
    for sentence in turn.sentences.select_related("gold"):
        Prediction.objects.create(job=job, sentence=sentence, sample_votes=votes[sentence.gold.label])
    response = lead(world).get(url("autolabel-job-evaluation", world, pk=job.pk))
    assert response.status_code == 200, response.json()
    # The page's numbers plus calibration and the rater table; threshold keys become strings.
    expected = json.loads(json.dumps(job_evaluation_report(job)))
    assert response.json() == expected
    assert expected["sentences"] == 5 and expected["thresholds"]["2"]["overall"]["recall"] == 1.0


def test_evaluation_refusals(world):
    address = url("autolabel-job-evaluation", world, pk=world.job.pk)
    for role in ("annotator", "adjudicator", "outsider"):
        assert token_client(world.users[role]).get(address).status_code == 404
    other = job_create(project=world.other_project, profile=world.job.profile, enqueue=False)
    assert lead(world).get(url("autolabel-job-evaluation", world, pk=other.pk)).status_code == 404


def test_a_services_permission_refusal_keeps_its_message_in_the_error_body():
    """The views above let only leads through, so a service's PermissionDenied cannot be reached over HTTP;
    the handler every view shares still turns it into the error body with the service's sentence."""
    from django.core.exceptions import PermissionDenied

    from api.exceptions import api_exception_handler

    response = api_exception_handler(PermissionDenied("Only a project lead allows a retry."), {})
    assert (response.status_code, response.data) == (403, {
        "status": 403, "code": "permission_denied", "detail": "Only a project lead allows a retry."})
    assert api_exception_handler(PermissionDenied(), {}).data["detail"] == (
        "You do not have permission to perform this action.")
