"""What API clients see: the protocol walk and idempotent submits, blind rules, errors, tokens, throttling,
members and settings, gold export, adjudication, agreement report, questions, auto-label jobs."""

import json
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotator.models import AnnotationEvent, Assignment, GoldLabel, Sentence
from annotator.reports.selectors import project_report
from annotator.domain.vocabulary import GoldProvenance, Role
from tests.factories import DEFAULT_PASSWORD, TurnFactory, UserFactory, member
from tests.factories_api import fast, token_client, url, world  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


FAITHFUL_WALK = [("relevance", "relevant"), ("kind", "factual"), ("faithfulness", "faithful")]


def test_an_annotator_walks_the_protocol_step_by_step_and_submits_once(world):
    annotator = member(world.project, Role.ANNOTATOR, username="newcomer")
    client = token_client(annotator)
    item = client.post(url("assignment-next", world))
    assert item.status_code == 200
    assignment = item.json()
    assert assignment["annotator"] == "newcomer" and assignment["annotations"] == []
    sentences = assignment["turn_detail"]["sentences"]
    answer_url = url("assignment-answer", world, pk=assignment["id"])
    version = assignment["version"]
    for sentence in sentences:
        for step, value in FAITHFUL_WALK:
            body = {"sentence": sentence["id"], "step": step, "answer": value, "expected_version": version,
                    "request_id": f"{sentence['id']}-{step}"}
            response = client.post(answer_url, body, format="json")
            assert response.status_code == 200, response.json()
            result = response.json()
            version = result["assignment"]["version"]
        assert result["annotation"]["label"] == "faithful" and result["next_step"] is None

    # A replayed request (same id) is answered with the first result and changes nothing.
    events = AnnotationEvent.objects.filter(assignment_id=assignment["id"]).count()
    replay = client.post(answer_url, {"sentence": sentences[0]["id"], "step": "relevance", "answer": "relevant",
                                      "request_id": f"{sentences[0]['id']}-relevance"}, format="json")
    assert replay.status_code == 200 and replay.json()["replayed"] is True
    assert AnnotationEvent.objects.filter(assignment_id=assignment["id"]).count() == events

    # A stale version (another tab) is a 409 that says the current version.
    stale = client.post(answer_url, {"sentence": sentences[0]["id"], "step": "kind", "answer": "cognitive",
                                     "expected_version": 0}, format="json")
    assert stale.status_code == 409
    assert stale.json()["code"] == "version_conflict" and stale.json()["current_version"] == version

    submit_url = url("assignment-submit", world, pk=assignment["id"])
    key = str(uuid.uuid4())
    first = client.post(submit_url, {}, format="json", HTTP_IDEMPOTENCY_KEY=key)
    again = client.post(submit_url, {}, format="json", HTTP_IDEMPOTENCY_KEY=key)
    assert first.status_code == again.status_code == 200
    assert first.json()["assignment"]["status"] == "submitted" and again.json()["replayed"] is True
    assert AnnotationEvent.objects.filter(assignment_id=assignment["id"], action="submit").count() == 1

    closed = client.post(answer_url, {"sentence": sentences[0]["id"], "step": "kind", "answer": "cognitive"},
                         format="json")
    assert closed.status_code == 409 and closed.json()["code"] == "assignment_closed"


def test_submitting_an_incomplete_turn_names_what_is_missing(world):
    client = token_client(world.users["annotator"])
    response = client.post(url("assignment-submit", world, pk=world.assignment.pk), {}, format="json")
    assert response.status_code == 400
    assert "2 of 3 sentences have no label yet" in response.json()["detail"]


def test_a_sentence_of_another_turn_is_a_field_error(world):
    client = token_client(world.users["annotator"])
    other = world.other_turn.sentences.first()
    response = client.post(url("assignment-answer", world, pk=world.assignment.pk),
                           {"sentence": other.pk, "step": "relevance", "answer": "relevant"}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == {"sentence": ["Not a sentence of this assignment's turn."]}


def test_annotators_never_read_gold_or_other_peoples_labels(world):
    annotator = world.users["annotator"]
    second = member(world.project, Role.ANNOTATOR, username="second")
    theirs = Assignment.objects.create(project=world.project, turn=world.other_turn, annotator=second)
    client = token_client(annotator)

    sentences = client.get(url("sentence-list", world)).json()["results"]
    assert sentences and all("gold_label" not in s and "agreement_state" not in s for s in sentences)
    refused = client.get(url("sentence-list", world), {"label": "faithful"})
    assert refused.status_code == 400 and set(refused.json()["errors"]) == {"label"}
    assert client.get(url("gold-list", world)).status_code == 404
    assert client.get(url("gold-export", world)).status_code == 404
    assert client.get(url("assignment-detail", world, pk=theirs.pk)).status_code == 404
    assert client.post(url("assignment-submit", world, pk=theirs.pk), {}, format="json").status_code == 404
    mine = client.get(url("assignment-list", world)).json()["results"]
    assert [a["id"] for a in mine] == [world.assignment.pk]
    labels = client.get(url("annotation-list", world)).json()["results"]
    assert {a["assignment"] for a in labels} == {world.assignment.pk}


def test_leads_filter_sentences_by_gold_label_and_agreement_state(world):
    client = token_client(world.users["lead"])
    by_label = client.get(url("sentence-list", world), {"label": "faithful"}).json()["results"]
    assert [s["id"] for s in by_label] == [world.gold.sentence_id]
    disputed = client.get(url("sentence-list", world), {"agreement_state": "disputed"}).json()["results"]
    assert [s["id"] for s in disputed] == [world.adjudication.sentence_id]
    assert disputed[0]["dialogue_external_id"] == world.turn.dialogue.external_id
    states = {s["id"]: s["agreement_state"] for s in client.get(url("sentence-list", world)).json()["results"]}
    assert states[world.gold.sentence_id] == "agreed"
    assert sorted(states.values()).count("pending") == 3  # the other turn
    by_topic = client.get(url("sentence-list", world), {"topic": "history"}).json()["results"]
    assert {s["turn"] for s in by_topic} == {world.other_turn.pk}


def test_cursor_pagination_walks_every_sentence_once(world):
    for _ in range(4):
        TurnFactory(dialogue__project=world.project)
    client = token_client(world.users["lead"])
    seen, next_url = [], url("sentence-list", world) + "?page_size=4"
    while next_url:
        page = client.get(next_url).json()
        seen += [s["id"] for s in page["results"]]
        next_url = page["next"]
    expected = list(Sentence.objects.filter(turn__dialogue__project=world.project).order_by("id")
                    .values_list("id", flat=True))
    assert seen == expected and len(seen) == 18


def test_errors_have_one_shape():
    anonymous = APIClient()
    response = anonymous.get(reverse("api:me"))
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"
    assert response.json() == {"status": 401, "code": "not_authenticated",
                               "detail": "Authentication credentials were not provided."}
    missing = anonymous.get("/api/v1/nothing/here/")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    assert missing["Content-Type"] == "application/json"


def test_invalid_fields_are_named(world):
    client = token_client(world.users["lead"])
    response = client.patch(url("project-detail", world), {"overlap": 0, "protocol_mode": "mixed"}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid"
    assert set(body["errors"]) == {"overlap", "protocol_mode"}


def test_token_login_use_and_revoke(world):
    anonymous = APIClient()
    wrong = anonymous.post(reverse("api:token"), {"username": "lea", "password": "nope"}, format="json")
    assert wrong.status_code == 400 and "Unable to log in" in wrong.json()["detail"]
    key = anonymous.post(reverse("api:token"), {"username": "lea", "password": DEFAULT_PASSWORD},
                         format="json").json()["token"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get(reverse("api:me")).json()["projects"] == [{"slug": "pilot", "name": "Pilot", "role": "lead"}]
    assert client.delete(reverse("api:token")).status_code == 204
    assert client.get(reverse("api:me")).status_code == 401


def test_token_page_creates_regenerates_and_revokes(client, world):
    user = world.users["annotator"]
    client.force_login(user)
    page = client.get(reverse("api:token-page"))
    assert b"You have no API token" in page.content and b"API token</a>" in page.content
    client.post(reverse("api:token-page"), {"action": "create"})
    first = Token.objects.get(user=user).key
    assert first.encode() in client.get(reverse("api:token-page")).content
    client.post(reverse("api:token-page"), {"action": "regenerate"})
    second = Token.objects.get(user=user).key
    assert second != first
    client.post(reverse("api:token-page"), {"action": "revoke"})
    assert not Token.objects.filter(user=user).exists()


def test_admin_lists_and_creates_tokens(client, world):
    admin = get_user_model().objects.create_superuser("root", "root@example.org", "pw-root-123")
    Token.objects.create(user=world.users["lead"])
    client.force_login(admin)
    listing = client.get(reverse("admin:authtoken_tokenproxy_changelist"))
    assert listing.status_code == 200 and b"lea" in listing.content


def test_token_clients_are_throttled_and_told_when_to_retry(world, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"token": "3/minute",
                                                                                    "login": "20/minute"}}
    client = token_client(world.users["lead"])
    statuses = [client.get(reverse("api:me")).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    refused = client.get(reverse("api:me"))
    assert refused.json()["code"] == "throttled" and refused.json()["retry_after"] > 0
    assert int(refused["Retry-After"]) > 0
    browser = APIClient()
    browser.force_login(world.users["lead"])
    assert all(browser.get(reverse("api:me")).status_code == 200 for _ in range(5))


def test_leads_manage_members_and_keep_a_lead(world):
    client = token_client(world.users["lead"])
    member_url = url("member-list", world)
    member(world.other_project, Role.ANNOTATOR, username="newbie")
    member(world.other_project, Role.LEAD, username=world.users["lead"].username)
    added = client.post(member_url, {"username": "newbie", "role": "annotator"}, format="json")
    assert added.status_code == 201 and added.json()["role"] == "annotator"
    unknown = client.post(member_url, {"username": "ghost"}, format="json")
    assert unknown.status_code == 400 and "Nobody you can add" in unknown.json()["errors"]["username"][0]
    lead_id = world.users["lead"].pk
    demote = client.patch(url("member-detail", world, user_id=lead_id), {"role": "annotator"}, format="json")
    assert demote.status_code == 400 and "at least one lead" in demote.json()["errors"]["role"][0]
    promoted = client.patch(url("member-detail", world, user_id=added.json()["user_id"]), {"role": "lead"},
                            format="json")
    assert promoted.json()["role"] == "lead"
    assert client.patch(url("member-detail", world, user_id=lead_id), {"role": "adjudicator"},
                         format="json").status_code == 200


def test_a_lead_changes_settings(world):
    client = token_client(world.users["lead"])
    response = client.patch(url("project-detail", world), {"overlap": 3, "error_types": ["contradiction"]},
                            format="json")
    assert response.status_code == 200 and response.json()["overlap"] == 3
    world.project.refresh_from_db()
    assert world.project.overlap == 3 and world.project.error_types == ["contradiction"]


def test_gold_export_streams_one_line_per_turn(world):
    client = token_client(world.users["lead"])
    response = client.get(url("gold-export", world))
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert len(lines) == 2
    bad = client.get(url("gold-export", world), {"fmt": "xml"})
    assert bad.status_code == 400 and set(bad.json()["errors"]) == {"fmt"}


def test_an_adjudicator_resolves_a_dispute_blind(world):
    client = token_client(world.users["adjudicator"])
    queue = client.get(url("adjudication-list", world)).json()["results"]
    assert [d["id"] for d in queue] == [world.adjudication.pk]
    assert all(a["annotator"] is None for d in queue for a in d["annotations"])
    response = client.post(url("adjudication-resolve", world, pk=world.adjudication.pk),
                           {"label": "speculative", "reason": "No source for the superlative."}, format="json")
    assert response.status_code == 200, response.json()
    gold = GoldLabel.objects.get(sentence=world.adjudication.sentence)
    assert gold.label == "speculative" and gold.provenance == GoldProvenance.ADJUDICATION
    again = client.post(url("adjudication-resolve", world, pk=world.adjudication.pk),
                        {"label": "reliable", "reason": "Changed my mind."}, format="json")
    assert again.status_code == 400 and "already been decided" in again.json()["detail"]
    no_reason = client.post(url("adjudication-resolve", world, pk=world.adjudication.pk), {"label": "reliable"},
                            format="json")
    assert no_reason.status_code == 400 and "reason" in no_reason.json()["errors"]


def test_agreement_report_has_the_reports_page_numbers(world):
    client = token_client(world.users["lead"])
    response = client.get(url("agreement-report", world))
    assert response.status_code == 200
    assert response.json() == json.loads(json.dumps(project_report(world.project)))


def test_questions_go_from_annotator_to_lead_and_back(world):
    annotator, lead = token_client(world.users["annotator"]), token_client(world.users["lead"])
    sentence = world.turn.sentences.first()
    asked = annotator.post(url("question-list", world), {
        "turn": world.turn.pk, "sentence": sentence.pk, "body": "Is this factual?",
        "path": {"relevance": "relevant"}}, format="json")
    assert asked.status_code == 201 and asked.json()["step"] == "kind"
    qid = asked.json()["id"]
    answered = lead.post(url("question-reply", world, pk=qid), {"body": "Yes: it restates the context."},
                         format="json")
    assert answered.status_code == 201 and answered.json()["status"] == "answered"
    thread = annotator.get(url("question-detail", world, pk=qid)).json()
    assert [m["body"] for m in thread["messages"]] == ["Is this factual?", "Yes: it restates the context."]
    other = token_client(member(world.project, Role.ANNOTATOR, username="nosy"))
    assert other.get(url("question-detail", world, pk=qid)).status_code == 404
    assert [q["id"] for q in other.get(url("question-list", world)).json()["results"]] == []


def test_feedback_reaches_its_annotator_who_acknowledges_it(world):
    world.assignment.status = Assignment.Status.SUBMITTED
    world.assignment.save()
    lead, annotator = token_client(world.users["lead"]), token_client(world.users["annotator"])
    given = lead.post(url("feedback-list", world), {"annotation": world.annotation.pk, "comment": "Good call.",
                                                    "expected_label": "faithful"}, format="json")
    assert given.status_code == 201
    pending = annotator.get(url("feedback-list", world), {"pending": "true"}).json()["results"]
    assert given.json()["id"] in [f["id"] for f in pending]
    acknowledged = annotator.post(url("feedback-acknowledge", world, pk=given.json()["id"]))
    assert acknowledged.status_code == 200 and acknowledged.json()["acknowledged_at"]


def test_a_lead_starts_and_cancels_an_autolabel_job(world):
    client = token_client(world.users["lead"])
    started = client.post(url("autolabel-job-list", world), {"profile": "baseline", "samples": 5, "threshold": 3},
                          format="json")
    assert started.status_code == 201
    job = started.json()
    assert job["status"] == "queued" and job["total_turns"] == 2 and job["percent"] == 0.0
    refused = client.post(url("autolabel-job-list", world), {"profile": "baseline", "samples": 3, "threshold": 4},
                          format="json")
    assert refused.status_code == 400 and "threshold must be between 1" in refused.json()["detail"]
    cancelled = client.post(url("autolabel-job-cancel", world, pk=job["id"]))
    assert cancelled.json()["status"] == "cancelled"
    assert client.get(url("autolabel-prediction-list", world, pk=job["id"])).json()["results"] == []


@pytest.mark.parametrize("page", ["api:swagger-ui", "api:redoc"])
def test_api_reference_pages_load_everything_from_our_static_files(client, page):
    import re

    assert client.get(reverse(page)).status_code in (401, 403)  # behind a login like every endpoint
    assert client.get(reverse("api:schema")).status_code in (401, 403)
    client.force_login(UserFactory())
    html = client.get(reverse(page)).content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert assets, "the page loads its viewer"
    for asset in assets:
        # Swagger UI's start-up script comes from the page's own URL (?script): no inline script (CSP).
        own_script = asset == reverse(page) + "?script="
        assert asset.startswith("/static/") or own_script, f"{asset} is not served by the app"
        response = client.get(asset)
        assert response.status_code == 200, asset
        if own_script:
            assert response["Content-Type"].startswith("application/javascript")
    assert "googleapis" not in html and "cdn" not in html.lower()


def test_text_with_a_nul_character_is_a_field_error_not_a_crash(world):
    client = token_client(world.users["lead"])
    response = client.post(url("autolabel-job-list", world), {"profile": "base\x00line"}, format="json")
    assert response.status_code == 400 and set(response.json()["errors"]) == {"profile"}
    filtered = client.get(url("sentence-list", world), {"topic": "sci\x00ence"})
    assert filtered.status_code == 400 and set(filtered.json()["errors"]) == {"topic"}


@pytest.mark.parametrize("fmt, media_type", [("", "application/vnd.oai.openapi"), ("json", "application/vnd.oai.openapi+json")])
def test_the_schema_is_rendered_once_per_format_and_served_the_same_to_everyone(client, monkeypatch, fmt, media_type):
    """The schema's bytes are kept per version and format (api.urls.SchemaView): the second user gets the same
    bytes, and the renderer is not run again."""
    from drf_spectacular import renderers

    from api.urls import SchemaView

    monkeypatch.setattr(SchemaView, "_rendered", {})
    renders = []
    for renderer in (renderers.OpenApiYamlRenderer, renderers.OpenApiJsonRenderer):
        original = renderer.render
        monkeypatch.setattr(renderer, "render", lambda self, *a, original=original, **k: renders.append(1) or
                            original(self, *a, **k))
    answers = []
    for user in (UserFactory(), UserFactory()):
        client.force_login(user)
        answers.append(client.get(reverse("api:schema") + (f"?format={fmt}" if fmt else "")))
    assert [a.status_code for a in answers] == [200, 200]
    assert answers[0].content == answers[1].content and b"/api/v1/projects/" in answers[0].content
    assert {a["Content-Type"].split(";")[0] for a in answers} == {media_type}
    assert answers[1]["Content-Disposition"].startswith("inline; filename=")
    assert len(renders) == 1
