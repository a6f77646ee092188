"""Exports carry the project's protocol (a header line unless it is CogniBench's built-in one) and
import_jsonl restores it: a Face4RAG project's export round-trips to the same bytes and the same protocol."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotator.domain.protocol.document import COGNIBENCH, load_shipped
from annotator.models import GoldLabel, Project
from annotator.projects.protocols import protocol_for

from .factories import ProjectFactory
from .test_protocol_per_project import annotate

pytestmark = pytest.mark.django_db

FACE4RAG = load_shipped("face4rag")
RESPONSE = "The plant opened in 2019. Beta acquired Alpha. Sales rose because of the logo."


def turn_line(labels, paths=None):
    sentences, start = [], 0
    for index, text in enumerate(["The plant opened in 2019.", "Beta acquired Alpha.", "Sales rose because of the logo."]):
        start = RESPONSE.index(text)
        gold = {"label": labels[index]}
        if paths and paths[index]:
            gold["path"] = paths[index]
        sentences.append({"index": index, "start": start, "end": start + len(text), "text": text, "gold": gold})
    return {"dialogue": {"id": "d-1", "reference": "Alpha acquired Beta. The plant opened in 2019."},
            "turn": {"index": 0, "response": RESPONSE}, "sentences": sentences}


def write_jsonl(path, *objects):
    path.write_text("".join(json.dumps(obj) + "\n" for obj in objects))
    return str(path)


def run(*args):
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_a_face4rag_project_round_trips_with_its_protocol(tmp_path):
    ProjectFactory(slug="source")
    labels = ["consistent", "entity_inversion", "causal_confusion"]
    source = write_jsonl(tmp_path / "in.jsonl", {"protocol": FACE4RAG.document}, turn_line(labels))
    run("import_jsonl", "--project", "source", source)
    assert protocol_for(Project.objects.get(slug="source")) == FACE4RAG
    gold = GoldLabel.objects.get(label="entity_inversion")
    assert gold.path == {"consistent": "no", "category": "knowledge", "knowledge": "inversion"}

    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    run("export_gold", "--project", "source", "--format", "jsonl", "--out", str(first))
    header = json.loads(first.read_text().splitlines()[0])
    assert header == {"protocol": FACE4RAG.document}
    ProjectFactory(slug="copy")
    run("import_jsonl", "--project", "copy", str(first))
    assert protocol_for(Project.objects.get(slug="copy")) == FACE4RAG
    run("export_gold", "--project", "copy", "--format", "jsonl", "--out", str(second))
    assert second.read_bytes() == first.read_bytes()


def test_a_cognibench_export_has_no_header_as_before(tmp_path):
    ProjectFactory(slug="cb")
    labels = ["faithful", "invented", "misleading"]
    run("import_jsonl", "--project", "cb", write_jsonl(tmp_path / "in.jsonl", turn_line(labels)))
    out = tmp_path / "out.jsonl"
    run("export_gold", "--project", "cb", "--format", "jsonl", "--out", str(out))
    assert "dialogue" in json.loads(out.read_text().splitlines()[0])
    assert protocol_for(Project.objects.get(slug="cb")) == COGNIBENCH


def test_labels_are_checked_against_the_files_protocol(tmp_path):
    ProjectFactory(slug="p")
    with pytest.raises(CommandError, match=r"line 2: field 'sentences\[1\].gold': unknown label 'invented'"):
        run("import_jsonl", "--project", "p",
            write_jsonl(tmp_path / "in.jsonl", {"protocol": FACE4RAG.document}, turn_line(["consistent", "invented", "inclusion"])))
    with pytest.raises(CommandError, match=r"the path yields 'contradiction', not the label 'conflation'"):
        run("import_jsonl", "--project", "p", write_jsonl(
            tmp_path / "in2.jsonl", {"protocol": FACE4RAG.document},
            turn_line(["consistent", "conflation", "inclusion"],
                      [None, {"consistent": "no", "category": "knowledge", "knowledge": "contradiction"}, None])))
    assert protocol_for(Project.objects.get(slug="p")) == COGNIBENCH  # nothing of a refused file stays


def test_a_header_that_does_not_hold_is_refused_with_its_problems(tmp_path):
    ProjectFactory(slug="p")
    broken = {**FACE4RAG.document, "start": "nowhere"}
    with pytest.raises(CommandError, match=r"line 1: field 'protocol': the protocol document does not hold: "
                                           r"/start: unknown step 'nowhere'"):
        run("import_jsonl", "--project", "p", write_jsonl(tmp_path / "in.jsonl", {"protocol": broken}, turn_line(["consistent"] * 3)))


def test_a_file_of_another_protocol_is_refused_by_an_annotated_project(tmp_path):
    project = ProjectFactory(slug="busy")
    annotate(project)
    with pytest.raises(CommandError, match="the project's CogniBench v1 and it has annotations"):
        run("import_jsonl", "--project", "busy",
            write_jsonl(tmp_path / "in.jsonl", {"protocol": FACE4RAG.document}, turn_line(["consistent"] * 3)))
    assert protocol_for(Project.objects.get(slug="busy")) == COGNIBENCH
