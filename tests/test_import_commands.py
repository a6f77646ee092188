"""The import commands, as a lead runs them: counts, labels, errors, idempotence."""

import json
import shutil

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from annotator.corpus.imports.importers import cognibench
from annotator.models import ClaimTriplet, Dialogue, GoldEvent, GoldLabel, ImportBatch, Sentence, Turn
from annotator.domain.vocabulary import GoldProvenance, Label
from tests.conftest import SHARED_DATA
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db

CB = SHARED_DATA / "cognibench-sample"
RC = SHARED_DATA / "refchecker-sample"


def run(*args):
    from io import StringIO

    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def counts(project):
    return (
        Dialogue.objects.filter(project=project).count(),
        Turn.objects.filter(dialogue__project=project).count(),
        Sentence.objects.filter(turn__dialogue__project=project).count(),
        GoldLabel.objects.filter(sentence__turn__dialogue__project=project).count(),
        ClaimTriplet.objects.filter(turn__dialogue__project=project).count(),
    )


def test_cognibench_sample_import(settings):
    project = ProjectFactory(slug="cb")
    out = run("import_cognibench", "--project", "cb", str(CB / "dialogues.json"), str(CB / "labels.json"))
    last = out.strip().splitlines()[-1]
    assert last.startswith("import_cognibench into cb: 48 dialogues, 50 turns, 431 sentences, 253 labels")
    assert "178 sentences unlabelled; 13 inconsistencies" in last
    # Inconsistencies with the list fields are reported, not hidden.
    assert "inconsistency: labels.json: 10938_en_2: sentence 1 has no label but is in factual_list, faithfulness_list" in out
    assert counts(project) == (48, 50, 431, 253, 0)
    assert GoldLabel.objects.exclude(provenance=GoldProvenance.IMPORTED).count() == 0
    assert GoldEvent.objects.filter(provenance=GoldProvenance.IMPORTED, new_label=Label.FAITHFUL).count() == 120
    # Offsets point into the assistant response.
    for sentence in Sentence.objects.select_related("turn"):
        assert sentence.turn.assistant_response[sentence.start:sentence.end] == sentence.text
    # CogniBench's own units are kept as given, even where the studio's segmenter would cut (issue 46, item 14:
    # a sentence ending in a number and a full stop ends a unit the studio cuts itself).
    joined = Sentence.objects.get(text__contains="from 1985 to 1988. He worked")
    assert joined.text.endswith("international management group (img).")

    turn = Turn.objects.get(external_id="10938_en_2")
    assert turn.dialogue.external_id == "10938_en" and turn.index == 2
    assert turn.user_message == "Who played in the semi-finals?"
    assert [m["role"] for m in turn.history] == ["user", "assistant", "user", "assistant"]
    assert turn.metadata["Unnamed: 0"] is not None and "num_spaces" in turn.metadata and "type" in turn.metadata
    # The labelled record keeps the labels' segmentation (5 sentences, not the 4 of current_turn_processed).
    assert list(turn.sentences.values_list("index", flat=True)) == [0, 1, 2, 3, 4]
    labels = {s.index: getattr(s, "gold", None) and s.gold.label for s in turn.sentences.all()}
    assert labels == {0: "faithful", 1: None, 2: "faithful", 3: "reliable", 4: "unequivocal"}
    # "rational" alone is speculative; an empty label in misleading_list is misleading.
    assert GoldLabel.objects.filter(label=Label.SPECULATIVE).count() == 60
    assert GoldLabel.objects.filter(label=Label.MISLEADING).count() == 2


def test_reimport_changes_nothing_and_says_so():
    project = ProjectFactory(slug="cb")
    args = ("import_cognibench", "--project", "cb", str(CB / "dialogues.json"), str(CB / "labels.json"))
    run(*args)
    before = counts(project), ImportBatch.objects.count(), GoldEvent.objects.count()
    out = run(*args)
    assert "nothing changed: every turn was already imported" in out
    assert "50 duplicate turns skipped" in out
    assert (counts(project), ImportBatch.objects.count(), GoldEvent.objects.count()) == before


def test_unknown_project_needs_create():
    with pytest.raises(CommandError, match="no project with slug 'fresh'.*--create"):
        run("import_cognibench", "--project", "fresh", str(CB / "dialogues.json"))
    out = run("import_cognibench", "--project", "fresh", "--create", str(CB / "dialogues.json"))
    assert "48 dialogues, 50 turns" in out and "0 labels" in out


@pytest.mark.parametrize(
    "break_it, message",
    [
        (lambda d, labels: d[7].pop("current_turn"), "dialogues.json: record #7 (id {id7}): field 'current_turn': is missing"),
        (lambda d, labels: d[3].update(turn_index="two"), "dialogues.json: record #3 (id {id3}): field 'turn_index'"),
        (lambda d, labels: labels["10938_en_2"]["sentence_label_dict"].update({"x": [["nonsense"], 5]}),
         "labels.json: record id 10938_en_2: field 'sentence_label_dict[5]'"),
        # PostgreSQL cannot store a NUL character: refused before anything is written, on every database.
        (lambda d, labels: d[5].update(current_turn="Fine.\u0000"),
         "dialogues.json: record #5 (id {id5}): field 'current_turn': contains a NUL character (\\u0000)"),
    ],
)
def test_malformed_file_imports_nothing_and_names_file_record_field(tmp_path, break_it, message):
    project = ProjectFactory(slug="cb")
    dialogues = json.loads((CB / "dialogues.json").read_text())
    labels = json.loads((CB / "labels.json").read_text())
    break_it(dialogues, labels)
    (tmp_path / "dialogues.json").write_text(json.dumps(dialogues))
    (tmp_path / "labels.json").write_text(json.dumps(labels))
    expected = message.format(id7=dialogues[7]["id"], id3=dialogues[3]["id"], id5=dialogues[5]["id"])
    with pytest.raises(CommandError) as error:
        run("import_cognibench", "--project", "cb", str(tmp_path / "dialogues.json"), str(tmp_path / "labels.json"))
    assert expected in str(error.value)
    assert "nothing was imported" in str(error.value)
    assert counts(project) == (0, 0, 0, 0, 0)
    assert ImportBatch.objects.count() == 0


@pytest.mark.slow
def test_malformed_command_exits_non_zero(tmp_path):
    """Run as a lead would, in a shell: the exit status is non-zero and stderr names the file."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    env = {**os.environ, "DATABASE_URL": "sqlite:///" + str(tmp_path / "db.sqlite3")}
    env.pop("TEST_DATABASE_NAME", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    (tmp_path / "bad.json").write_text("[{")
    result = subprocess.run(
        [sys.executable, "manage.py", "import_cognibench", "--project", "x", "--create", str(tmp_path / "bad.json")],
        cwd=ROOT, capture_output=True, text=True, env=env,
    )
    assert result.returncode == 1
    # Read one record at a time, the file's first record is the one that is cut.
    assert "bad.json: record #0: field '(record)': not valid JSON" in result.stderr
    assert "nothing was imported" in result.stderr


def test_label_mapping_rules():
    assert cognibench._label_of(["rational"], set(), "f", "r", "x") == Label.SPECULATIVE
    assert cognibench._label_of(["rational", "grounded"], set(), "f", "r", "x") == Label.RELIABLE
    assert cognibench._label_of(["rational", "grounded", "unequivocal"], set(), "f", "r", "x") == Label.UNEQUIVOCAL
    assert cognibench._label_of(["faithful"], set(), "f", "r", "x") == Label.FAITHFUL
    assert cognibench._label_of(["invented"], set(), "f", "r", "x") == Label.INVENTED
    assert cognibench._label_of(["irrelevant"], set(), "f", "r", "x") == Label.IRRELEVANT
    assert cognibench._label_of([], {"misleading_list", "hallu_list"}, "f", "r", "x") == Label.MISLEADING
    assert cognibench._label_of([], set(), "f", "r", "x") is None
    assert cognibench._label_of([], {"factual_list"}, "f", "r", "x") is None


def test_refchecker_import():
    project = ProjectFactory(slug="rc")
    out = run("import_refchecker", "--project", "rc", str(RC / "dolly_gpt4_answers.json"),
              str(RC / "msmarco_gpt4_answers.json"))
    # 396 units: 7 more than when a sentence ending in a number was joined to the next ("... in March 2021." +
    # "Shah pleaded not guilty ..."; issue 46, item 14).
    assert "200 dialogues, 200 turns, 396 sentences, 0 labels, 782 triplets imported" in out
    # The sample's records carry no reference: the summary warns (issue 26, item 7).
    assert "warning: 200 turns without a reference (annotators judge them against the question and the dialogue)" in out
    assert counts(project) == (200, 200, 396, 0, 782)
    turn = Turn.objects.get(dialogue__external_id="dolly_gpt4_answers/12646")
    assert turn.dialogue.generator_model == "gpt4" and turn.dialogue.topic == "dolly"
    triplets = list(turn.triplets.order_by("index"))
    assert (triplets[0].head, triplets[0].relation, triplets[0].tail) == ("The Story of June", "has songs", "Hey June")
    assert triplets[0].reference_label == "Entailment" and triplets[0].source == "imported"
    assert set(ClaimTriplet.objects.values_list("reference_label", flat=True)) == {"Entailment", "Neutral", "Contradiction"}
    assert "nothing changed" in run("import_refchecker", "--project", "rc", str(RC / "dolly_gpt4_answers.json"))


def test_refchecker_bad_label(tmp_path):
    data = json.loads((RC / "dolly_gpt4_answers.json").read_text())
    data[4]["claude2_response_kg"][0]["human_label"] = "Maybe"
    path = tmp_path / "dolly_gpt4_answers.json"
    path.write_text(json.dumps(data))
    ProjectFactory(slug="rc")
    with pytest.raises(CommandError, match=r"dolly_gpt4_answers.json: record #4 \(id .*\): field 'claude2_response_kg\[0\].human_label': unknown triplet label 'Maybe'"):
        run("import_refchecker", "--project", "rc", str(path))
    assert Turn.objects.count() == 0


def test_jsonl_minimal_lines_unknown_fields_and_errors(tmp_path):
    project = ProjectFactory(slug="j")
    lines = [
        {"dialogue": {"id": "a", "reference": "Paris is the capital of France."},
         "turn": {"index": 0, "response": "Paris is in France. It is lovely."}, "source": "hand-made"},
        {"dialogue": {"id": "a"}, "turn": {"index": 1, "response": "Yes. It is."},
         "sentences": [{"index": 0, "start": 0, "end": 4, "text": "Yes.", "gold": {"label": "irrelevant"}},
                       {"index": 1, "start": 5, "end": 11, "text": "It is."}]},
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    out = run("import_jsonl", "--project", "j", str(path))
    assert "1 dialogues, 2 turns, 4 sentences, 1 labels, 0 triplets imported" in out
    assert "3 sentences unlabelled" in out
    first = Turn.objects.get(index=0)
    assert [s.text for s in first.sentences.all()] == ["Paris is in France.", "It is lovely."]
    assert first.metadata == {"source": "hand-made"}
    assert GoldLabel.objects.get().path == {"relevance": "irrelevant"}

    lines.append({"dialogue": {"id": "b"}, "turn": {"index": 0, "response": "Hi."},
                  "sentences": [{"index": 0, "start": 0, "end": 3, "text": "Hi.", "gold": {"label": "bogus"}}]})
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    project2 = ProjectFactory(slug="j2")
    with pytest.raises(CommandError, match=r"in.jsonl: record line 3: field 'sentences\[0\].gold': unknown label 'bogus'"):
        run("import_jsonl", "--project", "j2", str(path))
    assert counts(project2) == (0, 0, 0, 0, 0)

    path.write_text('{"dialogue": {"id": "c"}, "turn": {"index": 0, "response": "Hi."}, "sentences": '
                    '[{"index": 0, "start": 0, "end": 2, "text": "Hi."}]}\n')
    with pytest.raises(CommandError, match=r"record line 1: field 'sentences\[0\].text': differs from the response"):
        run("import_jsonl", "--project", "j2", str(path))
    path.write_text("{not json\n")
    with pytest.raises(CommandError, match=r"record line 1: field '\(line\)': not valid JSON"):
        run("import_jsonl", "--project", "j2", str(path))
    # A NUL character (only possible as the escape \u0000) is refused, naming where it is; an escaped
    # backslash before "u0000" is ordinary text.
    lines[0]["dialogue"]["reference"] = "Paris\\u0000 is the capital."
    lines[1]["dialogue"]["metadata"] = {"notes": ["fine", "bad\u0000"]}
    path.write_text("\n".join(json.dumps(line) for line in lines[:2]) + "\n")
    with pytest.raises(CommandError, match=r"record line 2: field 'dialogue.metadata.notes\[1\]': contains a NUL"):
        run("import_jsonl", "--project", "j2", str(path))
    assert counts(project2) == (0, 0, 0, 0, 0)


@pytest.mark.parametrize("change, field, problem", [
    (lambda line: line["dialogue"].update(topic="t" * 201), "dialogue.topic", "is 201 characters long; at most 200 fit"),
    (lambda line: line["dialogue"].update(id="d" * 300), "dialogue.id", "is 300 characters long; at most 200 fit"),
    (lambda line: line["turn"].update(id="x" * 201), "turn.id", "is 201 characters long; at most 200 fit"),
    (lambda line: line.update(triplets=[{"head": "a", "relation": "b", "tail": "c", "source": "scraped"}]),
     "triplets[0].source", "unknown source 'scraped'; one of imported, manual, llm"),
])
def test_jsonl_values_the_database_cannot_hold_are_refused_by_name(tmp_path, change, field, problem):
    """PostgreSQL used to refuse these half-way through with a driver error; SQLite kept them silently."""
    project = ProjectFactory(slug="j")
    lines = [{"dialogue": {"id": "a"}, "turn": {"index": n, "response": "Fine."}} for n in range(3)]
    change(lines[2])
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    with pytest.raises(CommandError) as error:
        run("import_jsonl", "--project", "j", str(path))
    assert f"in.jsonl: record line 3: field {field!r}: {problem} - nothing was imported" == str(error.value)
    assert counts(project) == (0, 0, 0, 0, 0)


def test_a_bad_line_after_many_written_chunks_rolls_the_whole_import_back(tmp_path):
    """Chunks of 2,000 turns are written while the file is still being read (on PostgreSQL by a second
    thread on the same transaction): a bad line after several chunks still leaves nothing behind."""
    project = ProjectFactory(slug="big")
    lines = [json.dumps({"dialogue": {"id": f"d{n // 4}"}, "turn": {"index": n % 4, "response": "A short answer."}})
             for n in range(4500)]
    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(lines) + "\n")
    lines[4321] = lines[4321].replace('"index": 1', '"index": "one"')
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(CommandError, match=r"bad.jsonl: record line 4322: field 'turn.index': must be an integer"):
        run("import_jsonl", "--project", "big", str(bad))
    assert counts(project) == (0, 0, 0, 0, 0)
    assert ImportBatch.objects.count() == 0
    # The same connection goes on working normally, deferred constraints included.
    out = run("import_jsonl", "--project", "big", str(good))
    assert "1125 dialogues, 4500 turns, 4500 sentences" in out
    assert counts(project) == (1125, 4500, 4500, 0, 0)


def test_jsonl_reports_a_dialogue_whose_lines_disagree(tmp_path):
    ProjectFactory(slug="j")
    lines = [{"dialogue": {"id": "a", "reference": "One."}, "turn": {"index": 0, "response": "Hi."}},
             {"dialogue": {"id": "a", "reference": "Another."}, "turn": {"index": 1, "response": "Yo."}}]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines))
    out = run("import_jsonl", "--project", "j", str(path))
    assert "inconsistency: in.jsonl: line 2: dialogue 'a' differs from its line 1" in out
    assert Dialogue.objects.get(external_id="a").reference == "One."


def _last_manual_analyze(table):
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT last_analyze FROM pg_stat_user_tables WHERE relname = %s", [table])
        return cursor.fetchone()[0]


def test_a_large_import_refreshes_the_planner_statistics_when_it_commits(tmp_path, django_capture_on_commit_callbacks):
    """Right after a big import, the claim of the next turn must not be planned on the empty table's statistics."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite plans without table statistics")
    from bench.synthetic import write_jsonl
    from annotator.corpus.imports.records import ANALYZE_AFTER_TURNS

    ProjectFactory(slug="big")
    small = write_jsonl(tmp_path / "small.jsonl", turns=20, sentences_per_turn=2, reference_words=20, labelled=False)
    before = _last_manual_analyze("annotator_turn")
    with django_capture_on_commit_callbacks(execute=True):
        run("import_jsonl", str(small), "--project", "big")
    assert _last_manual_analyze("annotator_turn") == before  # a small import leaves it to autovacuum
    big = write_jsonl(tmp_path / "big.jsonl", turns=ANALYZE_AFTER_TURNS, sentences_per_turn=2, reference_words=20,
                      labelled=False)
    ProjectFactory(slug="bigger")
    with django_capture_on_commit_callbacks(execute=True):
        run("import_jsonl", str(big), "--project", "bigger")
    after = _last_manual_analyze("annotator_turn")
    assert after is not None and (before is None or after > before)
