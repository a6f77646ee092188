"""Gold export: lossless round trips, streamed downloads for leads only."""

import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from annotator import models
from annotator.corpus.imports.importers import cognibench
from annotator.domain.protocol import path_for_label
from annotator.domain.vocabulary import GoldProvenance, Label, Role
from tests.conftest import SHARED_DATA
from tests.factories import AssignmentFactory, ProjectFactory, TurnFactory, UserFactory, member

pytestmark = pytest.mark.django_db
CB = SHARED_DATA / "cognibench-sample"


def run(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def mapped_labels(labels):
    """{(record id, sentence index): our label or None} of a labels.json, through the import's mapping."""
    out = {}
    for record_id, record in labels.items():
        lists = {name: {cognibench._squeeze(item) for item in record.get(name, [])} for name in cognibench.LIST_FIELDS}
        for key, (raw, index) in record["sentence_label_dict"].items():
            memberships = {name for name, items in lists.items() if cognibench._squeeze(key) in items}
            out[(record_id, index)] = cognibench._label_of(raw, memberships, "f", "r", "x")
    return out


def test_cognibench_round_trip_keeps_every_label(tmp_path):
    ProjectFactory(slug="cb")
    run("import_cognibench", "--project", "cb", str(CB / "dialogues.json"), str(CB / "labels.json"))
    out = tmp_path / "labels.json"
    assert "wrote labels.json of cb" in run("export_gold", "--project", "cb", "--format", "cognibench", "--out", str(out))
    original = json.loads((CB / "labels.json").read_text())
    exported = json.loads(out.read_text())
    assert set(exported) == set(original)
    before, after = mapped_labels(original), mapped_labels(exported)
    labelled = {key: label for key, label in before.items() if label is not None}
    assert len(labelled) == 253
    for key, label in labelled.items():
        assert after[key] == label, key
    # Same keys (the release's own spelling) and the list fields of the release.
    for record_id, record in original.items():
        assert list(exported[record_id]["sentence_label_dict"]) == list(record["sentence_label_dict"])
        assert set(exported[record_id]) == set(record)
    # And the exported file imports again to the same gold.
    ProjectFactory(slug="cb2")
    run("import_cognibench", "--project", "cb2", str(CB / "dialogues.json"), str(out))
    def gold(slug):
        rows = models.GoldLabel.objects.filter(sentence__turn__dialogue__project__slug=slug).values_list(
            "sentence__turn__external_id", "sentence__index", "label")
        return {(turn, index): label for turn, index, label in rows}

    assert gold("cb2") == gold("cb")


def _project_with_everything():
    """A project with gold of every provenance, annotations with evidence, an adjudication and triplets."""
    project = ProjectFactory(slug="full")
    lead = member(project, Role.LEAD, username="lead-x")
    turn = TurnFactory(dialogue__project=project, dialogue__external_id="d-1", index=0, user_message="Q?",
                       sentences=["The Amazon flows through Brazil.", "It is surely the best river.", "Hi!"])
    turn.history = [{"role": "user", "text": "Earlier"}, {"role": "assistant", "text": "Answer"}]
    turn.metadata = {"source": "test"}
    turn.save()
    s0, s1, s2 = turn.sentences.order_by("index")
    models.GoldLabel.objects.create(sentence=s0, label=Label.FAITHFUL, path=path_for_label(Label.FAITHFUL),
                                    provenance=GoldProvenance.AGREEMENT)
    models.GoldLabel.objects.create(sentence=s1, label=Label.SPECULATIVE, path=path_for_label(Label.SPECULATIVE),
                                    provenance=GoldProvenance.ADJUDICATION, reason="not in the reference",
                                    severity=3, error_type="overgeneralization", decided_by=lead)
    for name, label in (("ann-a", Label.FAITHFUL), ("ann-b", Label.INVENTED)):
        annotator = member(project, Role.ANNOTATOR, username=name)
        assignment = AssignmentFactory(turn=turn, project=project, annotator=annotator,
                                       status=models.Assignment.Status.SUBMITTED)
        annotation = models.SentenceAnnotation.objects.create(assignment=assignment, sentence=s0, label=label,
                                                              path=path_for_label(label), note="n")
        models.EvidenceSpan.objects.create(annotation=annotation, start=0, end=10, text="The Amazon")
        triplet = models.ClaimTriplet.objects.get_or_create(
            turn=turn, sentence=s0, index=0, defaults=dict(head="Amazon", relation="flows through", tail="Brazil",
                                                           reference_label="Entailment", source="imported"))[0]
        models.TripletAnnotation.objects.create(assignment=assignment, triplet=triplet, label="Entailment")
    # The triplet's own gold (both annotators agreed), which a re-import must give back too.
    models.TripletGold.objects.create(triplet=triplet, label="Entailment", provenance=GoldProvenance.AGREEMENT,
                                      reason="both annotators")
    adjudication = models.Adjudication.objects.create(
        sentence=s1, turn=turn, status=models.Adjudication.Status.RESOLVED, adjudicator=lead,
        label=Label.SPECULATIVE, path=path_for_label(Label.SPECULATIVE), reason="not in the reference",
        resolved_at=timezone.now())
    models.EvidenceSpan.objects.create(adjudication=adjudication, start=4, end=10, text="Amazon")
    return project


def test_jsonl_round_trip_gives_identical_bytes(tmp_path):
    _project_with_everything()
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    run("export_gold", "--project", "full", "--format", "jsonl", "--out", str(first))
    line = json.loads(first.read_text())
    s0, s1, s2 = line["sentences"]
    assert line["dialogue"]["id"] == "d-1" and line["turn"]["history"][0]["text"] == "Earlier"
    assert (s0["start"], s0["end"], s0["text"]) == (0, 32, "The Amazon flows through Brazil.")
    assert s0["gold"]["label"] == "faithful" and s0["gold"]["provenance"] == "agreement"
    assert [(a["annotator"], a["label"]) for a in s0["annotations"]] == [("ann-a", "faithful"), ("ann-b", "invented")]
    assert s0["annotations"][0]["path"] == {"relevance": "relevant", "kind": "factual", "faithfulness": "faithful"}
    assert s0["annotations"][0]["evidence"] == [{"start": 0, "end": 10, "text": "The Amazon"}]
    assert s1["gold"]["decided_by"] == "lead-x" and s1["gold"]["severity"] == 3
    assert s1["adjudication"]["reason"] == "not in the reference"
    assert s1["adjudication"]["evidence"] == [{"start": 4, "end": 10, "text": "Amazon"}]
    assert s2["gold"] is None
    assert line["triplets"][0]["reference_label"] == "Entailment"
    assert [a["label"] for a in line["triplets"][0]["annotations"]] == ["Entailment", "Entailment"]
    assert line["triplets"][0]["gold"] == {"label": "Entailment", "provenance": "agreement", "reason": "both annotators"}

    ProjectFactory(slug="copy")
    out = run("import_jsonl", "--project", "copy", str(first))
    assert "1 dialogues, 1 turns, 3 sentences, 2 labels, 1 triplets imported" in out
    run("export_gold", "--project", "copy", "--format", "jsonl", "--out", str(second))
    assert second.read_bytes() == first.read_bytes()
    assert models.TripletGold.objects.filter(triplet__turn__dialogue__project__slug="copy").count() == 1


def test_cognibench_jsonl_round_trip_identical(tmp_path):
    ProjectFactory(slug="cb")
    run("import_cognibench", "--project", "cb", str(CB / "dialogues.json"), str(CB / "labels.json"))
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    run("export_gold", "--project", "cb", "--format", "jsonl", "--out", str(first))
    ProjectFactory(slug="cb-copy")
    run("import_jsonl", "--project", "cb-copy", str(first))
    run("export_gold", "--project", "cb-copy", "--format", "jsonl", "--out", str(second))
    assert len(first.read_text().splitlines()) == 50
    assert second.read_bytes() == first.read_bytes()


def test_browser_download_is_streamed_and_for_leads_only(client):
    project = _project_with_everything()
    url = reverse("project_export", args=[project.slug, "jsonl"])
    client.force_login(member(project, Role.ANNOTATOR))
    assert client.get(url).status_code == 404
    assert "Export gold JSONL" not in client.get(reverse("project_detail", args=[project.slug])).content.decode()
    client.force_login(get_user_model().objects.get(username="lead-x"))
    page = client.get(reverse("project_detail", args=[project.slug])).content.decode()
    assert "Export gold JSONL" in page and "Export CogniBench labels.json" in page
    response = client.get(url)
    assert response.status_code == 200 and response.streaming
    assert response["Content-Disposition"] == 'attachment; filename="full-gold.jsonl"'
    body = b"".join(response.streaming_content).decode()
    assert json.loads(body)["dialogue"]["id"] == "d-1"
    response = client.get(reverse("project_export", args=[project.slug, "cognibench"]))
    labels = json.loads(b"".join(response.streaming_content))
    assert labels["d-1_0"]["sentence_label_dict"]["the amazon flows through brazil."] == [["faithful"], 0]


def test_admin_export_action_redirects_to_download(client):
    project = _project_with_everything()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    response = client.post(reverse("admin:annotator_project_changelist"),
                           {"action": "export_cognibench", "_selected_action": [project.pk]})
    assert response.status_code == 302
    assert response["Location"] == reverse("project_export", args=[project.slug, "cognibench"])


@pytest.mark.django_db(transaction=True)
def test_an_export_outside_a_transaction_reads_one_snapshot_and_the_same_bytes(tmp_path):
    """The management command starts its own transaction; on PostgreSQL a second connection then reads the
    sentences in the export's snapshot, in another thread. Same bytes as an export inside a transaction, and a
    change committed while the export runs does not show in it."""
    import threading

    from django.db import connection, transaction

    ProjectFactory(slug="cb")
    run("import_cognibench", "--project", "cb", str(CB / "dialogues.json"), str(CB / "labels.json"))
    project = models.Project.objects.get(slug="cb")
    alone, inside = tmp_path / "alone.jsonl", tmp_path / "inside.jsonl"
    run("export_gold", "--project", "cb", "--format", "jsonl", "--out", str(alone))
    with transaction.atomic():
        run("export_gold", "--project", "cb", "--format", "jsonl", "--out", str(inside))
    assert alone.read_bytes() == inside.read_bytes()
    assert alone.read_text().count("\n") == 50

    if connection.vendor != "postgresql":
        return  # SQLite: one connection, whose open cursor holds the snapshot
    from annotator.corpus.exports.stream import _rows_from_snapshot, _snapshot

    labelled = models.GoldLabel.objects.filter(sentence__turn__dialogue__project=project)
    before = sorted(labelled.values_list("sentence_id", "label"))

    def change_gold_elsewhere():
        labelled.update(label=Label.INVENTED)  # committed at once, by this thread's own connection
        connection.close()

    with _snapshot() as snapshot:
        assert snapshot
        list(models.Turn.objects.filter(dialogue__project=project)[:1])  # the export's first read
        writer = threading.Thread(target=change_gold_elsewhere)
        writer.start()
        writer.join()
        seen = sorted(_rows_from_snapshot([labelled.values_list("sentence_id", "label")], 7, snapshot))
    assert seen == before  # what the export's transaction saw, not the change committed since
    assert set(labelled.values_list("label", flat=True)) == {Label.INVENTED}
