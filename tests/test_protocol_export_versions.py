"""An export of a project that changed its protocol speaks its header's (current) version: gold and answers given
under the older version are carried through the mapping and say what they were given as; a label that does not
carry over is written with label null, and a re-import keeps it as a note, never as gold. Driven through the entry
points: the screen's sync and submit, the protocol API, export_gold and import_jsonl."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from annotator.domain.protocol.document import COGNIBENCH, load_protocol
from annotator.domain.vocabulary import Role
from annotator.models import GoldLabel, Project
from annotator.projects.protocols import protocol_for
from tests.factories import ProjectFactory, member
from tests.factories_workspace import annotators, project_with_turns
from tests.test_protocol_versions_counted import V2, label_turn, new_version
from tests.commands import run, export

pytestmark = pytest.mark.django_db

MADE_UP_PATH = {"relevance": "relevant", "kind": "factual", "faithfulness": "made_up"}




@pytest.fixture
def decided_under_version_one():
    """One turn of three sentences, both annotators under CogniBench (version 1): gold faithful, invented,
    irrelevant; then the lead moves the project to version 2 (invented → made_up, irrelevant → null)."""
    project, _ = project_with_turns(1, overlap=2)
    for annotator in annotators(project, 2):
        label_turn(project, annotator, ["faithful", "invented", "irrelevant"], COGNIBENCH.document)
    new_version(project, member(project, Role.LEAD))
    project.refresh_from_db()
    return project


def test_the_export_carries_older_labels_to_the_header_version(decided_under_version_one, tmp_path):
    header, line = export(decided_under_version_one.slug, tmp_path / "out.jsonl")
    assert header == {"protocol": V2}
    faithful, made_up, irrelevant = line["sentences"]
    assert faithful["gold"]["label"] == "faithful"
    assert faithful["gold"]["given_under"]["version"] == 1
    assert made_up["gold"]["label"] == "made_up" and made_up["gold"]["path"] == MADE_UP_PATH
    assert made_up["gold"]["given_under"] == {"version": 1, "label": "invented", "path": {
        "relevance": "relevant", "kind": "factual", "faithfulness": "invented"}}
    # Does not carry over: no label and no path under version 2, and the record says what it was.
    assert irrelevant["gold"]["label"] is None and irrelevant["gold"]["path"] is None
    assert irrelevant["gold"]["given_under"] == {"version": 1, "label": "irrelevant", "path": {"relevance": "irrelevant"}}
    # The answers too: every label of the file is version 2's, or null with what it was given as.
    assert [a["label"] for a in made_up["annotations"]] == ["made_up", "made_up"]
    assert all(a["path"] == MADE_UP_PATH and a["given_under"]["label"] == "invented" for a in made_up["annotations"])
    assert [(a["label"], a["path"], a["given_under"]["label"]) for a in irrelevant["annotations"]] == [
        (None, None, "irrelevant")] * 2
    v2 = load_protocol(V2)
    for sentence in line["sentences"]:
        for record in [sentence["gold"], *sentence["annotations"]]:
            assert record["label"] is None or v2.label_of(record["path"]) == record["label"]


def test_a_reimport_gives_the_carried_gold_and_keeps_what_does_not_carry_over(decided_under_version_one, tmp_path):
    first = tmp_path / "first.jsonl"
    export(decided_under_version_one.slug, first)
    ProjectFactory(slug="copy")
    said = run("import_jsonl", "--project", "copy", str(first))
    copy = Project.objects.get(slug="copy")
    assert protocol_for(copy) == load_protocol(V2)
    gold = dict(GoldLabel.objects.filter(sentence__turn__dialogue__project=copy)
                .values_list("sentence__index", "label"))
    assert gold == {0: "faithful", 1: "made_up"}  # the null-mapped label is not imported as a label ...
    assert GoldLabel.objects.get(sentence__turn__dialogue__project=copy, label="made_up").path == MADE_UP_PATH
    # ... nor lost silently: the summary says so, and the sentence keeps it, exported again in its place.
    assert "1 gold label given under an older protocol version that do not carry over" in said
    second = tmp_path / "second.jsonl"
    export("copy", second)
    assert second.read_bytes() == first.read_bytes()


def test_a_null_label_without_given_under_is_refused(tmp_path):
    from django.core.management.base import CommandError

    response = "It was built in 1871."
    line = {"dialogue": {"id": "d"}, "turn": {"index": 0, "response": response},
            "sentences": [{"index": 0, "start": 0, "end": len(response), "text": response,
                           "gold": {"label": None, "path": None}}]}
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(line) + "\n")
    ProjectFactory(slug="target")
    with pytest.raises(CommandError, match=r"sentences\[0\]\.gold\.label"):
        run("import_jsonl", "--project", "target", str(source))
    assert not GoldLabel.objects.exists()


def test_a_project_that_never_changed_its_protocol_exports_no_given_under(tmp_path):
    project, _ = project_with_turns(1, overlap=2)
    for annotator in annotators(project, 2):
        label_turn(project, annotator, ["faithful", "invented", "irrelevant"], COGNIBENCH.document)
    out = tmp_path / "out.jsonl"
    run("export_gold", "--project", project.slug, "--format", "jsonl", "--out", str(out))
    assert "given_under" not in out.read_text()


def test_a_project_on_another_protocol_is_offered_jsonl_not_cognibench_labels_json(client):
    """CogniBench's labels.json spells CogniBench's labels: on Face4RAG every route refuses it with the reason,
    and the project page offers JSONL only, saying why."""
    from django.core.management.base import CommandError
    from rest_framework.test import APIClient

    from annotator.domain.protocol.document import load_shipped
    from annotator.projects.protocol_services import protocol_set

    project = ProjectFactory(slug="face4rag-export")
    lead = member(project, Role.LEAD)
    protocol_set(project, load_shipped("face4rag").document, user=lead)
    client.force_login(lead)
    download = client.get(f"/p/{project.slug}/export/cognibench/")
    assert download.status_code == 400 and "export JSONL" in download.content.decode()
    background = client.post(f"/p/{project.slug}/export/cognibench/job/")
    assert background.status_code == 400 and "Face4RAG" in background.content.decode()
    assert client.get(f"/p/{project.slug}/export/jsonl/").status_code == 200
    page = client.get(f"/p/{project.slug}/").content.decode()
    assert "Export CogniBench labels.json" not in page and "No CogniBench labels.json" in page
    api = APIClient()
    api.force_authenticate(lead)
    refused = api.get(f"/api/v1/projects/{project.slug}/gold/export/", {"fmt": "cognibench"})
    assert refused.status_code == 400
    with pytest.raises(CommandError, match="labels.json holds CogniBench's labels only"):
        call_command("export_gold", "--project", project.slug, "--format", "cognibench", "--out", "-",
                     stdout=StringIO())
