"""Evidence in every script: page offsets (UTF-16 units, CR LF as one) and reference offsets (Python characters)."""

import pytest

from annotator.domain.evidence import from_browser_offset, to_browser_offset
from tests.test_annotation_sync import FAITHFUL, change, setup, sync  # noqa: F401 (fixture)


@pytest.mark.parametrize("reference", ["plain ascii", "a\r\nb\r\nc", "𠀀𠀁是一个字。", "x\r\n𠀀y故宫", "故宫始建于明朝"])
def test_page_offsets_round_trip(reference):
    for offset in range(len(reference) + 1):
        if reference[offset - 1:offset + 1] == "\r\n":
            continue  # between CR and LF: no page offset
        page = to_browser_offset(reference, offset)
        assert len(reference[:offset].replace("\r\n", "\n").encode("utf-16-le")) // 2 == page
        assert from_browser_offset(reference, page) == offset


def test_an_offset_past_the_end_stays_past_it():
    assert from_browser_offset("故宫", 9) > 2


@pytest.mark.django_db
def test_evidence_after_a_character_beyond_the_basic_plane_lands_on_the_characters_selected(setup):  # noqa: F811
    client, project, user, assignment, sentences = setup
    dialogue = assignment.turn.dialogue
    dialogue.reference = "𠀀𠀁是古字。故宫始建于明朝永乐四年。"
    dialogue.save(update_fields=["reference"])
    start = dialogue.reference.index("故宫")
    page_start = len(dialogue.reference[:start].encode("utf-16-le")) // 2  # what the browser's selection counts
    body = {"version": 0, "changes": [change(sentences[0], FAITHFUL, dict(FAITHFUL),
                                             evidence=[{"start": page_start, "end": page_start + 2}])]}
    response = sync(client, assignment, body)
    assert response.status_code == 200, response.content
    assert [e["text"] for e in response.json()["saved"][0]["evidence"]] == ["故宫"]
