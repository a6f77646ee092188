"""Exports and step kinds (issue 42): the JSONL paths of a HalluDetect-style project carry lists, integers and
strings; an export imported into a fresh project exports again to the same bytes; a kind value the file's protocol
refuses stops the import before anything is written, naming the file, the line and the field."""

import json

import pytest
from django.core.management.base import CommandError
from django.utils import timezone

from annotator import models
from annotator.domain.protocol.document import COGNIBENCH, load_shipped
from annotator.domain.vocabulary import GoldProvenance, Role
from annotator.projects.protocol_services import protocol_set
from annotator.projects.protocols import protocol_for
from tests.factories import AssignmentFactory, ProjectFactory, TurnFactory, member
from tests.commands import run, export

pytestmark = pytest.mark.django_db

HALLUDETECT = load_shipped("halludetect")
SENTENCES = ["The court ruled in 2019.", "It cited Smith v. Jones.", "The appeal failed."]
RESPONSE = " ".join(SENTENCES)


def _error_types(n=2):
    return list(HALLUDETECT.answers("error_types")[:n])


def unsupported(severity=4, text="The cited case does not exist.", error_types=None):
    """A complete walk to "unsupported": every kind's value."""
    return {"supported": "no", "error_types": _error_types() if error_types is None else error_types,
            "severity": severity, "justification": text}


SUPPORTED = {"supported": "yes"}




def _source_project():
    """A HalluDetect project with work of its own: gold by agreement and by adjudication (the adjudicator's text),
    two annotators' answers with every kind, a resolved adjudication."""
    project = ProjectFactory(slug="hd")
    lead = member(project, Role.LEAD, username="lead-h")
    protocol_set(project, HALLUDETECT.document, user=lead, chosen=True)
    turn = TurnFactory(dialogue__project=project, dialogue__external_id="d-1", index=0, sentences=SENTENCES)
    s0, s1, s2 = turn.sentences.order_by("index")
    models.GoldLabel.objects.create(sentence=s0, label="supported", path=SUPPORTED,
                                    provenance=GoldProvenance.AGREEMENT)
    gold_path = unsupported(5, "Smith v. Jones is not a real case: the adjudicator's words.")
    models.GoldLabel.objects.create(sentence=s1, label="unsupported", path=gold_path,
                                    provenance=GoldProvenance.ADJUDICATION, reason="the texts differ", decided_by=lead)
    answers = {"ann-a": unsupported(4, "No such case.", _error_types(1)), "ann-b": unsupported(5, "Invented citation.")}
    for name, path in answers.items():
        assignment = AssignmentFactory(turn=turn, project=project, annotator=member(project, Role.ANNOTATOR, username=name),
                                       status=models.Assignment.Status.SUBMITTED)
        models.SentenceAnnotation.objects.create(assignment=assignment, sentence=s1, label="unsupported", path=path)
    models.Adjudication.objects.create(
        sentence=s1, turn=turn, status=models.Adjudication.Status.RESOLVED, adjudicator=lead, label="unsupported",
        path=gold_path, reason="the texts differ", resolved_at=timezone.now())
    return project


def test_a_halludetect_export_carries_lists_integers_and_strings_and_round_trips_byte_for_byte(tmp_path):
    _source_project()
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    header, line = export("hd", first)
    assert header == {"protocol": HALLUDETECT.document}
    s0, s1, s2 = line["sentences"]
    assert s0["gold"]["path"] == SUPPORTED
    gold = s1["gold"]["path"]
    assert list(gold) == ["supported", "error_types", "severity", "justification"]  # the protocol's order
    assert gold["error_types"] == _error_types() and gold["severity"] == 5
    # The adjudicator's gold text, not an annotator's.
    assert gold["justification"] == "Smith v. Jones is not a real case: the adjudicator's words."
    assert [a["path"]["error_types"] for a in s1["annotations"]] == [_error_types(1), _error_types()]
    assert [a["path"]["severity"] for a in s1["annotations"]] == [4, 5]
    assert s1["adjudication"]["path"] == gold
    assert s2["gold"] is None
    raw = first.read_text()
    assert '"severity":5,' in raw and '"error_types":[' in raw  # an integer and a list, not their texts

    ProjectFactory(slug="fresh")
    assert "2 labels" in run("import_jsonl", "--project", "fresh", str(first))
    fresh = models.Project.objects.get(slug="fresh")
    assert protocol_for(fresh) == HALLUDETECT
    imported = models.GoldLabel.objects.get(sentence__turn__dialogue__project=fresh, label="unsupported")
    assert imported.path == gold and imported.provenance == GoldProvenance.ADJUDICATION
    run("export_gold", "--project", "fresh", "--format", "jsonl", "--out", str(second))
    assert second.read_bytes() == first.read_bytes()


def turn_line(gold_path=None, label="unsupported", annotation_path=None, adjudication_path=None):
    sentences, start = [], 0
    for index, text in enumerate(SENTENCES):
        start = RESPONSE.index(text)
        sentence = {"index": index, "start": start, "end": start + len(text), "text": text}
        if index == 1:
            sentence["gold"] = {"label": label, "path": gold_path} if gold_path is not None else {"label": label}
            if annotation_path is not None:
                sentence["annotations"] = [{"annotator": "elsewhere", "label": label, "path": annotation_path}]
            if adjudication_path is not None:
                sentence["adjudication"] = {"adjudicator": "elsewhere", "label": label, "path": adjudication_path,
                                            "reason": "", "evidence": []}
        sentences.append(sentence)
    return {"dialogue": {"id": "d-9", "reference": "Nothing about Smith."}, "turn": {"index": 0, "response": RESPONSE},
            "sentences": sentences}


def write_jsonl(path, *objects):
    path.write_text("".join(json.dumps(obj) + "\n" for obj in objects))
    return str(path)


def _refused(tmp_path, line, field_pattern):
    """The import of a header and ``line`` is refused naming ``in.jsonl``, line 2 and the field; nothing stays."""
    ProjectFactory(slug="target")
    source = write_jsonl(tmp_path / "in.jsonl", {"protocol": HALLUDETECT.document},
                         turn_line(SUPPORTED, "supported"), line)
    with pytest.raises(CommandError, match=rf"in\.jsonl: record line 3: field {field_pattern}") as refused:
        run("import_jsonl", "--project", "target", source)
    target = models.Project.objects.get(slug="target")
    assert not models.Dialogue.objects.filter(project=target).exists()  # the good line 2 was not written either
    assert protocol_for(target) == COGNIBENCH
    return str(refused.value)


BAD_KIND_VALUES = [
    pytest.param({"severity": 9}, id="scale-above-max"),
    pytest.param({"severity": 0}, id="scale-below-min"),
    pytest.param({"severity": True}, id="scale-bool"),
    pytest.param({"severity": "4"}, id="scale-text"),
    pytest.param({"error_types": []}, id="multiple-below-min"),
    pytest.param({"error_types": ["not_an_answer"]}, id="multiple-unknown"),
    pytest.param({"error_types": "fabricated"}, id="multiple-not-a-list"),
    pytest.param({"justification": "x" * 5001}, id="text-too-long"),
    pytest.param({"justification": "   "}, id="text-blank"),
    pytest.param({"justification": 7}, id="text-integer"),
]


@pytest.mark.parametrize("change", BAD_KIND_VALUES)
def test_a_gold_path_with_a_bad_kind_value_is_refused_atomically(tmp_path, change):
    _refused(tmp_path, turn_line({**unsupported(), **change}), r"'sentences\[1\]\.gold\.path'")


def test_a_multiple_value_with_a_duplicate_is_refused(tmp_path):
    first = _error_types(1)[0]
    _refused(tmp_path, turn_line(unsupported(error_types=[first, first])), r"'sentences\[1\]\.gold\.path'")


@pytest.mark.parametrize("where", ["gold", "answer"])
def test_a_multiple_value_out_of_the_steps_order_is_refused_with_its_one_written_form(tmp_path, where):
    """One set, one written form: the file's answers are kept and exported as written, so two equal sets must
    be written alike (the export writes the step's order)."""
    reversed_path = unsupported(error_types=_error_types()[::-1])
    if where == "gold":
        message = _refused(tmp_path, turn_line(reversed_path), r"'sentences\[1\]\.gold\.path'")
    else:
        message = _refused(tmp_path, turn_line(unsupported(), annotation_path=reversed_path),
                           r"'sentences\[1\]\.annotations\[0\]\.path\.error_types'")
    assert f"step 'error_types' stores its answer as {_error_types()!r}" in message


@pytest.mark.parametrize("change", BAD_KIND_VALUES)
def test_an_imported_answer_with_a_bad_kind_value_is_refused_atomically(tmp_path, change):
    """Answers made in another project are kept as written, but never with a kind value the file's own protocol
    refuses: the field names the answer and the step."""
    (step,) = change
    _refused(tmp_path, turn_line(unsupported(), annotation_path={**unsupported(), **change}),
             rf"'sentences\[1\]\.annotations\[0\]\.path\.{step}'")


def test_a_gold_path_without_its_text_is_imported_as_it_is(tmp_path):
    """A gold holds the answers that were decided (issue 46): annotators who wrote different justifications leave
    the gold without a text, and the export writes it so; the import takes it back unchanged."""
    partial = {key: value for key, value in unsupported().items() if key != "justification"}
    ProjectFactory(slug="target")
    run("import_jsonl", "--project", "target", write_jsonl(tmp_path / "in.jsonl", {"protocol": HALLUDETECT.document},
                                                           turn_line(partial)))
    assert models.GoldLabel.objects.get(label="unsupported").path == partial


def test_a_gold_path_off_its_labels_walk_is_refused_naming_the_step(tmp_path):
    message = _refused(tmp_path, turn_line({"supported": "no", "severity": 4}, label="supported"),
                       r"'sentences\[1\]\.gold\.path'")
    assert "no walk that yields 'supported' answers step 'supported' with 'no'" in message


def test_an_imported_adjudication_with_a_bad_kind_value_is_refused(tmp_path):
    _refused(tmp_path, turn_line(unsupported(), adjudication_path=unsupported(severity=[4])),
             r"'sentences\[1\]\.adjudication\.path\.severity'")


def test_a_gold_label_without_its_kind_values_is_still_imported(tmp_path):
    """A source that gives only the label (e.g. converted from a labels list) has no kind values: the gold is
    the label, with the choice answers that lead to it."""
    ProjectFactory(slug="labels")
    run("import_jsonl", "--project", "labels",
        write_jsonl(tmp_path / "in.jsonl", {"protocol": HALLUDETECT.document}, turn_line()))
    gold = models.GoldLabel.objects.get(label="unsupported")
    assert gold.path == HALLUDETECT.path_for_label("unsupported")


def _renamed(document: dict) -> dict:
    """Version 2 of the HalluDetect document: "unsupported" is called "hallucinated" (same walk, same kinds)."""
    text = json.dumps(document).replace('"unsupported"', '"hallucinated"')
    return {**json.loads(text), "version": 2}


def test_kind_values_given_under_an_older_version_round_trip_with_the_labels_carried(tmp_path):
    """The header is the current version; a gold decided under version 1 says what it was given as, its kind
    values in both paths; the file re-imported into a fresh project exports the same bytes."""
    ProjectFactory(slug="v1")
    source = write_jsonl(tmp_path / "in.jsonl", {"protocol": HALLUDETECT.document},
                         turn_line(unsupported(3, "Given under version one.")))
    run("import_jsonl", "--project", "v1", source)
    project = models.Project.objects.get(slug="v1")
    protocol_set(project, _renamed(HALLUDETECT.document), user=member(project, Role.LEAD, username="lead-v"),
                 label_mapping={"supported": "supported", "unsupported": "hallucinated"})
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    header, line = export("v1", first)
    assert header["protocol"]["version"] == 2
    gold = line["sentences"][1]["gold"]
    assert gold["label"] == "hallucinated" and gold["path"] == unsupported(3, "Given under version one.")
    assert gold["given_under"]["label"] == "unsupported" and gold["given_under"]["path"]["severity"] == 3
    ProjectFactory(slug="v2-copy")
    run("import_jsonl", "--project", "v2-copy", str(first))
    run("export_gold", "--project", "v2-copy", "--format", "jsonl", "--out", str(second))
    assert second.read_bytes() == first.read_bytes()
