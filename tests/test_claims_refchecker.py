"""RefChecker files in, gold JSONL out: every triplet and human label kept; triplet gold and severity in the export."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from annotator.models import ClaimTriplet, GoldLabel, Project, TripletGold
from annotator.domain.vocabulary import GoldProvenance, Label

from .conftest import SHARED_DATA

pytestmark = pytest.mark.django_db
FILES = sorted((SHARED_DATA / "refchecker-sample").glob("*_answers.json"))


def source_triplets():
    """(file stem/id, position, head, relation, tail, label) of every triplet in the RefChecker files."""
    out = []
    for path in FILES:
        for record in json.loads(path.read_text(encoding="utf-8")):
            position = 0
            for key, items in record.items():
                if key.endswith("_response_kg"):
                    for item in items:
                        out.append((f"{path.stem}/{record['id']}", position, *item["triplet"], item["human_label"]))
                        position += 1
    return out


def export(project, tmp_path, *extra):
    path = tmp_path / f"{project}.jsonl"
    call_command("export_gold", "--project", project, "--format", "jsonl", "--out", str(path), *extra, stdout=StringIO())
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_both_refchecker_files_import_every_triplet_and_label_and_export_them(tmp_path):
    assert [p.name for p in FILES] == ["dolly_gpt4_answers.json", "msmarco_gpt4_answers.json"]
    expected = source_triplets()
    assert len(expected) > 200
    call_command("import_refchecker", "--project", "rc", "--create", *map(str, FILES), stdout=StringIO())
    project = Project.objects.get(slug="rc")
    stored = [
        (t.turn.dialogue.external_id, t.index, t.head, t.relation, t.tail, t.reference_label)
        for t in ClaimTriplet.objects.filter(turn__dialogue__project=project)
        .select_related("turn__dialogue").order_by("turn__dialogue__external_id", "index")
    ]
    assert sorted(stored) == sorted(expected)
    assert {t[-1] for t in expected} <= {"Entailment", "Neutral", "Contradiction"}

    # Triplet gold from double annotation goes out with the imported label.
    some = ClaimTriplet.objects.filter(turn__dialogue__project=project).order_by("id").first()
    TripletGold.objects.create(triplet=some, label="Contradiction", provenance=GoldProvenance.ADJUDICATION,
                               reason="Table 2")
    lines = export("rc", tmp_path)
    exported = [
        (line["dialogue"]["id"], t["index"], t["head"], t["relation"], t["tail"], t["reference_label"])
        for line in lines for t in line["triplets"]
    ]
    assert sorted(exported) == sorted(expected)
    assert {line["dialogue"]["generator_model"] for line in lines} == {"gpt4"}
    with_gold = [t for line in lines for t in line["triplets"] if "gold" in t]
    assert len(with_gold) == 1
    assert with_gold[0]["gold"] == {"label": "Contradiction", "provenance": "adjudication", "reason": "Table 2"}
    assert with_gold[0]["head"] == some.head


def test_export_marks_hallucinations_at_or_above_the_severity_threshold(tmp_path):
    call_command("import_refchecker", "--project", "sev", "--create", str(FILES[0]), stdout=StringIO())
    project = Project.objects.get(slug="sev")
    project.severity_threshold = 4
    project.save()
    sentences = list(project.dialogues.order_by("external_id").first().turns.get().sentences.order_by("index"))
    first = sentences[0]
    GoldLabel.objects.create(sentence=first, label=Label.INVENTED, provenance=GoldProvenance.OVERRIDE, severity=5)
    plain = export("sev", tmp_path)
    gold = next(s["gold"] for line in plain for s in line["sentences"] if s["gold"])
    assert "severe" not in gold  # the default export is unchanged
    marked = export("sev", tmp_path, "--min-severity", "project")
    gold = next(s["gold"] for line in marked for s in line["sentences"] if s["gold"])
    assert gold["severe"] is True and gold["severity"] == 5
    GoldLabel.objects.filter(sentence=first).update(severity=3)
    marked = export("sev", tmp_path, "--min-severity", "project")
    assert next(s["gold"] for line in marked for s in line["sentences"] if s["gold"])["severe"] is False
    with pytest.raises(Exception, match="1 to 5"):
        export("sev", tmp_path, "--min-severity", "9")


def test_the_severity_filter_from_the_project_page_and_the_api(client):
    from rest_framework.test import APIClient

    from annotator.domain.vocabulary import Role

    from .factories import member

    call_command("import_refchecker", "--project", "sev", "--create", str(FILES[0]), stdout=StringIO())
    project = Project.objects.get(slug="sev")
    project.enable_severity, project.severity_threshold = True, 4
    project.save()
    first = project.dialogues.order_by("external_id").first().turns.get().sentences.order_by("index").first()
    GoldLabel.objects.create(sentence=first, label=Label.INVENTED, provenance=GoldProvenance.OVERRIDE, severity=5)
    lead = member(project, Role.LEAD)
    client.force_login(lead)
    link = "/p/sev/export/jsonl/?min_severity=project"
    assert link in client.get("/p/sev/").content.decode()  # offered on the project page when severity is on

    def severe(response):
        lines = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
        return next(s["gold"] for line in lines for s in line["sentences"] if s["gold"]).get("severe")

    assert severe(client.get(link)) is True
    assert severe(client.get("/p/sev/export/jsonl/")) is None  # the default export is unchanged
    refused = client.get("/p/sev/export/cognibench/?min_severity=4")
    assert refused.status_code == 400 and "applies to the jsonl format" in refused.content.decode()

    api = APIClient()
    api.force_authenticate(lead)
    assert severe(api.get("/api/v1/projects/sev/gold/export/", {"min_severity": "5"})) is True
    refused = api.get("/api/v1/projects/sev/gold/export/", {"min_severity": "9"})
    assert refused.status_code == 400 and "1 to 5" in refused.json()["errors"]["min_severity"][0]
