"""Imports cut turns that come without units with the segmenter of their language, and refuse bad units by name.

Through the import commands, as a lead runs them (issue 25 items 1, 2 and 7; issue 22 items 5 and 6).
"""

import io
import json

import pytest
from django.core.management import call_command

from annotator.models import Sentence, Turn
from tests.factories import ProjectFactory
from tests.factories_api import token_client, url, world  # noqa: F401 (fixture)
from tests.test_import_errors import cognibench_record, import_error, nothing_in, write_json, write_jsonl

pytestmark = pytest.mark.django_db

CHINESE = "故宫始建于明朝永乐四年。它是世界上现存规模最大的木质结构古建筑群！我认为这是中国最美的地方？总之值得一游。"
CHINESE_UNITS = ["故宫始建于明朝永乐四年。", "它是世界上现存规模最大的木质结构古建筑群！", "我认为这是中国最美的地方？", "总之值得一游。"]


def line(n, response, language="zh", **extra):
    return {"dialogue": {"id": f"d{n}", "reference": "故宫在北京。", "language": language},
            "turn": {"index": 0, "response": response}, **extra}


def run_import(command, *paths, slug):
    out = io.StringIO()
    call_command(command, "--project", slug, *map(str, paths), stdout=out)
    return out.getvalue()


def units(project, dialogue="d0"):
    return list(Sentence.objects.filter(turn__dialogue__project=project, turn__dialogue__external_id=dialogue)
                .order_by("index").values_list("text", flat=True))


@pytest.mark.parametrize("sentences", [None, []], ids=["no sentences", "an empty list"])
def test_a_chinese_turn_without_units_is_cut_into_four(tmp_path, sentences):
    project = ProjectFactory(slug="zh")
    record = line(0, CHINESE, language="chinese")
    if sentences is not None:
        record["sentences"] = sentences
    output = run_import("import_jsonl", write_jsonl(tmp_path, [record]), slug="zh")
    assert units(project) == CHINESE_UNITS
    assert "1 turns cut into units by the studio (1 by sentencex (Chinese, zh))" in output, output


def test_the_summary_counts_turns_per_segmenter_and_leaves_given_units_alone(tmp_path):
    project = ProjectFactory(slug="mixed")
    given = line(2, "Two. Units.", language="en",
                 sentences=[{"index": 0, "start": 0, "end": 4, "text": "Two."},
                            {"index": 1, "start": 5, "end": 11, "text": "Units."}])
    output = run_import("import_jsonl", write_jsonl(tmp_path, [line(0, CHINESE), line(1, "It rained. We left.", "english"),
                                                               given]), slug="mixed")
    assert "2 turns cut into units by the studio (1 by NLTK Punkt (English), 1 by sentencex (Chinese, zh))" in output
    assert units(project, "d1") == ["It rained.", "We left."]
    assert units(project, "d2") == ["Two.", "Units."]


def test_the_project_default_language_applies_to_dialogues_that_name_none(tmp_path):
    project = ProjectFactory(slug="default-zh", default_language="zh")
    run_import("import_jsonl", write_jsonl(tmp_path, [line(0, CHINESE, language="")]), slug="default-zh")
    assert units(project) == CHINESE_UNITS
    english = ProjectFactory(slug="default-en")
    run_import("import_jsonl", write_jsonl(tmp_path, [line(0, CHINESE, language="")], name="en.jsonl"), slug="default-en")
    assert len(units(english)) == 1  # English Punkt: no sentence end it knows


def test_an_unknown_language_is_refused_naming_the_record(tmp_path):
    project = ProjectFactory(slug="errors")
    message = import_error("import_jsonl", write_jsonl(tmp_path, [line(0, CHINESE), line(1, CHINESE, "klingon")]))
    assert "in.jsonl: record line 2: field 'dialogue.language': unknown language 'klingon'" in message, message
    assert nothing_in(project)


@pytest.mark.parametrize("response", ["", "   \n "])
def test_a_turn_that_would_get_no_unit_is_refused(tmp_path, response):
    project = ProjectFactory(slug="errors")
    message = import_error("import_jsonl", write_jsonl(tmp_path, [line(0, CHINESE), line(1, response)]))
    assert ("in.jsonl: record line 2: field 'turn.response': has no text to cut into units (empty or only "
            "whitespace); a turn needs at least one") in message, message
    assert nothing_in(project)


@pytest.mark.parametrize("sentence, expected", [
    ({"index": 0, "start": 0, "end": 0, "text": ""},
     "field 'sentences[0].text': unit 0 is empty or only whitespace; every unit must hold text"),
    ({"index": 0, "start": 4, "end": 5, "text": " "},
     "field 'sentences[0].text': unit 0 is empty or only whitespace; every unit must hold text"),
    ({"index": 0, "start": 0, "end": 4, "text": "Two."},
     "field 'sentences': the response's text 'Units.' (offsets 4-11) is in no unit"),
])
def test_empty_units_and_uncovered_text_are_refused(tmp_path, sentence, expected):
    project = ProjectFactory(slug="errors")
    bad = line(1, "Two. Units.", "en", sentences=[sentence])
    message = import_error("import_jsonl", write_jsonl(tmp_path, [line(0, CHINESE), bad]))
    assert "in.jsonl: record line 2: " + expected in message, message
    assert nothing_in(project)


def test_a_gap_before_the_first_unit_is_refused(tmp_path):
    ProjectFactory(slug="errors")
    bad = line(1, "Two. Units.", "en", sentences=[{"index": 0, "start": 5, "end": 11, "text": "Units."}])
    message = import_error("import_jsonl", write_jsonl(tmp_path, [bad]))
    assert "record line 1: field 'sentences': the response's text 'Two.' (offsets 0-5) is in no unit" in message


def test_a_seven_megabyte_response_is_refused_by_its_length_not_a_time_out(tmp_path):
    project = ProjectFactory(slug="errors")
    huge = {"dialogue": {"id": "big"}, "turn": {"index": 0, "response": "Ab cd. " * 1_000_000}}
    message = import_error("import_jsonl", write_jsonl(tmp_path, [line(0, CHINESE), huge]))
    assert ("in.jsonl: record line 2: field 'turn.response': is 7,000,000 characters long; at most 50,000 are "
            "accepted (IMPORT_MAX_RESPONSE_CHARS)") in message, message
    assert nothing_in(project)


def test_a_long_line_the_segmenter_cannot_split_is_refused_clearly(tmp_path):
    project = ProjectFactory(slug="errors")
    message = import_error("import_jsonl", write_jsonl(tmp_path, [line(0, "字" * 50_000)]))
    assert ("in.jsonl: record line 1: field 'turn.response': sentence 0 is 50,000 characters long; at most 5,000 "
            "are accepted (IMPORT_MAX_SENTENCE_CHARS); sentencex (Chinese, zh) found no sentence end in it") in message
    assert nothing_in(project)


def test_cognibench_records_without_units_are_cut_in_their_language(tmp_path):
    project = ProjectFactory(slug="cb")
    records = [cognibench_record(0),
               cognibench_record(1, current_turn=f"<user> 讲讲故宫。 <assistant> {CHINESE}", current_turn_processed="",
                                 language="chinese")]
    output = run_import("import_cognibench", write_json(tmp_path, "dialogues.json", records), slug="cb")
    assert "1 turns cut into units by the studio (1 by sentencex (Chinese, zh))" in output, output
    turn = Turn.objects.get(dialogue__project=project, external_id="1_en_0")
    assert list(turn.sentences.order_by("index").values_list("text", flat=True)) == CHINESE_UNITS


def test_cognibench_refuses_an_unknown_language(tmp_path):
    project = ProjectFactory(slug="errors")
    records = [cognibench_record(0), cognibench_record(1, language="elvish")]
    message = import_error("import_cognibench", write_json(tmp_path, "dialogues.json", records))
    assert "dialogues.json: record #1 (id 1_en_0): field 'language': unknown language 'elvish'" in message, message
    assert nothing_in(project)


def test_refchecker_cuts_in_the_record_language_or_the_project_default(tmp_path):
    project = ProjectFactory(slug="rc", default_language="ja")
    records = [{"id": 1, "response": "東京は日本の首都です。人口は約1400万人です！"},
               {"id": 2, "response": CHINESE, "language": "zh"}]
    output = run_import("import_refchecker", write_json(tmp_path, "dolly_gpt4_answers.json", records), slug="rc")
    assert "2 turns cut into units by the studio (1 by sentencex (Chinese, zh), 1 by sentencex (Japanese, ja))" in output
    texts = {turn.external_id: list(turn.sentences.order_by("index").values_list("text", flat=True))
             for turn in Turn.objects.filter(dialogue__project=project)}
    assert texts == {"1": ["東京は日本の首都です。", "人口は約1400万人です！"], "2": CHINESE_UNITS}


def test_a_lead_sets_the_default_language_through_the_api_and_an_unknown_one_is_named(world):  # noqa: F811
    client = token_client(world.users["lead"])
    bad = client.patch(url("project-detail", world), {"default_language": "klingon"}, format="json")
    assert bad.status_code == 400
    assert "unknown language 'klingon'" in str(bad.json()["errors"]["default_language"])
    good = client.patch(url("project-detail", world), {"default_language": "zh-Hans"}, format="json")
    assert good.status_code == 200 and good.json()["default_language"] == "zh-Hans"
