"""Flags, split and merge through the pages: who may do what, refusals, resets, renumbering, blindness."""

import json

import pytest
from django.test import Client

from annotator.domain.vocabulary import GoldProvenance, Label, Role, UnitFlagKind
from annotator.models import (Adjudication, Assignment, GoldLabel, Question, SegmentationChange, Sentence,
                              SentenceAnnotation, UnitFlag)
from annotator.work.services import annotation_answer_step
from annotator.work.write import VersionConflict
from tests.factories import AssignmentFactory, ProjectFactory, member
from tests.factories_gold import submit
from tests.factories_workspace import NO_PASSWORD, answer_label, project_with_turns

pytestmark = pytest.mark.django_db

TWO_IN_ONE = "The lighthouse was automated in 1984. The red and white bands were chosen because they show."
UNITS = ["It stands on the cape.", TWO_IN_ONE, "Hello there!"]


@pytest.fixture
def world():
    project, (turn,) = project_with_turns(1, sentences=UNITS)
    people = {role: member(project, role, password=NO_PASSWORD) for role in (Role.LEAD, Role.ADJUDICATOR)}
    people["annotator"], people["peer"] = (member(project, Role.ANNOTATOR, password=NO_PASSWORD) for _ in range(2))
    units = list(turn.sentences.order_by("index"))
    return project, turn, units, people


def client_of(user, **headers):
    client = Client(headers=headers)
    client.force_login(user)
    return client


def split(client, project, turn, unit, offset, **extra):
    return client.post(f"/p/{project.slug}/turns/{turn.pk}/units/split/", {"sentence": unit.pk, "offset": offset, **extra})


def merge(client, project, turn, unit, **extra):
    return client.post(f"/p/{project.slug}/turns/{turn.pk}/units/merge/", {"sentence": unit.pk, **extra})


def texts(turn):
    return list(turn.sentences.order_by("index").values_list("index", "text"))


def flag(user, assignment, unit, kind=UnitFlagKind.TWO_SENTENCES, note="Two sentences here."):
    return client_of(user, Accept="application/json").post(f"/a/{assignment.pk}/units/flag/",
                                                           {"sentence": unit.pk, "kind": kind, "note": note})


def test_an_annotator_flags_a_unit_and_flagging_again_edits_the_open_flag(world):
    project, turn, units, people = world
    mine = AssignmentFactory(turn=turn, annotator=people["annotator"])
    response = flag(people["annotator"], mine, units[1])
    assert response.status_code == 200
    assert response.json() == {"sentence": units[1].pk, "kind": "two_sentences", "kind_display": "Two sentences",
                               "note": "Two sentences here.", "status": "open", "status_display": "Open",
                               "resolution": ""}
    assert flag(people["annotator"], mine, units[1], UnitFlagKind.OTHER, "Actually a list item.").status_code == 200
    saved = UnitFlag.objects.get()
    assert (saved.kind, saved.note, saved.sentence_index, saved.sentence_text) == ("other", "Actually a list item.", 1,
                                                                                   TWO_IN_ONE)


def test_a_flag_needs_a_kind_and_a_unit_of_the_annotators_own_turn(world):
    project, turn, units, people = world
    mine = AssignmentFactory(turn=turn, annotator=people["annotator"])
    _, (other_turn,) = project_with_turns(1)
    assert flag(people["annotator"], mine, units[1], kind="sideways").status_code == 400
    assert flag(people["annotator"], mine, other_turn.sentences.first()).status_code == 404
    peer_slot = AssignmentFactory(turn=turn, annotator=people["peer"])
    assert flag(people["annotator"], peer_slot, units[1]).status_code == 404  # someone else's assignment
    assert flag(people["annotator"], mine, units[1], UnitFlagKind.OTHER, "  ").status_code == 400  # other: say what
    assert not UnitFlag.objects.exists()


def test_an_annotator_sees_only_their_own_flags_on_the_annotation_screen(world):
    project, turn, units, people = world
    mine = AssignmentFactory(turn=turn, annotator=people["annotator"])
    peers = AssignmentFactory(turn=turn, annotator=people["peer"])
    flag(people["peer"], peers, units[1], note="The peer thinks it is invented anyway.")
    page = client_of(people["annotator"]).get(f"/a/{mine.pk}/").content.decode()
    assert "invented anyway" not in page
    assert json.loads(page.split('id="unit-flags-data" type="application/json">')[1].split("</script>")[0]) == {}
    own = client_of(people["peer"]).get(f"/a/{peers.pk}/").content.decode()
    assert "invented anyway" in own and 'id="flag-dialog"' in own


def test_a_lead_splits_a_flagged_unit_the_flag_is_resolved_and_the_audit_shows_before_and_after(world):
    project, turn, units, people = world
    mine = AssignmentFactory(turn=turn, annotator=people["annotator"])
    flag(people["annotator"], mine, units[1])
    lead = client_of(people[Role.LEAD])
    page = lead.get(f"/p/{project.slug}/turns/{turn.pk}/").content.decode()
    assert "Two sentences" in page and "Two sentences here." in page
    response = split(lead, project, turn, units[1], TWO_IN_ONE.index(" The red"), reason="Two sentences.")
    assert response.status_code == 302
    assert texts(turn) == [(0, UNITS[0]), (1, "The lighthouse was automated in 1984."),
                           (2, "The red and white bands were chosen because they show."), (3, "Hello there!")]
    ids = list(turn.sentences.order_by("index").values_list("pk", flat=True))
    assert ids[0] == units[0].pk and ids[1] == units[1].pk and ids[3] == units[2].pk  # unchanged units keep their ids
    assert all(u.text == turn.assistant_response[u.start:u.end] for u in turn.sentences.all())
    resolved = UnitFlag.objects.get()
    assert resolved.status == UnitFlag.Status.RESOLVED and resolved.resolved_by == people[Role.LEAD]
    change = SegmentationChange.objects.get()
    assert (change.action, len(change.before), len(change.after), change.reason) == ("split", 3, 4, "Two sentences.")
    page = lead.get(f"/p/{project.slug}/turns/{turn.pk}/").content.decode()
    assert "Split a unit" in page and "[2] “The lighthouse was automated in 1984.”" in page


def test_merge_joins_a_unit_with_the_next_one_and_keeps_the_questions_about_either(world):
    project, turn, units, people = world
    question = Question.objects.create(project=project, turn=turn, sentence=units[2], asked_by=people["annotator"])
    assert merge(client_of(people[Role.LEAD]), project, turn, units[1]).status_code == 302
    assert texts(turn) == [(0, UNITS[0]), (1, TWO_IN_ONE + " Hello there!")]
    question.refresh_from_db()
    assert question.sentence_id == units[1].pk
    assert not Sentence.objects.filter(pk=units[2].pk).exists()


@pytest.mark.parametrize("role", ["annotator", Role.ADJUDICATOR, "other lead"])
def test_only_the_projects_lead_may_split_or_merge(world, role):
    project, turn, units, people = world
    user = member(ProjectFactory(), Role.LEAD) if role == "other lead" else people[role]
    client = client_of(user)
    assert split(client, project, turn, units[1], 40).status_code == 404
    assert merge(client, project, turn, units[1]).status_code == 404
    assert client.get(f"/p/{project.slug}/units/flags/").status_code == 404
    assert texts(turn) == list(enumerate(UNITS))


@pytest.mark.parametrize("offset", ["abc", "-1", "99999999999999999999", "1e3", ""])
def test_malformed_offsets_are_a_400_and_change_nothing(world, offset):
    project, turn, units, people = world
    response = split(client_of(people[Role.LEAD]), project, turn, units[1], offset)
    assert response.status_code == 400 and b"Split point" in response.content
    assert texts(turn) == list(enumerate(UNITS))


def test_a_split_point_outside_the_unit_or_in_a_one_word_unit_is_refused_with_a_reason(world):
    project, turn, units, people = world
    lead = client_of(people[Role.LEAD])
    assert b"outside the unit" in split(lead, project, turn, units[1], 5000).content
    merge(lead, project, turn, units[0])  # now 2 units; the last one has no next one
    last = turn.sentences.order_by("index").last()
    assert b"no next unit" in merge(lead, project, turn, last).content
    assert merge(lead, project, turn, units[2]).status_code == 400  # merged away: no longer a unit of the turn


def test_a_change_with_a_submitted_annotation_is_refused_naming_it_then_the_reset_path(world):
    project, turn, units, people = world
    submitted = submit(turn, people["annotator"], [Label.FAITHFUL, Label.INVENTED, Label.IRRELEVANT])
    lead = client_of(people[Role.LEAD])
    refused = split(lead, project, turn, units[1], 37)
    assert refused.status_code == 409
    body = refused.content.decode()
    assert "1 submitted annotation (" + people["annotator"].username + ")" in body and "Reset this turn" in body
    assert texts(turn) == list(enumerate(UNITS))
    assert split(lead, project, turn, units[1], 37, reset="on", reason="Two sentences").status_code == 302
    assert len(texts(turn)) == 4
    # The labels of the units that did not change are kept; the split unit's is removed and kept in the audit.
    kept = SentenceAnnotation.objects.filter(assignment=submitted).order_by("sentence__index")
    assert [(a.sentence_id, a.label) for a in kept] == [(units[0].pk, Label.FAITHFUL), (units[2].pk, Label.IRRELEVANT)]
    (record,) = SegmentationChange.objects.get().reset
    assert (record["kind"], record["owner"], record["unit"], record["label"]) == (
        "submitted annotation", people["annotator"].username, 1, Label.INVENTED)
    submitted.refresh_from_db()
    assert submitted.status == Assignment.Status.IN_PROGRESS and submitted.submitted_at is None


def test_gold_adjudications_and_pre_labels_block_a_change_and_a_reset_removes_them(world):
    from autolabel.models import AutoLabelJob, LLMProfile, Prediction, PromptVersion

    project, turn, units, people = world
    GoldLabel.objects.create(sentence=units[1], label=Label.FAITHFUL, provenance=GoldProvenance.IMPORTED)
    Adjudication.objects.create(sentence=units[2], turn=turn)
    job = AutoLabelJob.objects.create(project=project, profile=LLMProfile.objects.create(name="p", base_url="http://x"),
                                      prompt_version=PromptVersion.objects.create(project=project, version=1), model="m")
    Prediction.objects.create(job=job, sentence=units[1], label=Label.INVENTED)
    lead = client_of(people[Role.LEAD])
    body = merge(lead, project, turn, units[1]).content.decode()
    assert "1 gold label" in body and "1 open adjudication" in body and "1 pre-label" in body
    assert merge(lead, project, turn, units[1], reset="on").status_code == 302
    assert not GoldLabel.objects.exists() and not Adjudication.objects.exists() and not Prediction.objects.exists()
    kinds = sorted(record["kind"] for record in SegmentationChange.objects.get().reset)
    assert kinds == ["gold label", "open adjudication", "pre-label"]


def test_a_page_that_still_shows_the_old_units_cannot_save_onto_them(world):
    project, turn, units, people = world
    slot = AssignmentFactory(turn=turn, annotator=people["annotator"])
    slot = answer_label(slot, units[0], Label.FAITHFUL, people["annotator"])
    split(client_of(people[Role.LEAD]), project, turn, units[1], 37)
    with pytest.raises(VersionConflict):  # the page carries the version it saw: stale since the split
        annotation_answer_step(slot, units[2], "relevance", "relevant", actor=people["annotator"],
                               expected_version=slot.version)
    assert SentenceAnnotation.objects.filter(assignment=slot).count() == 1  # the unchanged unit's label stays


def test_unsubmitted_answers_on_a_changed_unit_are_removed_into_the_audit(world):
    project, turn, units, people = world
    slot = AssignmentFactory(turn=turn, annotator=people["annotator"])
    answer_label(slot, units[1], Label.INVENTED, people["annotator"])
    assert split(client_of(people[Role.LEAD]), project, turn, units[1], 37).status_code == 302
    assert not SentenceAnnotation.objects.exists()
    (record,) = SegmentationChange.objects.get().reset
    assert (record["kind"], record["label"]) == ("unsubmitted annotation", Label.INVENTED)


def test_a_lead_dismisses_a_flag_with_a_note_and_lists_the_flagged_turns(world):
    project, turn, units, people = world
    mine = AssignmentFactory(turn=turn, annotator=people["annotator"], status=Assignment.Status.SUBMITTED)
    flag(people["annotator"], mine, units[1])
    lead = client_of(people[Role.LEAD])
    assert "Flagged units <span class=\"chip chip-alert\">1</span>" in lead.get(f"/p/{project.slug}/").content.decode()
    listing = lead.get(f"/p/{project.slug}/units/flags/").content.decode()
    assert f"/p/{project.slug}/turns/{turn.pk}/#units" in listing
    flag_id = UnitFlag.objects.get().pk
    assert lead.post(f"/p/{project.slug}/units/flags/{flag_id}/dismiss/", {"resolution": ""}).status_code == 400
    assert lead.post(f"/p/{project.slug}/units/flags/{flag_id}/dismiss/",
                     {"resolution": "One sentence with a date."}).status_code == 302
    dismissed = UnitFlag.objects.get()
    assert (dismissed.status, dismissed.resolution) == (UnitFlag.Status.DISMISSED, "One sentence with a date.")
    assert "No open flags" in lead.get(f"/p/{project.slug}/units/flags/").content.decode()
    # The annotator reads what the lead said, on the annotation screen (the dialog of that unit).
    page = client_of(people["annotator"]).get(f"/a/{mine.pk}/").content.decode()
    own = json.loads(page.split('id="unit-flags-data" type="application/json">')[1].split("</script>")[0])
    assert own[str(units[1].pk)]["status"] == "dismissed"
    assert own[str(units[1].pk)]["resolution"] == "One sentence with a date."
    annotator = client_of(people["annotator"])
    assert annotator.post(f"/p/{project.slug}/units/flags/{flag_id}/dismiss/", {"resolution": "x"}).status_code == 404


def test_the_api_lists_the_projects_flags_to_leads_and_their_own_to_anyone_else(world):
    project, turn, units, people = world
    mine = AssignmentFactory(turn=turn, annotator=people["annotator"], status=Assignment.Status.SUBMITTED)
    peers = AssignmentFactory(turn=turn, annotator=people["peer"], status=Assignment.Status.SUBMITTED)
    flag(people["annotator"], mine, units[1], note="Mine.")
    flag(people["peer"], peers, units[2], UnitFlagKind.NOT_A_SENTENCE, note="A greeting.")
    url = f"/api/v1/projects/{project.slug}/unit-flags/"

    def notes(user, query=""):
        body = client_of(user).get(url + query).json()
        return sorted(row["note"] for row in body["results"])

    assert notes(people[Role.LEAD]) == ["A greeting.", "Mine."]
    assert notes(people["annotator"]) == ["Mine."]
    assert notes(people[Role.ADJUDICATOR]) == []
    row = client_of(people[Role.LEAD]).get(url + "?status=open&page_size=1").json()
    assert row["count"] == 2 and len(row["results"]) == 1
    assert set(row["results"][0]) >= {"turn", "sentence", "sentence_index", "kind", "flagged_by", "status"}
    assert client_of(people[Role.LEAD]).get(url + "?status=sideways").status_code == 400
    assert client_of(member(ProjectFactory(), Role.LEAD)).get(url).status_code == 404


def test_after_a_reset_the_annotators_label_the_new_units_and_submitting_derives_the_turns_gold_again(world):
    from annotator.gold.services import gold_override
    from annotator.gold.derivation import gold_derive_for_turn
    from annotator.work.services import assignment_submit

    project, turn, units, people = world
    labels = [Label.FAITHFUL, Label.INVENTED, Label.IRRELEVANT]
    slots = [submit(turn, people[name], labels) for name in ("annotator", "peer")]
    gold_derive_for_turn(turn)
    gold_override(units[2], people[Role.LEAD], Label.FAITHFUL, "Greeting counted as faithful here.")
    assert GoldLabel.objects.count() == 3
    assert split(client_of(people[Role.LEAD]), project, turn, units[1], 37, reset="on").status_code == 302
    # The split unit's gold is gone with it; the agreement gold of unit 0 and the lead's override of the last
    # unit stay (a reset resets only what it changes); the slots reopen for the new units.
    assert sorted(GoldLabel.objects.values_list("sentence_id", "provenance")) == sorted(
        [(units[0].pk, GoldProvenance.AGREEMENT), (units[2].pk, GoldProvenance.OVERRIDE)])
    kinds = sorted(record["kind"] for record in SegmentationChange.objects.get().reset)
    assert kinds == ["gold label", "submitted annotation", "submitted annotation"]
    new_units = list(turn.sentences.filter(index__in=[1, 2]).order_by("index"))
    for slot in slots:
        slot.refresh_from_db()
        assert slot.status == Assignment.Status.IN_PROGRESS
        for unit in new_units:
            slot = answer_label(slot, unit, Label.FAITHFUL, slot.annotator)
        assignment_submit(slot, actor=slot.annotator)
    gold = dict(GoldLabel.objects.values_list("sentence__index", "provenance"))
    assert gold == {0: GoldProvenance.AGREEMENT, 1: GoldProvenance.AGREEMENT, 2: GoldProvenance.AGREEMENT,
                    3: GoldProvenance.OVERRIDE}


def test_the_flagged_turns_list_counts_open_flags_per_turn_and_leaves_out_turns_the_lead_is_blind_on(world):
    project, turn, units, people = world
    slots = {name: AssignmentFactory(turn=turn, annotator=people[name]) for name in ("annotator", "peer")}
    for name, unit in (("annotator", units[1]), ("peer", units[1]), ("peer", units[2])):
        flag(people[name], slots[name], unit)
    lead = client_of(people[Role.LEAD])
    listing = lead.get(f"/p/{project.slug}/units/flags/").content.decode()
    assert listing.count(f"/p/{project.slug}/turns/{turn.pk}/#units") == 1
    assert '<td class="num">3</td>' in listing and "(3 open flags)" in listing
    AssignmentFactory(turn=turn, annotator=people[Role.LEAD])  # the lead takes a slot on the turn: blind on it
    listing = lead.get(f"/p/{project.slug}/units/flags/").content.decode()
    assert f"/turns/{turn.pk}/" not in listing and "(0 open flags)" in listing
    assert lead.get(f"/p/{project.slug}/turns/{turn.pk}/").status_code == 404


def test_a_reset_keeps_the_leads_feedback_on_a_removed_annotation_in_the_audit(world):
    """Feedback hangs off the annotation (deleted with it): the audit must say what it was."""
    from annotator.models import Feedback

    project, turn, units, people = world
    submitted = submit(turn, people["annotator"], [Label.FAITHFUL, Label.INVENTED, Label.IRRELEVANT])
    annotation = SentenceAnnotation.objects.get(assignment=submitted, sentence=units[1])
    Feedback.objects.create(project=project, annotation=annotation, lead=people[Role.LEAD],
                            expected_label=Label.FAITHFUL, comment="The reference says 1984.")
    assert split(client_of(people[Role.LEAD]), project, turn, units[1], 37, reset="on").status_code == 302
    (record,) = SegmentationChange.objects.get().reset
    assert [(f["lead"], f["expected_label"], f["comment"]) for f in record["feedback"]] == [
        (people[Role.LEAD].username, Label.FAITHFUL, "The reference says 1984.")]


def test_a_split_with_reset_keeps_the_adjudicators_decisions_and_the_labels_on_the_units_it_did_not_change(world):
    """Issue 26, item 6: only the split unit's annotations, gold and decisions go (into the audit); the
    annotators label the two new units, keeping their other labels; nothing else is decided again."""
    from annotator.gold.services import adjudication_resolve
    from annotator.gold.derivation import gold_derive_for_turn
    from annotator.work.services import assignment_submit

    project, turn, units, people = world
    slots = [submit(turn, people["annotator"], [Label.FAITHFUL, Label.INVENTED, Label.IRRELEVANT]),
             submit(turn, people["peer"], [Label.INVENTED, Label.INVENTED, Label.FAITHFUL])]
    gold_derive_for_turn(turn)
    for dispute in Adjudication.objects.filter(turn=turn).order_by("sentence__index"):
        adjudication_resolve(dispute, people[Role.ADJUDICATOR], reason="The reference decides.", label=Label.FAITHFUL)
    decided = dict(GoldLabel.objects.values_list("sentence_id", "provenance"))
    assert decided == {units[0].pk: GoldProvenance.ADJUDICATION, units[1].pk: GoldProvenance.AGREEMENT,
                       units[2].pk: GoldProvenance.ADJUDICATION}

    assert split(client_of(people[Role.LEAD]), project, turn, units[1], 37, reset="on").status_code == 302
    # The adjudicator's two decisions stay, their disputes resolved; only the split unit's gold and answers went.
    assert dict(GoldLabel.objects.values_list("sentence_id", "provenance")) == {
        units[0].pk: GoldProvenance.ADJUDICATION, units[2].pk: GoldProvenance.ADJUDICATION}
    assert Adjudication.objects.filter(turn=turn, status=Adjudication.Status.RESOLVED).count() == 2
    audit = SegmentationChange.objects.get().reset
    assert {(record["kind"], record["unit"]) for record in audit if "annotation" in record["kind"]} == {
        ("submitted annotation", 1)}
    new_units = list(turn.sentences.filter(index__in=[1, 2]).order_by("index"))
    for slot in slots:
        slot.refresh_from_db()
        assert slot.status == Assignment.Status.IN_PROGRESS  # they must label the new units
        kept = dict(SentenceAnnotation.objects.filter(assignment=slot).values_list("sentence_id", "label"))
        assert set(kept) == {units[0].pk, units[2].pk}  # their labels on the other units stay
        for unit in new_units:
            slot = answer_label(slot, unit, Label.FAITHFUL, slot.annotator)
        assignment_submit(slot, actor=slot.annotator)
    gold = dict(GoldLabel.objects.values_list("sentence__index", "provenance"))
    assert gold == {0: GoldProvenance.ADJUDICATION, 1: GoldProvenance.AGREEMENT, 2: GoldProvenance.AGREEMENT,
                    3: GoldProvenance.ADJUDICATION}
    assert not Adjudication.objects.filter(turn=turn, status=Adjudication.Status.OPEN).exists()


def test_after_a_reset_a_changed_answer_on_a_kept_unit_is_decided_again(world):
    from annotator.gold.derivation import gold_derive_for_turn
    from annotator.work.services import assignment_submit

    project, turn, units, people = world
    slots = [submit(turn, people[name], [Label.FAITHFUL, Label.INVENTED, Label.IRRELEVANT])
             for name in ("annotator", "peer")]
    gold_derive_for_turn(turn)
    assert split(client_of(people[Role.LEAD]), project, turn, units[1], 37, reset="on").status_code == 302
    assert GoldLabel.objects.get(sentence=units[0]).provenance == GoldProvenance.AGREEMENT
    new_units = list(turn.sentences.filter(index__in=[1, 2]).order_by("index"))
    for slot in slots:
        slot.refresh_from_db()
        for unit in new_units:
            slot = answer_label(slot, unit, Label.FAITHFUL, slot.annotator)
        if slot.annotator == people["peer"]:  # changes their mind on the first unit meanwhile
            SentenceAnnotation.objects.filter(assignment=slot, sentence=units[0]).delete()
            slot = answer_label(slot, units[0], Label.INVENTED, slot.annotator)
        assignment_submit(slot, actor=slot.annotator)
    assert not GoldLabel.objects.filter(sentence=units[0]).exists()
    assert Adjudication.objects.filter(sentence=units[0], status=Adjudication.Status.OPEN).exists()
