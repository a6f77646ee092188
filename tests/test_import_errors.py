"""Hostile records that used to end an import in a traceback: each is now refused naming file, record and field.

The files go through the import commands (as a lead runs them) and, for the upload route, through
the upload job's body (``import_batch_execute``), which used to record ``internal error: …``.
Every case breaks one record after good ones, so "nothing imported" covers a rollback.
"""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from annotator.models import Dialogue, ImportBatch, Sentence, Turn
from annotator.corpus.imports.services import import_batch_execute, import_batch_start
from annotator.domain.vocabulary import Role
from annotator.domain.protocol.document import load_shipped
from annotator.projects.protocol_services import protocol_set
from tests.factories import ProjectFactory, member

pytestmark = pytest.mark.django_db

SENTENCE = "The river is long."


def cognibench_record(n, **changes):
    record = {"id": f"{n}_en_0", "turn_index": 0, "current_turn": f"<user> Tell me. <assistant> {SENTENCE}",
              "current_turn_processed": SENTENCE + "<>", "reference": "The river is long and wide.",
              "topic": "rivers", "language": "english"}
    record.update(changes)
    return record


def jsonl_record(n, **turn_changes):
    return {"dialogue": {"id": f"d{n}", "reference": "The river is long."},
            "turn": {"index": 0, "response": f"Answer number {n}. It is fine.", **turn_changes}}


def nested(depth):
    value = "deep"
    for _ in range(depth):
        value = [value]
    return value


def import_error(command, *paths, slug="errors"):
    with pytest.raises(CommandError) as error:
        call_command(command, "--project", slug, *map(str, paths), stdout=open("/dev/null", "w"))
    return str(error.value)


def nothing_in(project):
    return (Dialogue.objects.filter(project=project).count(), Turn.objects.filter(dialogue__project=project).count(),
            Sentence.objects.filter(turn__dialogue__project=project).count()) == (0, 0, 0)


def write_json(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def write_jsonl(tmp_path, records, name="in.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


# Deep enough that the standard parser raised RecursionError (the C parser's limit is about 1,000).
VERY_DEEP = 5_000


@pytest.mark.parametrize("bad, expected", [
    ({"extra": "NESTED_VERY_DEEP"}, "record #3: field '(record)': nested too deeply"),
    ({"extra": nested(100)}, "record #3 (id 3_en_0): field 'extra[0][0]...': nested more than 64 levels deep"),
    ({"id": ["x"]}, "record #3: field 'id': has the wrong type (list)"),
    ({"id": "   "}, "record #3 (id    ): field 'id': is empty"),
    ({"turn_index": -5}, "record #3 (id 3_en_0): field 'turn_index': is -5; must be 0 to 2147483647"),
    ({"turn_index": 2**40}, "record #3 (id 3_en_0): field 'turn_index': is 1099511627776; must be 0 to 2147483647"),
    ({"reference": "NAN_HERE"}, "record #3 (id 3_en_0): field 'reference': is NaN, which is not a JSON number"),
])
def test_hostile_cognibench_records(tmp_path, bad, expected):
    project = ProjectFactory(slug="errors")
    records = [cognibench_record(n) for n in range(3)] + [cognibench_record(3, **bad)] + [cognibench_record(4)]
    text = json.dumps(records).replace('"NAN_HERE"', "NaN")
    text = text.replace('"NESTED_VERY_DEEP"', "[" * VERY_DEEP + "]" * VERY_DEEP)
    (tmp_path / "dialogues.json").write_text(text)
    message = import_error("import_cognibench", tmp_path / "dialogues.json")
    assert f"dialogues.json: {expected}" in message, message
    assert nothing_in(project)


def test_a_cognibench_label_record_with_a_list_id_in_dialogues_is_named_not_a_type_error(tmp_path):
    """With labels.json the record was looked up by its id before the id was checked: `unhashable type`."""
    project = ProjectFactory(slug="errors")
    dialogues = write_json(tmp_path, "dialogues.json", [cognibench_record(0), cognibench_record(1, id=["x"])])
    labels = write_json(tmp_path, "labels.json", {"0_en_0": {"sentence_label_dict": {"the river is long.": [["faithful"], 0]}}})
    message = import_error("import_cognibench", dialogues, labels)
    assert "dialogues.json: record #1: field 'id': has the wrong type (list)" in message, message
    assert nothing_in(project)


@pytest.mark.parametrize("history, expected", [
    ([1, None, {"role": 5}], "field 'turn.history[0]': must be an object with role and text, not int"),
    ([None], "field 'turn.history[0]': must be an object with role and text, not null"),
    ([{"role": "user", "text": "hi"}, {"role": 5, "text": "x"}], "field 'turn.history[1].role': must be one of user, assistant, not 5"),
    ([{"role": "system", "text": "x"}], "field 'turn.history[0].role': must be one of user, assistant, not 'system'"),
    ([{"role": "user"}], "field 'turn.history[0].text': is missing"),
    ([{"role": "user", "text": ["x"]}], "field 'turn.history[0].text': must be a string, not list"),
])
def test_jsonl_history_items_are_checked(tmp_path, history, expected):
    project = ProjectFactory(slug="errors")
    path = write_jsonl(tmp_path, [jsonl_record(0), jsonl_record(1, history=history)])
    message = import_error("import_jsonl", path)
    assert f"in.jsonl: record line 2: {expected}" in message, message
    assert nothing_in(project)


def test_a_valid_jsonl_history_is_kept(tmp_path):
    ProjectFactory(slug="errors")
    history = [{"role": "user", "text": "Hi."}, {"role": "assistant", "text": "Hello."}]
    call_command("import_jsonl", "--project", "errors", str(write_jsonl(tmp_path, [jsonl_record(0, history=history)])),
                 stdout=open("/dev/null", "w"))
    assert Turn.objects.get().history == history


@pytest.mark.parametrize("line, expected", [
    (jsonl_record(1, index=2**40), "field 'turn.index': is 1099511627776; must be 0 to 2147483647"),
    ({**jsonl_record(1), "triplets": [{"head": "a", "relation": "b", "tail": "c", "index": -1}]},
     "field 'triplets[0].index': is -1; must be 0 to 2147483647"),
    ({**jsonl_record(1), "extra": nested(100)}, "field 'extra[0][0]...': nested more than 64 levels deep"),
])
def test_hostile_jsonl_values(tmp_path, line, expected):
    project = ProjectFactory(slug="errors")
    message = import_error("import_jsonl", write_jsonl(tmp_path, [jsonl_record(0), line]))
    assert f"in.jsonl: record line 2: {expected}" in message, message
    assert nothing_in(project)


@pytest.mark.parametrize("value, spelled", [("NaN", "NaN"), ("Infinity", "Infinity"), ("-Infinity", "-Infinity")])
def test_refchecker_ids_that_are_not_numbers_are_refused(tmp_path, value, spelled):
    project = ProjectFactory(slug="errors")
    good = {"id": 1, "response": "Paris is in France.", "x_response_kg": []}
    path = tmp_path / "dolly_gpt4_answers.json"
    path.write_text("[" + json.dumps(good) + ', {"id": ' + value + ', "response": "A."}]')
    message = import_error("import_refchecker", path)
    assert f"dolly_gpt4_answers.json: record #1: field 'id': is {spelled}, which is not a JSON number" in message
    assert nothing_in(project)


@pytest.mark.parametrize("escape", ["\\ud800", "\\uDFFF"])
def test_a_lone_surrogate_is_refused_naming_its_field(tmp_path, escape):
    """Not UTF-8 at all: the database driver refused it half-way through the import, naming nothing."""
    project = ProjectFactory(slug="errors")
    records = [cognibench_record(n) for n in range(2)] + [cognibench_record(2, topic="SURROGATE")]
    (tmp_path / "dialogues.json").write_text(json.dumps(records).replace("SURROGATE", escape + " x"))
    message = import_error("import_cognibench", tmp_path / "dialogues.json")
    assert "dialogues.json: record #2 (id 2_en_0): field 'topic': contains a lone surrogate" in message, message
    assert nothing_in(project)
    refchecker = tmp_path / "dolly_gpt4_answers.json"
    refchecker.write_text('[{"id": 1, "response": "Paris' + escape + ' is in France.", "x_response_kg": []}]')
    message = import_error("import_refchecker", refchecker)
    assert "dolly_gpt4_answers.json: record #0" in message and "contains a lone surrogate" in message, message
    assert nothing_in(project)


def test_a_surrogate_pair_is_text_and_is_kept(tmp_path):
    project = ProjectFactory(slug="errors")
    (tmp_path / "dialogues.json").write_text(
        json.dumps([cognibench_record(0, topic="SMILE")]).replace("SMILE", "\\ud83d\\ude00"))
    call_command("import_cognibench", "--project", "errors", str(tmp_path / "dialogues.json"))
    assert Dialogue.objects.get(project=project).topic == "\U0001F600"


def test_a_sentence_longer_than_the_setting_is_refused(tmp_path, settings):
    settings.IMPORT_MAX_SENTENCE_CHARS = 50
    project = ProjectFactory(slug="errors")
    long_sentence = "word " * 19 + "words"  # 100 characters, no full stop: one sentence
    message = import_error("import_jsonl", write_jsonl(tmp_path, [jsonl_record(0), jsonl_record(1, response=long_sentence)]))
    assert ("in.jsonl: record line 2: field 'turn.response': sentence 0 is 100 characters long; at most 50 are "
            "accepted (IMPORT_MAX_SENTENCE_CHARS)") in message, message
    assert nothing_in(project)

    explicit = {**jsonl_record(2, response=long_sentence),
                "sentences": [{"index": 0, "start": 0, "end": 100, "text": long_sentence}]}
    message = import_error("import_jsonl", write_jsonl(tmp_path, [explicit]))
    assert "field 'sentences[0].text': sentence 0 is 100 characters long" in message

    path = tmp_path / "dolly_gpt4_answers.json"
    path.write_text(json.dumps([{"id": 7, "response": long_sentence}]))
    message = import_error("import_refchecker", path)
    assert "dolly_gpt4_answers.json: record #0 (id 7): field 'response': sentence 0 is 100 characters long" in message


def test_a_reference_longer_than_the_setting_is_refused(tmp_path, settings):
    settings.IMPORT_MAX_REFERENCE_CHARS = 30
    project = ProjectFactory(slug="errors")
    dialogues = write_json(tmp_path, "dialogues.json", [cognibench_record(0, reference="x" * 31)])
    message = import_error("import_cognibench", dialogues)
    assert ("dialogues.json: record #0 (id 0_en_0): field 'reference': is 31 characters long; at most 30 are "
            "accepted (IMPORT_MAX_REFERENCE_CHARS)") in message, message
    long_reference = {"dialogue": {"id": "d", "reference": "y" * 40}, "turn": {"index": 0, "response": "A."}}
    message = import_error("import_jsonl", write_jsonl(tmp_path, [long_reference]))
    assert "in.jsonl: record line 1: field 'dialogue.reference': is 40 characters long; at most 30" in message
    assert nothing_in(project)


def upload_run(project, kind, *files):
    batch = import_batch_start(project, kind, files[0], files[1] if len(files) > 1 else None,
                               actor=member(project, Role.LEAD))
    return import_batch_execute(batch.pk)


def test_an_uploaded_hostile_file_fails_with_the_named_error_not_an_internal_error(private_files):
    project = ProjectFactory(slug="errors")
    records = [cognibench_record(0), cognibench_record(1, turn_index=-5)]
    batch = upload_run(project, "cognibench", SimpleUploadedFile("dialogues.json", json.dumps(records).encode()))
    assert batch.status == ImportBatch.Status.FAILED
    assert batch.error == "dialogues.json: record #1 (id 1_en_0): field 'turn_index': is -5; must be 0 to 2147483647"
    assert nothing_in(project)

    deep = "[" + json.dumps(cognibench_record(0)) + ", {\"x\": " + "[" * VERY_DEEP + "]" * VERY_DEEP + "}]"
    batch = upload_run(project, "cognibench", SimpleUploadedFile("dialogues.json", deep.encode()))
    assert batch.error == "dialogues.json: record #1: field '(record)': nested too deeply (at most 64 levels)"
    assert nothing_in(project)


def test_an_uploaded_refchecker_file_keeps_its_name_for_ids_topic_and_model(private_files):
    """Stored under an unguessable name, the upload is still read under its own: ids, dataset and model come from it."""
    project = ProjectFactory(slug="errors")
    data = [{"id": 3, "response": "Paris is in France.", "x_response_kg": []}]
    batch = upload_run(project, "refchecker", SimpleUploadedFile("dolly_gpt4_answers.json", json.dumps(data).encode()))
    assert batch.status == ImportBatch.Status.DONE, batch.error
    dialogue = Dialogue.objects.get(project=project)
    assert (dialogue.external_id, dialogue.topic, dialogue.generator_model) == ("dolly_gpt4_answers/3", "dolly", "gpt4")


def test_records_are_read_alike_whatever_the_window(tmp_path, monkeypatch):
    """The file is read in chunks: records, numbers, strings and escapes cut at every place read the same."""
    from annotator.corpus.imports.importers import cognibench
    from annotator.corpus.imports.importers import reading
    from tests.conftest import SHARED_DATA

    sample = SHARED_DATA / "cognibench-sample"
    whole = [(r.external_id, r.index, r.response, [s.text for s in r.sentences], r.metadata)
             for r in cognibench.parse(sample / "dialogues.json", sample / "labels.json")]
    monkeypatch.setattr(reading, "CHUNK_CHARS", 7)
    chunked = [(r.external_id, r.index, r.response, [s.text for s in r.sentences], r.metadata)
               for r in cognibench.parse(sample / "dialogues.json", sample / "labels.json")]
    assert chunked == whole and len(whole) == 50


def test_a_record_broken_early_in_a_large_file_is_named_as_broken_not_as_too_long(tmp_path, monkeypatch):
    from annotator.corpus.imports.importers import reading

    monkeypatch.setattr(reading, "CHUNK_CHARS", 64)
    monkeypatch.setattr(reading, "MAX_RECORD_CHARS", 2_000)
    project = ProjectFactory(slug="errors")
    records = [json.dumps(cognibench_record(n)) for n in range(60)]
    records[2] = records[2].replace('"turn_index": 0,', '"turn_index": 0,,')
    (tmp_path / "dialogues.json").write_text("[" + ", ".join(records) + "]")
    message = import_error("import_cognibench", tmp_path / "dialogues.json")
    assert "dialogues.json: record #2: field '(record)': not valid JSON: Expecting property name" in message, message

    records = [json.dumps(cognibench_record(n)) for n in range(3)]
    records[1] = json.dumps(cognibench_record(1, extra="x" * 3_000))
    (tmp_path / "dialogues.json").write_text("[" + ", ".join(records) + "]")
    message = import_error("import_cognibench", tmp_path / "dialogues.json")
    assert "dialogues.json: record #1: field '(record)': longer than 2,000 characters" in message, message
    assert nothing_in(project)


def test_cognibench_labels_are_refused_in_a_project_whose_protocol_has_other_labels(tmp_path):
    """labels.json spells CogniBench's labels: in a project following HalluDetect (supported / unsupported) they
    were stored as its gold (253 'faithful', 'speculative'… labels on the shared sample) although no step of its
    protocol yields them. Refused naming the file and what to do; the dialogues alone still import."""
    project = ProjectFactory(slug="errors")
    protocol_set(project, load_shipped("halludetect").document)
    dialogues = write_json(tmp_path, "dialogues.json", [cognibench_record(0), cognibench_record(1)])
    labels = write_json(tmp_path, "labels.json", {"0_en_0": {"sentence_label_dict": {"the river is long.": [["faithful"], 0]}}})
    message = import_error("import_cognibench", dialogues, labels)
    assert "labels.json" in message and "HalluDetect" in message and "Project JSONL" in message, message
    assert nothing_in(project)
    call_command("import_cognibench", "--project", "errors", str(dialogues), stdout=open("/dev/null", "w"))
    assert Sentence.objects.filter(turn__dialogue__project=project).count() == 2
