"""The synthetic benchmark corpus: the shape CogniBench-L has, in the DB and as JSONL."""

import json

import pytest

from annotator.models import Dialogue, GoldLabel, Sentence, Turn
from annotator.corpus.imports.services import import_files
from bench.synthetic import create_synthetic_project, write_jsonl
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


def test_create_synthetic_project_in_bulk():
    project, summary = create_synthetic_project("syn", turns=21, sentences_per_turn=10, reference_words=700)
    assert Turn.objects.filter(dialogue__project=project).count() == 21
    assert Dialogue.objects.filter(project=project).count() == 6  # 4 turns per dialogue
    assert Sentence.objects.filter(turn__dialogue__project=project).count() == 210
    assert GoldLabel.objects.filter(sentence__turn__dialogue__project=project).count() == 210
    reference = Dialogue.objects.filter(project=project).first().reference
    assert 700 <= len(reference.split()) < 760
    for turn in Turn.objects.filter(dialogue__project=project).prefetch_related("sentences"):
        sentences = list(turn.sentences.all())
        assert len(sentences) == 10
        assert all(turn.assistant_response[s.start:s.end] == s.text for s in sentences)
    assert summary.turns == 21


def test_synthetic_jsonl_imports_with_import_jsonl(tmp_path):
    path = write_jsonl(tmp_path / "syn.jsonl", turns=8, sentences_per_turn=10, reference_words=50, labelled=False)
    lines = path.read_text().splitlines()
    assert len(lines) == 8 and all(len(json.loads(line)["sentences"]) == 10 for line in lines)
    project = ProjectFactory()
    summary = import_files(project, "jsonl", [path])
    assert (summary.dialogues, summary.turns, summary.sentences, summary.labels) == (2, 8, 80, 0)
    assert summary.unlabelled == 80
