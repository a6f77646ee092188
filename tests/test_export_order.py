"""The order of an export's turns (issue 50, item 14): dialogues by their ids as people count (``legal-1``,
``legal-2``, ``legal-10``, not a string sort's ``legal-1``, ``legal-10``, ``legal-2``), then turn index; the same
order in every exporter, through the dialogues read one group per query, and the same bytes after a round trip."""

import csv
import io
import json
import random

import pytest

from annotator.corpus.exports import selectors
from annotator.domain.natural_order import natural_key
from tests.factories import DialogueFactory, ProjectFactory, TurnFactory
from tests.commands import run

pytestmark = pytest.mark.django_db



def test_the_key_counts_the_numbers_in_an_id():
    ids = ["legal-10", "legal-2", "legal-1", "legal-1a", "legal-01", "2nd", "10th", "b", "a10b2", "a10b10", "a9z", ""]
    assert sorted(ids, key=natural_key) == ["", "2nd", "10th", "a9z", "a10b2", "a10b10", "b", "legal-01", "legal-1",
                                            "legal-1a", "legal-2", "legal-10"]


def test_ids_the_numbers_cannot_tell_apart_are_ordered_by_the_string_whatever_order_they_came_in():
    ids = ["a07", "a7", "a007", "a7x", "A7"]
    expected = ["A7", "a007", "a07", "a7", "a7x"]
    for seed in range(5):
        shuffled = ids[:]
        random.Random(seed).shuffle(shuffled)
        assert sorted(shuffled, key=natural_key) == expected


def _project(slug, dialogue_ids, turns=2):
    project = ProjectFactory(slug=slug)
    for external_id in dialogue_ids:
        dialogue = DialogueFactory(project=project, external_id=external_id)
        for index in reversed(range(turns)):  # made last to first: the order is the export's, not the rows'
            TurnFactory(dialogue=dialogue, index=index, external_id=f"{external_id}_{index}",
                        sentences=[f"Turn {index} of {external_id}.", "A second sentence."])
    return project


def test_every_exporter_orders_the_dialogues_as_people_count_and_the_round_trip_keeps_the_bytes(tmp_path):
    _project("order", ["legal-10", "legal-2", "legal-1"])
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    run("export_gold", "--project", "order", "--format", "jsonl", "--out", str(first))
    lines = [json.loads(line) for line in first.read_text().splitlines()]
    assert [(line["dialogue"]["id"], line["turn"]["index"]) for line in lines] == [
        ("legal-1", 0), ("legal-1", 1), ("legal-2", 0), ("legal-2", 1), ("legal-10", 0), ("legal-10", 1)]
    assert all(s["text"].endswith(f"of {line['dialogue']['id']}.") for line in lines for s in line["sentences"][:1])

    csv_file = tmp_path / "gold.csv"
    run("export_gold", "--project", "order", "--format", "csv", "--out", str(csv_file))
    rows = list(csv.DictReader(io.StringIO(csv_file.read_text(encoding="utf-8-sig"))))
    assert [row["dialogue"] for row in rows[::4]] == ["legal-1", "legal-2", "legal-10"]

    ProjectFactory(slug="order-copy")
    run("import_jsonl", "--project", "order-copy", str(first))
    run("export_gold", "--project", "order-copy", "--format", "jsonl", "--out", str(second))
    assert second.read_bytes() == first.read_bytes()


def test_dialogues_read_over_several_queries_keep_the_order_and_each_turn_its_sentences(tmp_path, monkeypatch):
    """A project of more dialogues than one query reads (a group): the groups follow each other in order, and the
    sentence stream stays matched with the turns across them."""
    ids = [f"case-{n}" for n in (12, 3, 100, 1, 20, 2, 11)]
    _project("groups", ids, turns=3)
    whole = tmp_path / "whole.jsonl"
    run("export_gold", "--project", "groups", "--format", "jsonl", "--out", str(whole))
    monkeypatch.setattr(selectors, "DIALOGUES_PER_QUERY", 2)
    grouped = tmp_path / "grouped.jsonl"
    run("export_gold", "--project", "groups", "--format", "jsonl", "--out", str(grouped))
    assert grouped.read_bytes() == whole.read_bytes()
    lines = [json.loads(line) for line in grouped.read_text().splitlines()]
    assert [line["dialogue"]["id"] for line in lines[::3]] == [f"case-{n}" for n in (1, 2, 3, 11, 12, 20, 100)]
    assert all(line["sentences"][0]["text"] == f"Turn {line['turn']['index']} of {line['dialogue']['id']}."
               for line in lines)
