"""Blind means blind on every route, for whoever holds an unsubmitted slot, and for imported data.

Issue #14, items 3, 4 and 5:

- a JSONL re-import keeps the imported annotations (annotator, label, note, evidence),
  adjudications and ``decided_by`` in the turn's metadata: data for leads only;
- CogniBench's own relevance marks (``current_turn_processed`` with ``<irrelevant>``,
  ``num_irrelevant``) are in the turn's metadata too: leads only;
- an adjudicator (or a lead, or a superuser) who takes an annotation slot is as blind
  on that turn as an annotator until they submit, on every route, and never
  adjudicates it; adjudicators take slots only where the project allows it.

The routes come from walking the URL conf (tests/url_walk.py), so a route added
later is covered without being listed here.
"""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotator import models
from annotator.domain.protocol import path_for_label
from annotator.domain.vocabulary import GoldProvenance, Label, Role
from tests.conftest import SHARED_DATA
from tests.factories import AssignmentFactory, ProjectFactory, TurnFactory, UserFactory, member
from tests.test_security_isolation import (
    MARKERS,
    body_of,
    flip_labels,
    make_world,
    normalised,
)
from tests.url_walk import ids_by_parameter, ids_from_one, integer_like, urls

# Whole-route walks, up to a minute each: `slow` has tests/conftest.py start this module first.
pytestmark = [pytest.mark.django_db, pytest.mark.slow]

STR_VALUES = {
    "fmt": ["jsonl", "cognibench"],
    "table": ["agreement", "batches", "pairs", "weekly", "protocols"],
    "action": ["answer", "pick", "undo", "note", "evidence_add", "evidence_remove", "submit", "time"],
}


@pytest.fixture(autouse=True)
def fast(settings):
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {**rest["DEFAULT_THROTTLE_RATES"], "token": None, "user": None}
    settings.REST_FRAMEWORK = rest
    from django.core.cache import cache

    cache.clear()


def run(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def walk_as(user, slugs, *, htmx_too=True, skip_admin=False, until_seen=()):
    """{(url, htmx): (status, body)} of a GET of every route, every id of the test's objects, as ``user``.

    ``until_seen``: the walk stops once every one of these markers has been shown (the tests proving that a
    walk can fail need only that: walking on would cost a minute each and prove nothing more)."""
    awaited = set(until_seen)
    pooled = sorted(set().union(*(m.objects.values_list("pk", flat=True) for m in (
        models.Project, models.Dialogue, models.Turn, models.Sentence, models.Assignment, models.SentenceAnnotation,
        models.GoldLabel, models.Adjudication, models.ImportBatch))))
    named = ids_by_parameter(pooled)

    def values_for(name, converter):
        if integer_like(converter):
            return named.get(name, pooled)
        if name == "slug":
            return slugs
        if name in STR_VALUES:
            return STR_VALUES[name]
        return None if converter.startswith("regex:") else ["x"]

    client = Client()
    client.force_login(user)
    pages = {}
    for route, url in urls(values_for):
        if route.name in ("logout", "login", "admin:logout") or (skip_admin and route.is_admin):
            continue
        for htmx in ((False, True) if htmx_too else (False,)):
            response = client.get(url, **({"HTTP_HX_REQUEST": "true"} if htmx else {}))
            pages[(url, htmx)] = answer = (response.status_code, body_of(response))
            if awaited:
                awaited -= {marker for marker in awaited if marker in answer[1]}
                if not awaited:
                    return pages
    return pages


def found(pages, markers):
    return [f"GET {url}{' (htmx)' if htmx else ''} -> {status} shows {marker}"
            for (url, htmx), (status, body) in pages.items() for marker in markers if marker in body]


# --- 3. a JSONL re-import: the imported annotations are data for leads only ------------------------

IMPORTED_MARKERS = ["SECRET-IMPORTED-NOTE", "secret-annotator-a", "secret-annotator-b",
                    "SECRET-IMPORTED-ADJUDICATION", "secret-decider", "SECRET-IMPORTED-EVIDENCE"]


def _reimported_project(tmp_path):
    """A project exported as JSONL with two annotators' work, an adjudication and gold, imported into ``copy``."""
    ids_from_one()
    source = ProjectFactory(slug="source")
    decider = member(source, Role.LEAD, username="secret-decider")
    turn = TurnFactory(dialogue__project=source, dialogue__external_id="d-1", index=0,
                       sentences=["The Amazon flows through Brazil.", "It is surely the best river.", "Hi!"])
    s0, s1, _ = turn.sentences.order_by("index")
    for name, label in (("secret-annotator-a", Label.FAITHFUL), ("secret-annotator-b", Label.INVENTED)):
        assignment = AssignmentFactory(turn=turn, project=source, annotator=member(source, username=name),
                                       status=models.Assignment.Status.SUBMITTED)
        annotation = models.SentenceAnnotation.objects.create(
            assignment=assignment, sentence=s0, label=label, path=path_for_label(label), note="SECRET-IMPORTED-NOTE")
        models.EvidenceSpan.objects.create(annotation=annotation, start=0, end=10, text="SECRET-IMPORTED-EVIDENCE")
    models.GoldLabel.objects.create(sentence=s1, label=Label.SPECULATIVE, path=path_for_label(Label.SPECULATIVE),
                                    provenance=GoldProvenance.ADJUDICATION, reason="SECRET-IMPORTED-ADJUDICATION",
                                    decided_by=decider)
    models.Adjudication.objects.create(
        sentence=s1, turn=turn, status=models.Adjudication.Status.RESOLVED, adjudicator=decider,
        label=Label.SPECULATIVE, path=path_for_label(Label.SPECULATIVE), reason="SECRET-IMPORTED-ADJUDICATION",
        resolved_at=timezone.now())
    exported = tmp_path / "gold.jsonl"
    run("export_gold", "--project", "source", "--format", "jsonl", "--out", str(exported))
    models.Project.objects.filter(slug="source").delete()  # only the copy is left: whatever shows a marker shows the import
    copy = ProjectFactory(slug="copy")
    run("import_jsonl", "--project", "copy", str(exported))
    return copy


def test_a_reimport_keeps_the_imported_annotations_for_leads(tmp_path):
    """The markers can be seen: a lead reads the imported annotations in the turn's metadata."""
    copy = _reimported_project(tmp_path)
    lead = member(copy, Role.LEAD, username="copy-lead")
    client = APIClient()
    client.force_authenticate(lead)
    turns = json.dumps(client.get(f"/api/v1/projects/{copy.slug}/turns/").json())
    for marker in IMPORTED_MARKERS:
        assert marker in turns


def test_no_route_gives_an_annotator_the_imported_annotations(tmp_path):
    copy = _reimported_project(tmp_path)
    annotator = member(copy, Role.ANNOTATOR, username="copy-annotator")
    api = APIClient()
    api.force_authenticate(annotator)
    # The holder's own assignment (its turn_detail) and every corpus endpoint, through the API.
    taken = api.post(f"/api/v1/projects/{copy.slug}/assignments/next/")
    # The imported turn (of dialogue "d-1"), named to the annotator by its id only (issue 22 item 2).
    assert taken.status_code == 200 and taken.json()["turn"] == models.Turn.objects.get(dialogue__project=copy).pk
    assert taken.json()["turn_detail"]["dialogue_external_id"] is None
    assignment = taken.json()["id"]
    answers = [json.dumps(taken.json())]
    for path in ("turns/", "dialogues/", f"assignments/{assignment}/", "sentences/", "annotations/"):
        response = api.get(f"/api/v1/projects/{copy.slug}/{path}")
        assert response.status_code == 200, path
        answers.append(json.dumps(response.json()))
    turn_id = taken.json()["turn"]
    answers.append(json.dumps(api.get(f"/api/v1/projects/{copy.slug}/turns/{turn_id}/").json()))
    leaked = [marker for marker in IMPORTED_MARKERS for answer in answers if marker in answer]
    assert not leaked, leaked
    # Every page and partial too.
    assert not found(walk_as(annotator, [copy.slug], skip_admin=True), IMPORTED_MARKERS)


def test_a_metadata_key_meant_for_annotators_is_kept_by_the_allow_list():
    """The allow-list is the one place that opens a key to annotators: triplet provenance is such a key."""
    from annotator.access import ANNOTATOR_METADATA, metadata_access

    project = ProjectFactory()
    lead = member(project, Role.LEAD)
    metadata = {"kg_field": "kg_claude2", "extractor": "claude2", "_imported_annotations": ["SECRET"]}
    assert ANNOTATOR_METADATA.visible("triplet", metadata) == {"kg_field": "kg_claude2", "extractor": "claude2"}
    assert metadata_access(lead, project).visible("triplet", metadata) == metadata


# --- 5. CogniBench's relevance marks: leads only -----------------------------------------------------

COGNIBENCH_MARKERS = ["<irrelevant>", "&lt;irrelevant&gt;", "\\u003cirrelevant\\u003e", "current_turn_processed",
                      "num_irrelevant"]


def test_cognibench_relevance_marks_reach_leads_only():
    project = ProjectFactory(slug="cb")
    cb = SHARED_DATA / "cognibench-sample"
    run("import_cognibench", "--project", "cb", str(cb / "dialogues.json"), str(cb / "labels.json"))
    marked = next((t for t in models.Turn.objects.filter(dialogue__project=project).order_by("pk")
                   if "<irrelevant>" in str(t.metadata.get("current_turn_processed", ""))), None)
    assert marked is not None, "the sample has no marked turn: the test would prove nothing"
    lead, annotator = member(project, Role.LEAD), member(project, Role.ANNOTATOR)
    url = f"/api/v1/projects/cb/turns/{marked.pk}/"
    as_lead, as_annotator = APIClient(), APIClient()
    as_lead.force_authenticate(lead)
    as_annotator.force_authenticate(annotator)
    lead_view = as_lead.get(url).json()
    assert "<irrelevant>" in lead_view["metadata"]["current_turn_processed"] and "num_irrelevant" in lead_view["metadata"]
    # The annotator: the turn and dialogue endpoints, the turn list (all of its pages), and the dialogue.
    answers = [as_annotator.get(url).content.decode(),
               as_annotator.get(f"/api/v1/projects/cb/dialogues/{marked.dialogue_id}/").content.decode()]
    next_url = "/api/v1/projects/cb/turns/"
    while next_url:
        page = as_annotator.get(next_url)
        answers.append(page.content.decode())
        next_url = page.json().get("next")
    assert json.loads(answers[0])["metadata"] == {}
    leaked = [marker for marker in COGNIBENCH_MARKERS for answer in answers if marker in answer]
    assert not leaked, leaked


# --- 4. whoever holds an unsubmitted slot is blind on its turn ------------------------------------------

# The world's secrets that sit on the shared turn (or in another project): none may reach the slot holder.
ON_THE_TURN = ["SECRET-PEER-NOTE", "SECRET-PEER-JUSTIFICATION", "SECRET-PEER-EVIDENCE", "SECRET-GOLD-REASON",
               "SECRET-GOLD-EVENT", "SECRET-ADJUDICATION-REASON", "SECRET-PEER-QUESTION", "SECRET-PEER-FEEDBACK",
               "SECRET-PEER2-NOTE", "SECRET-PEER2-JUSTIFICATION"]
assert set(ON_THE_TURN) <= set(MARKERS)


def _holder(world, role):
    if role == "adjudicator":
        return models.Membership.objects.get(project=world.project, role=Role.ADJUDICATOR).user
    if role == "lead":
        return world.lead
    return UserFactory(username="root", is_staff=True, is_superuser=True)


def _take_the_viewers_slot(world, holder):
    """The project lets adjudicators annotate, the lead releases the viewer's slot on the shared turn (API), and
    ``holder`` takes it with the queue's Start button: the oldest turn with an open slot is that one."""
    world.project.adjudicators_may_annotate = True  # the setting's own test changes it through the API
    world.project.save(update_fields=["adjudicators_may_annotate"])
    lead = APIClient()
    lead.force_authenticate(world.lead)
    base = f"/api/v1/projects/{world.project.slug}"
    assert lead.post(f"{base}/assignments/{world.viewer_assignment.pk}/release/", {}, format="json").status_code == 200
    client = Client()
    client.force_login(holder)
    response = client.post(reverse("workspace_next", args=[world.project.slug]))
    assert response.status_code == 302
    held = models.Assignment.objects.get(annotator=holder, turn=world.turn)
    assert response["Location"] == reverse("annotate", args=[held.pk])
    return held


@pytest.mark.parametrize("role", ["adjudicator", "lead", "superuser"])
def test_no_route_shows_a_slot_holder_the_others_work_or_gold_on_that_turn(role):
    world = make_world()
    holder = _holder(world, role)
    _take_the_viewers_slot(world, holder)
    # Pages and htmx partials for the adjudicator; pages only for the others (the partials are the same views).
    pages = walk_as(holder, [world.project.slug, world.other.slug], htmx_too=role == "adjudicator")
    leaks = found(pages, ON_THE_TURN)
    assert not leaks, "\n".join(leaks[:40])


def test_the_same_walk_shows_the_markers_once_the_holder_has_submitted():
    """The walk above can fail: a lead who is not blind on the turn reads its gold, notes and disputes."""
    world = make_world()
    shown = {"SECRET-PEER-NOTE", "SECRET-GOLD-REASON", "SECRET-ADJUDICATION-REASON", "SECRET-PEER-QUESTION"}
    pages = walk_as(world.lead, [world.project.slug], htmx_too=False, skip_admin=True, until_seen=shown)
    seen = {marker for marker in ON_THE_TURN if found(pages, [marker])}
    assert shown <= seen


@pytest.mark.parametrize("role", ["adjudicator", "lead"])
def test_no_route_differs_for_a_slot_holder_whatever_the_others_answered(role):
    """Differential: every page, partial and API answer the holder gets is the same whatever the others and gold say."""
    world = make_world()
    holder = _holder(world, role)
    _take_the_viewers_slot(world, holder)
    flip_labels(world, Label.UNEQUIVOCAL, Label.MISLEADING)
    first = walk_as(holder, [world.project.slug], htmx_too=False, skip_admin=True)
    flip_labels(world, Label.IRRELEVANT, Label.INVENTED)
    second = walk_as(holder, [world.project.slug], htmx_too=False, skip_admin=True)
    differing = [f"GET {url}{' (htmx)' if htmx else ''}" for (url, htmx), (status, body) in first.items()
                 if (status, normalised(body)) != (second[(url, htmx)][0], normalised(second[(url, htmx)][1]))]
    assert not differing, "these routes show the slot holder what others answered or gold says:\n" + "\n".join(differing[:40])


def test_a_slot_holder_never_adjudicates_the_turn_nor_sees_its_dispute_in_the_refusal():
    world = make_world()
    holder = _holder(world, "adjudicator")
    _take_the_viewers_slot(world, holder)
    adjudication = models.Adjudication.objects.get(turn=world.turn)
    # Someone else's answers on the dispute, which the refusal must not show.
    for peer in (world.peer, world.peer2):
        models.SentenceAnnotation.objects.filter(assignment__annotator=peer, sentence=adjudication.sentence).update(
            note="SECRET-SIDE-NOTE", label=Label.SPECULATIVE)
    client = Client()
    client.force_login(holder)
    slug = world.project.slug
    walked = json.dumps({"relevance": "relevant", "kind": "factual", "faithfulness": "faithful"})
    resolve_url = reverse("gold_resolve", args=[slug, adjudication.pk])
    for url, data in ((resolve_url, {"decision": "protocol", "path": walked, "reason": "x"}),
                      (resolve_url, {"decision": "protocol", "reason": "x"})):
        for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
            response = client.post(url, data, **headers)
            assert response.status_code == 403, url
            assert "someone else must adjudicate" in body_of(response)
            assert "speculative" not in body_of(response).lower() and "SECRET" not in body_of(response)
    adjudication.refresh_from_db()
    assert adjudication.status == models.Adjudication.Status.OPEN and adjudication.path == {}
    api = APIClient()
    api.force_authenticate(holder)
    resolve = api.post(f"/api/v1/projects/{slug}/adjudications/{adjudication.pk}/resolve/",
                       {"label": "faithful", "reason": "mine"}, format="json")
    assert resolve.status_code == 404


def test_an_export_by_a_slot_holder_is_refused_with_a_clear_message():
    world = make_world()
    _take_the_viewers_slot(world, world.lead)
    client = Client()
    client.force_login(world.lead)
    api = APIClient()
    api.force_authenticate(world.lead)
    for fmt in ("jsonl", "csv"):  # every format: the gold CSV as the JSONL
        response = client.get(reverse("project_export", args=[world.project.slug, fmt]), follow=True)
        assert response.redirect_chain and response.redirect_chain[-1][0] == reverse("project_detail", args=[world.project.slug])
        assert "unsubmitted annotation slot" in response.content.decode()
        assert "SECRET" not in response.content.decode()
        started = client.post(reverse("export_job_start", args=[world.project.slug, fmt]), follow=True)
        assert "unsubmitted annotation slot" in started.content.decode() and not models.ExportJob.objects.exists()
        refused = api.get(f"/api/v1/projects/{world.project.slug}/gold/export/?fmt={fmt}")
        assert refused.status_code == 403 and "unsubmitted annotation slot" in refused.json()["detail"]
    # Submitted (here: released by another lead), the export is the lead's again.
    models.Assignment.objects.filter(annotator=world.lead).update(status=models.Assignment.Status.RELEASED)
    assert api.get(f"/api/v1/projects/{world.project.slug}/gold/export/").status_code == 200


# --- the project setting: may adjudicators take slots? ------------------------------------------------

def test_adjudicators_take_no_slot_unless_the_project_allows_it():
    project = ProjectFactory(slug="setting")
    TurnFactory(dialogue__project=project)
    adjudicator, lead = member(project, Role.ADJUDICATOR), member(project, Role.LEAD)
    api = APIClient()
    api.force_authenticate(adjudicator)
    refused = api.post("/api/v1/projects/setting/assignments/next/")
    assert refused.status_code == 403 and "adjudicators may annotate" in refused.json()["detail"]
    client = Client()
    client.force_login(adjudicator)
    page = client.post(reverse("workspace_next", args=["setting"]), follow=True)
    assert "adjudicators may annotate" in page.content.decode()
    assert not models.Assignment.objects.filter(annotator=adjudicator).exists()
    # The setting is shown to members and changed by a lead.
    api.force_authenticate(lead)
    assert api.get("/api/v1/projects/setting/").json()["adjudicators_may_annotate"] is False
    assert api.patch("/api/v1/projects/setting/", {"adjudicators_may_annotate": True}, format="json").status_code == 200
    api.force_authenticate(adjudicator)
    assert api.post("/api/v1/projects/setting/assignments/next/").status_code == 200
    assert models.Assignment.objects.filter(annotator=adjudicator).count() == 1


def test_the_setting_is_in_the_admin_project_form():
    project = ProjectFactory(slug="admin-setting")
    client = Client()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    page = client.get(reverse("admin:annotator_project_change", args=[project.pk]))
    assert 'name="adjudicators_may_annotate"' in page.content.decode()
