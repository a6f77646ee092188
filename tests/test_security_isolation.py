"""Blindness and isolation, route by route.

An annotator who has not submitted a turn must not see, through any route
(page, htmx partial, API, export, report, admin), what another annotator
answered on it, its gold label or adjudication, or anything at all of a project
they are not a member of. The routes come from walking the URL conf
(tests/url_walk.py) and every integer parameter is tried with every id the
world below created, so a route added later is covered without being listed.

The secrets are free-text markers (notes, reasons, messages, names, texts) of
the objects the annotator must not see: a route that shows one of those
objects shows its marker.
"""

import json
import re

import pytest
from django.test import Client

from annotator import models
from annotator.domain import protocol
from annotator.corpus.exports.exporters import FORMATS
from annotator.domain.vocabulary import GoldProvenance, Label, Role
from tests.factories import AssignmentFactory, ProjectFactory, TurnFactory, UserFactory, member
from tests.url_walk import ids_by_parameter, ids_from_one, integer_like, urls

# Whole-route walks, a minute or two each: `slow` has tests/conftest.py start this module first.
pytestmark = [pytest.mark.django_db, pytest.mark.slow]

STR_VALUES = {
    "fmt": sorted(FORMATS),
    "table": ["agreement", "batches", "pairs", "weekly", "protocols"],
    "action": ["answer", "pick", "undo", "note", "evidence_add", "evidence_remove", "submit", "time"],
}


class World:
    pass


def label_sentences(assignment, label, note_marker=None, submitted=False):
    annotations = []
    for sentence in assignment.turn.sentences.order_by("index"):
        annotations.append(models.SentenceAnnotation.objects.create(
            assignment=assignment, sentence=sentence, label=label, path=protocol.path_for_label(label),
            note=f"{note_marker} {sentence.index}" if note_marker else "",
            justification=f"{note_marker}-JUSTIFICATION" if note_marker else "",
        ))
    if submitted:
        assignment.status = models.Assignment.Status.SUBMITTED
        assignment.save(update_fields=["status"])
    return annotations


def make_world():
    ids_from_one()
    w = World()
    w.project = ProjectFactory(slug="pilot", name="Pilot")
    w.other = ProjectFactory(slug="elsewhere", name="SECRET-Q-PROJECT-NAME", guidelines="SECRET-Q-GUIDELINES")
    w.viewer = member(w.project, Role.ANNOTATOR, username="viewer")
    w.peer = member(w.project, Role.ANNOTATOR, username="peer")
    w.lead = member(w.project, Role.LEAD, username="lead")
    member(w.project, Role.ADJUDICATOR, username="adjudicator")
    w.q_annotator = member(w.other, Role.ANNOTATOR, username="q-annotator")
    member(w.other, Role.LEAD, username="q-lead")
    UserFactory(username="root", is_staff=True, is_superuser=True)  # leads every project

    # The turn both the viewer and the peer hold: the viewer is half way, the peer has submitted.
    w.turn = TurnFactory(dialogue__project=w.project)
    w.viewer_assignment = AssignmentFactory(turn=w.turn, annotator=w.viewer, status=models.Assignment.Status.IN_PROGRESS)
    first = w.turn.sentences.order_by("index").first()
    models.SentenceAnnotation.objects.create(
        assignment=w.viewer_assignment, sentence=first, path={"relevance": "relevant"}, label="",
        note="the viewer's own note")
    w.peer2 = member(w.project, Role.ANNOTATOR, username="peer2")
    w.project.overlap = 3
    w.project.save(update_fields=["overlap"])
    w.peer2_assignment = AssignmentFactory(turn=w.turn, annotator=w.peer2, status=models.Assignment.Status.IN_PROGRESS)
    label_sentences(w.peer2_assignment, Label.UNEQUIVOCAL, "SECRET-PEER2-NOTE")
    w.peer_assignment = AssignmentFactory(turn=w.turn, annotator=w.peer)
    peer_annotations = label_sentences(w.peer_assignment, Label.UNEQUIVOCAL, "SECRET-PEER-NOTE", submitted=True)
    models.EvidenceSpan.objects.create(annotation=peer_annotations[0], start=0, end=5, text="SECRET-PEER-EVIDENCE")
    # Gold and an adjudication on the viewer's turn (imported gold, a dispute), with their reasons.
    models.GoldLabel.objects.create(sentence=first, label=Label.MISLEADING, provenance=GoldProvenance.IMPORTED,
                                    path=protocol.path_for_label(Label.MISLEADING), reason="SECRET-GOLD-REASON")
    models.GoldEvent.objects.create(sentence=first, new_label=Label.MISLEADING, provenance=GoldProvenance.IMPORTED,
                                    reason="SECRET-GOLD-EVENT")
    second = w.turn.sentences.order_by("index")[1]
    models.Adjudication.objects.create(sentence=second, turn=w.turn, reason="SECRET-ADJUDICATION-REASON")
    # The peer's question and the feedback the peer got.
    question = models.Question.objects.create(project=w.project, turn=w.turn, sentence=first, asked_by=w.peer)
    models.QuestionMessage.objects.create(question=question, author=w.peer, body="SECRET-PEER-QUESTION")
    models.Feedback.objects.create(project=w.project, annotation=peer_annotations[0], lead=w.lead,
                                   expected_label=Label.FAITHFUL, comment="SECRET-PEER-FEEDBACK")
    models.QualificationResult.objects.create(project=w.project, annotator=w.peer, correct=1, total=9,
                                              details={"SECRET-PEER-QUALIFICATION": 1}
                                              if hasattr(models.QualificationResult, "details") else {})

    # A project the viewer is not a member of, with everything in it.
    batch = models.ImportBatch.objects.create(project=w.other, kind=models.ImportBatch.Kind.JSONL,
                                              filename="SECRET-Q-FILE.jsonl", status=models.ImportBatch.Status.DONE)
    q_turn = TurnFactory(
        dialogue__project=w.other, dialogue__batch=batch, dialogue__reference="SECRET-Q-REFERENCE",
        dialogue__external_id="SECRET-Q-DIALOGUE", user_message="SECRET-Q-USER-MESSAGE",
        sentences=["SECRET-Q-SENTENCE one.", "SECRET-Q-SENTENCE two."],
    )
    q_assignment = AssignmentFactory(turn=q_turn, annotator=w.q_annotator)
    q_annotations = label_sentences(q_assignment, Label.SPECULATIVE, "SECRET-Q-NOTE", submitted=True)
    models.GoldLabel.objects.create(sentence=q_annotations[0].sentence, label=Label.SPECULATIVE,
                                    provenance=GoldProvenance.IMPORTED, reason="SECRET-Q-GOLD")
    q_question = models.Question.objects.create(project=w.other, turn=q_turn, asked_by=w.q_annotator)
    models.QuestionMessage.objects.create(question=q_question, author=w.q_annotator, body="SECRET-Q-QUESTION")
    models.GuidelineExample.objects.create(project=w.other, step="relevance", text="SECRET-Q-EXAMPLE")
    # More turns in the viewer's project, so that ids of every table overlap.
    for _ in range(2):
        TurnFactory(dialogue__project=w.project)
    return w


MARKERS = [
    "SECRET-PEER-NOTE", "SECRET-PEER-JUSTIFICATION", "SECRET-PEER-EVIDENCE", "SECRET-GOLD-REASON",
    "SECRET-GOLD-EVENT", "SECRET-ADJUDICATION-REASON", "SECRET-PEER-QUESTION", "SECRET-PEER-FEEDBACK",
    "SECRET-PEER-QUALIFICATION", "SECRET-PEER2-NOTE", "SECRET-PEER2-JUSTIFICATION",
    "SECRET-Q-PROJECT-NAME", "SECRET-Q-GUIDELINES", "SECRET-Q-FILE", "SECRET-Q-REFERENCE", "SECRET-Q-DIALOGUE",
    "SECRET-Q-USER-MESSAGE", "SECRET-Q-SENTENCE", "SECRET-Q-NOTE", "SECRET-Q-GOLD", "SECRET-Q-QUESTION",
    "SECRET-Q-EXAMPLE", "elsewhere", "q-annotator", "q-lead",
]


def existing_ids():
    """Every id some object of the world has: each id slot of each route is tried with all of them.

    Not range(1, max id): PostgreSQL's sequences keep counting across the whole test session, so the
    largest id grows with every test that ran before, and the walk with it."""
    tables = [models.Project, models.Dialogue, models.Turn, models.Sentence, models.Assignment,
              models.SentenceAnnotation, models.GoldLabel, models.Adjudication, models.Question,
              models.Feedback, models.ImportBatch, models.QualificationResult, models.EvidenceSpan,
              models.GuidelineExample, models.Membership]
    from django.contrib.auth import get_user_model

    tables.append(get_user_model())
    return sorted(set().union(*(m.objects.values_list("pk", flat=True) for m in tables)))


def values_for_world(world):
    pooled = existing_ids()
    named = ids_by_parameter(pooled)

    def values_for(name, converter):
        if integer_like(converter):
            return named.get(name, pooled)
        if name == "slug":
            return [world.project.slug, world.other.slug]
        if name in STR_VALUES:
            return STR_VALUES[name]
        if converter.startswith("regex:") or converter in ("str", "path"):
            return None if converter.startswith("regex:") else ["x"]
        return ["x"]

    return values_for


def body_of(response):
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode("utf-8", "replace")
    return response.content.decode("utf-8", "replace")


def leaks(text):
    return [marker for marker in MARKERS if marker in text]


def snapshot():
    """What the viewer must never change: the peer's answers, gold, adjudications, the other project."""
    return json.dumps({
        "annotations": list(models.SentenceAnnotation.objects.exclude(assignment__annotator__username="viewer")
                            .order_by("pk").values("pk", "label", "path", "note")),
        "assignments": list(models.Assignment.objects.exclude(annotator__username="viewer")
                            .order_by("pk").values("pk", "status", "annotator_id", "version")),
        "gold": list(models.GoldLabel.objects.order_by("pk").values("pk", "label", "reason")),
        "adjudications": list(models.Adjudication.objects.order_by("pk").values("pk", "status", "label")),
        "questions": list(models.Question.objects.order_by("pk").values("pk", "status")),
        "feedback": list(models.Feedback.objects.order_by("pk").values("pk", "acknowledged_at")),
        "qualification": list(models.QualificationResult.objects.order_by("pk").values("pk", "retry_allowed")),
        "memberships": list(models.Membership.objects.order_by("pk").values("pk", "role")),
        "projects": list(models.Project.objects.order_by("pk").values()),
    }, sort_keys=True, default=str)


@pytest.fixture
def world():
    from django.core.cache import cache

    cache.clear()
    return make_world()


def test_the_markers_are_shown_to_those_allowed_to_see_them(world):
    """The check below can fail: walking the same routes as a superuser (who sees everything) shows the markers."""
    client = Client()
    client.force_login(models.Membership.objects.none().model.user.field.related_model.objects.get(username="root"))
    awaited = {"SECRET-PEER-NOTE", "SECRET-PEER-QUESTION", "SECRET-Q-SENTENCE", "SECRET-Q-PROJECT-NAME",
               "SECRET-Q-REFERENCE", "SECRET-Q-NOTE", "SECRET-Q-FILE"}
    seen = set()
    for route, url in urls(values_for_world(world)):
        if route.name in ("logout",) or route.is_admin:
            continue
        seen.update(leaks(body_of(client.get(url))))
        if awaited <= seen:
            break  # shown once is all this test proves: the rest of the walk (a minute and more) adds nothing
    for marker in sorted(awaited):
        assert marker in seen, f"no route shows {marker} even to a superuser: the marker proves nothing"


def test_no_route_shows_an_annotator_what_they_must_not_see(world):
    client = Client()
    client.force_login(world.viewer)
    before = snapshot()
    found = []
    requests = 0
    walked = urls(values_for_world(world))
    # Reads first (page and htmx partial), then writes with an empty body, then reads again.
    for method, headers in (("get", {}), ("get", {"HTTP_HX_REQUEST": "true"}), ("post", {"HTTP_HX_REQUEST": "true"}),
                            ("get", {})):
        for route, url in walked:
            if route.name in ("logout", "login", "admin:logout"):
                continue
            response = getattr(client, method)(url, **headers)
            requests += 1
            text = body_of(response) + " ".join(f"{k}: {v}" for k, v in response.items())
            for marker in leaks(text):
                found.append(f"{method.upper()} {url} ({route.name}) -> {response.status_code} shows {marker}")
    assert requests > 500
    assert not found, "\n".join(found[:40])
    assert snapshot() == before, "a request of the viewer changed another person's data"


def test_another_projects_annotator_sees_nothing_of_this_project_through_the_api(world, settings):
    """The API with a token: the other project's annotator gets 404 on every object of this project."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    # Hundreds of requests with one token: the per-token budget (tested in test_api_throttling) is not what
    # this walk is about, so it is lifted here.
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {**rest["DEFAULT_THROTTLE_RATES"], "token": None}
    settings.REST_FRAMEWORK = rest
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=world.q_annotator)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    for route, url in urls(values_for_world(world)):
        if not route.is_api or f"/{world.project.slug}/" not in url:
            continue
        response = client.get(url)
        assert response.status_code == 404, f"{url}: {response.status_code}"
    listed = client.get("/api/v1/projects/").json()
    assert world.project.slug not in json.dumps(listed)


CSRF_VALUE = re.compile(r"\b[A-Za-z0-9]{64}\b")  # a masked CSRF token, new on every page


# Relative times ("3 minutes ago") tick between the two walks; they say nothing about labels.
RELATIVE_TIME = re.compile(r"\d+[\s\xa0]+(second|minute|hour|day|week|month|year)s?")
CLOCK_TIME = re.compile(r"\b\d{1,2}:\d{2}(:\d{2})?\b")


def normalised(text):
    return CLOCK_TIME.sub("…", RELATIVE_TIME.sub("…", CSRF_VALUE.sub("…", text)))


def flip_labels(world, label, gold_label):
    """Change what the others answered and what gold says, nothing else (no timestamps, no versions)."""
    path = protocol.path_for_label(label)
    models.SentenceAnnotation.objects.exclude(assignment__annotator=world.viewer).update(label=label, path=path)
    models.GoldLabel.objects.update(label=gold_label, path=protocol.path_for_label(gold_label))
    models.Adjudication.objects.update(label=gold_label, path=protocol.path_for_label(gold_label))
    models.Feedback.objects.update(expected_label=gold_label)


def test_no_route_reveals_the_labels_of_others_or_gold_to_an_annotator(world):
    """Differential check: every page, partial and API answer the viewer gets is the same whatever the others
    answered and whatever gold says; a route that showed a label of theirs would differ."""
    client = Client()
    client.force_login(world.viewer)
    walked = [(r, u) for r, u in urls(values_for_world(world)) if r.name not in ("logout", "login")]

    def walk():
        pages = {}
        for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
            for route, url in walked:
                response = client.get(url, **headers)
                pages[(url, bool(headers))] = (response.status_code, normalised(body_of(response)))
        return pages

    flip_labels(world, Label.UNEQUIVOCAL, Label.MISLEADING)
    first = walk()
    flip_labels(world, Label.IRRELEVANT, Label.INVENTED)
    second = walk()
    differing = [f"GET {url}{' (htmx)' if htmx else ''}" for (url, htmx) in first if first[(url, htmx)] != second[(url, htmx)]]
    assert len(first) > 500
    assert not differing, "these routes show the viewer what others answered or what gold says:\n" + "\n".join(differing[:40])
