"""No record id of the source reaches an annotator or an adjudicator (issue 22, item 2).

CogniBench's public release keys its labels by the record id (``labels.json["4183_en_3"]``): whoever reads a
turn's record id while re-annotating the benchmark can look its answers up. Annotators and adjudicators see a
neutral name (``Turn <pk>``) on every page, partial and API answer; leads keep the source ids.

The world is a real CogniBench import (four records of the shared sample, same files, same shape), with work on
it in every state an annotator or adjudicator can see: a dispute, a slot half done, a qualification attempt
with its score, a question and feedback. The walk is the URL conf's (tests/url_walk.py): every route, every id.
"""

import json

import pytest
from django.test import Client
from rest_framework.test import APIClient

from annotator import models
from annotator.domain.protocol import path_for_label
from annotator.domain.vocabulary import Label, Role
from annotator.gold.derivation import gold_derive_for_turn
from annotator.qa.qualification import qualification_assignment_next, qualification_score_attempt, qualification_set
from tests.conftest import SHARED_DATA
from tests.factories import AssignmentFactory, ProjectFactory, member
from tests.factories_gold import submit
from tests.factories_qa import finish
from tests.test_security_blindness import found, run, walk_as
from tests.url_walk import ids_from_one

# Whole-route walks, up to a minute each: `slow` has tests/conftest.py start this module first.
pytestmark = [pytest.mark.django_db, pytest.mark.slow]

# Four records of the shared sample with short responses; the last has no entry in labels.json (no gold).
RECORDS = ["21184_en_3", "7335_en_1", "8774_en_2", "6999_en_2"]


@pytest.fixture(autouse=True)
def fast(settings):
    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {**rest["DEFAULT_THROTTLE_RATES"], "token": None, "user": None}
    settings.REST_FRAMEWORK = rest
    from django.core.cache import cache

    cache.clear()


def cognibench_subset(tmp_path):
    """dialogues.json and labels.json of the chosen records, exactly as the public release writes them."""
    source = SHARED_DATA / "cognibench-sample"
    dialogues = [r for r in json.loads((source / "dialogues.json").read_text()) if r["id"] in RECORDS]
    labels = {k: v for k, v in json.loads((source / "labels.json").read_text()).items() if k in RECORDS}
    assert len(dialogues) == len(RECORDS) and set(labels) == set(RECORDS[:3])
    (tmp_path / "dialogues.json").write_text(json.dumps(dialogues))
    (tmp_path / "labels.json").write_text(json.dumps(labels))
    return tmp_path / "dialogues.json", tmp_path / "labels.json"


class World:
    pass


def record_id_world(tmp_path):
    ids_from_one()
    w = World()
    w.project = ProjectFactory(slug="cb", name="CogniBench re-annotation")
    run("import_cognibench", "--project", "cb", *map(str, cognibench_subset(tmp_path)))
    turns = {t.external_id: t for t in models.Turn.objects.filter(dialogue__project=w.project).select_related("dialogue")}
    assert set(turns) == set(RECORDS)
    w.record_ids = sorted({*turns, *(t.dialogue.external_id for t in turns.values())}, key=len, reverse=True)
    w.annotator = member(w.project, Role.ANNOTATOR, username="ann")
    w.peer = member(w.project, Role.ANNOTATOR, username="peer")
    w.adjudicator = member(w.project, Role.ADJUDICATOR, username="adj")
    w.lead = member(w.project, Role.LEAD, username="lead")

    # A qualification attempt, scored: its page names the turns it was scored on.
    qualification_set(project=w.project, actor=w.lead, turn_ids=[turns["21184_en_3"].pk], pass_mark=0.1)
    for user in (w.annotator, w.peer):
        attempt = qualification_assignment_next(w.project, user)
        finish(attempt, [Label.FAITHFUL] * attempt.turn.sentences.count())
        qualification_score_attempt(w.project, user)

    # A dispute on the turn without imported gold: the two annotators disagree on every sentence.
    disputed = turns["6999_en_2"]
    count = disputed.sentences.count()
    mine = submit(disputed, w.annotator, [Label.FAITHFUL] * count)
    submit(disputed, w.peer, [Label.INVENTED] * count)
    gold_derive_for_turn(disputed)
    assert models.Adjudication.objects.filter(turn=disputed).exists()
    # A slot half done.
    w.open_slot = AssignmentFactory(turn=turns["7335_en_1"], annotator=w.annotator,
                                    status=models.Assignment.Status.IN_PROGRESS)
    first = turns["7335_en_1"].sentences.order_by("index").first()
    models.SentenceAnnotation.objects.create(assignment=w.open_slot, sentence=first, label=Label.FAITHFUL,
                                             path=path_for_label(Label.FAITHFUL))
    # A question on each turn in play, and feedback on the annotator's work.
    for turn in (disputed, turns["7335_en_1"]):
        question = models.Question.objects.create(project=w.project, turn=turn, sentence=turn.sentences.first(),
                                                  asked_by=w.annotator)
        models.QuestionMessage.objects.create(question=question, author=w.annotator, body="Is this relevant?")
    annotation = mine.sentence_annotations.order_by("sentence__index").first()
    models.Feedback.objects.create(project=w.project, annotation=annotation, lead=w.lead,
                                   expected_label=Label.INVENTED, comment="Check the reference.")
    return w


@pytest.mark.parametrize("role", ["annotator", "adjudicator"])
def test_no_page_partial_or_api_answer_shows_an_annotator_or_adjudicator_a_record_id(tmp_path, role):
    world = record_id_world(tmp_path)
    user = world.annotator if role == "annotator" else world.adjudicator
    pages = walk_as(user, [world.project.slug], htmx_too=True, skip_admin=True)
    assert sum(1 for status, _ in pages.values() if status == 200) > 20, "the walk reached too few pages to prove anything"
    leaks = found(pages, world.record_ids)
    assert not leaks, "\n".join(leaks[:60])


def test_the_walk_can_fail_a_lead_reads_the_record_ids(tmp_path):
    """The same walk as a lead (who holds no slot) shows the source's ids: leads keep them."""
    world = record_id_world(tmp_path)
    pages = walk_as(world.lead, [world.project.slug], htmx_too=False, skip_admin=True, until_seen=world.record_ids)
    seen = {record for record in world.record_ids if found(pages, [record])}
    assert seen == set(world.record_ids)


def test_the_api_names_turns_by_their_neutral_id_and_refuses_filtering_by_record_id(tmp_path):
    world = record_id_world(tmp_path)
    client = APIClient()
    client.force_authenticate(world.annotator)
    detail = client.get(f"/api/v1/projects/cb/assignments/{world.open_slot.pk}/").json()
    assert detail["turn"] == world.open_slot.turn_id
    assert detail["dialogue_external_id"] is None
    assert detail["turn_detail"]["external_id"] is None and detail["turn_detail"]["dialogue_external_id"] is None
    refused = client.get("/api/v1/projects/cb/dialogues/", {"external_id": "7335_en"})
    assert refused.status_code == 400 and "external_id" in refused.json()["errors"]
    lead = APIClient()
    lead.force_authenticate(world.lead)
    listed = lead.get("/api/v1/projects/cb/dialogues/", {"external_id": "7335_en"}).json()
    assert [d["external_id"] for d in listed["results"]] == ["7335_en"]


def test_a_lead_holding_a_slot_sees_the_neutral_name_on_that_turn(tmp_path):
    world = record_id_world(tmp_path)
    held = AssignmentFactory(turn=world.open_slot.turn, annotator=world.lead,
                             status=models.Assignment.Status.ASSIGNED)
    client = Client()
    client.force_login(world.lead)
    page = client.get(f"/a/{held.pk}/").content.decode()
    assert f"Turn {held.turn_id}" in page
    assert not found({("/a/", False): (200, page)}, world.record_ids)


# --- issue 22, item 3: the Django admin follows the slot-holder rule --------------------------------------------

def _admin_holder(world, kind):
    from django.contrib.auth.models import Permission

    if kind == "superuser":
        from tests.factories import UserFactory

        return UserFactory(username="root", is_staff=True, is_superuser=True)
    lead = member(world.project, Role.LEAD, username="staff-lead")
    lead.is_staff = True
    lead.save(update_fields=["is_staff"])
    lead.user_permissions.add(*Permission.objects.filter(
        codename__in=["view_dialogue", "change_dialogue", "view_turn", "change_turn", "view_assignment"]))
    return lead


@pytest.mark.parametrize("kind", ["superuser", "staff-lead"])
def test_the_admin_hides_a_turn_its_dialogue_and_sentences_from_whoever_holds_a_slot_on_it(tmp_path, kind):
    world = record_id_world(tmp_path)
    turn = models.Turn.objects.select_related("dialogue").get(external_id="8774_en_2")
    marked = "<irrelevant>" in str(turn.metadata.get("current_turn_processed", ""))
    other = models.Turn.objects.select_related("dialogue").get(external_id="21184_en_3")
    holder = _admin_holder(world, kind)
    held = AssignmentFactory(turn=turn, annotator=holder, status=models.Assignment.Status.ASSIGNED)
    client = Client()
    client.force_login(holder)
    secrets = [turn.external_id, turn.dialogue.external_id, "current_turn_processed", "num_irrelevant",
               *(s.text[:40] for s in turn.sentences.all())]
    pages = {}
    for url in ["/admin/annotator/turn/", "/admin/annotator/dialogue/",
                f"/admin/annotator/turn/?q={turn.external_id}", f"/admin/annotator/dialogue/?q={turn.dialogue.external_id}",
                f"/admin/annotator/assignment/?q={turn.dialogue.external_id}",
                f"/admin/annotator/turn/{turn.pk}/change/", f"/admin/annotator/turn/{turn.pk}/history/",
                f"/admin/annotator/dialogue/{turn.dialogue_id}/change/",
                f"/admin/annotator/dialogue/{turn.dialogue_id}/history/"]:
        response = client.get(url, follow=True)
        pages[url] = (response.status_code, response.content.decode())
    searches = [url for url in pages if "?q=" in url]
    # A search page echoes its term in the search box: what it must not do is find the object.
    leaks = [f"{url} shows {secret!r}" for url, (_, body) in pages.items() if url not in searches
             for secret in secrets if secret in body]
    leaks += [f"{url} finds something" for url in searches if "0 results" not in pages[url][1]]
    leaks += [f"{url} links the hidden object" for url, (_, body) in pages.items()
              for link in (f"/admin/annotator/turn/{turn.pk}/", f"/admin/annotator/dialogue/{turn.dialogue_id}/")
              if link in body]
    assert not leaks, "\n".join(leaks)
    for kind_name, pk in (("turn", turn.pk), ("dialogue", turn.dialogue_id)):
        answer = client.get(f"/admin/annotator/{kind_name}/{pk}/change/")
        assert answer.status_code in (302, 404)  # the admin's answer for a missing object
    # The rest of the project is still there, and the same pages show the turn once the slot is submitted.
    assert other.external_id in client.get(f"/admin/annotator/turn/?q={other.external_id}").content.decode()
    held.status = models.Assignment.Status.SUBMITTED
    held.save(update_fields=["status"])
    change = client.get(f"/admin/annotator/turn/{turn.pk}/change/")
    assert change.status_code == 200 and "current_turn_processed" in change.content.decode()
    assert not marked or "&lt;irrelevant&gt;" in change.content.decode()
    assert turn.external_id in client.get(f"/admin/annotator/turn/?q={turn.external_id}").content.decode()
