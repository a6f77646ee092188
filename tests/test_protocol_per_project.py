"""A project's own protocol: set by a lead through the CLI, the API or the service; versioned; frozen once
the project has annotations (a new version then needs a label mapping); refusals name every problem and save
nothing."""

import copy
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from annotator.domain.protocol.document import COGNIBENCH, ProtocolDocumentError, load_shipped
from annotator.domain.vocabulary import Role
from annotator.models import Assignment, Project, ProtocolVersion, SentenceAnnotation
from annotator.projects.protocol_services import carried_label, protocol_set
from annotator.projects.protocols import protocol_caption, protocol_for, protocol_for_assignment

from .factories import AssignmentFactory, ProjectFactory, TurnFactory, member

pytestmark = pytest.mark.django_db

FACE4RAG = load_shipped("face4rag")
CLINICAL = load_shipped("cognibench_clinical")


def fresh(project):
    return Project.objects.get(pk=project.pk)


def annotate(project, label="invented"):
    """One annotator's answer in the project: from then on its protocol version is frozen."""
    assignment = AssignmentFactory(turn=TurnFactory(dialogue__project=project), project=project)
    sentence = assignment.turn.sentences.first()
    SentenceAnnotation.objects.create(assignment=assignment, sentence=sentence,
                                      path=COGNIBENCH.path_for_label(label), label=label)
    return assignment


def write(tmp_path, name, document):
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return str(path)


def show(slug) -> str:
    from io import StringIO
    out = StringIO()
    call_command("protocol_show", "--project", slug, stdout=out)
    return out.getvalue()


# -- the CLI -------------------------------------------------------------------------------------------

def test_protocol_show_prints_cognibench_for_a_project_that_never_set_one():
    project = ProjectFactory()
    assert json.loads(show(project.slug)) == COGNIBENCH.document


def test_protocol_show_output_is_accepted_unchanged_by_protocol_set_on_a_fresh_project(tmp_path):
    source, target = ProjectFactory(), ProjectFactory()
    call_command("protocol_set", "--project", source.slug, write(tmp_path, "f.json", FACE4RAG.document))
    shown = show(source.slug)
    path = tmp_path / "shown.json"
    path.write_text(shown)
    call_command("protocol_set", "--project", target.slug, str(path))
    assert protocol_for(fresh(target)) == FACE4RAG
    assert show(target.slug) == shown


def test_protocol_set_refuses_with_every_problem_one_per_line_and_saves_nothing(tmp_path, capsys):
    project = ProjectFactory()
    document = copy.deepcopy(FACE4RAG.document)
    document["steps"][1]["answers"][1]["next"] = "knowledge_errors"
    document["groups"]["hallucination"].append("made_up")
    with pytest.raises(CommandError) as refused:
        call_command("protocol_set", "--project", project.slug, write(tmp_path, "bad.json", document))
    assert refused.value.returncode == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert "/steps/1/answers/1/next: unknown step 'knowledge_errors'" in lines
    assert "/groups/hallucination/9: unknown label 'made_up'" in lines
    assert fresh(project).protocol_version_id is None and not ProtocolVersion.objects.exists()


def test_protocol_set_reads_a_yaml_document(tmp_path):
    import yaml

    project = ProjectFactory()
    path = tmp_path / "face4rag.yaml"
    path.write_text(yaml.safe_dump(FACE4RAG.document, allow_unicode=True))
    call_command("protocol_set", "--project", project.slug, str(path))
    assert protocol_for(fresh(project)) == FACE4RAG
    path.write_text("steps: [unclosed")
    with pytest.raises(CommandError, match="face4rag.yaml: the protocol document is not YAML"):
        call_command("protocol_set", "--project", project.slug, str(path))


def test_protocol_set_names_a_file_that_is_not_json(tmp_path):
    project = ProjectFactory()
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(CommandError, match="broken.json: the protocol document is not JSON"):
        call_command("protocol_set", "--project", project.slug, str(path))


def test_protocol_set_exits_non_zero_from_the_shell(tmp_path):
    import subprocess
    import sys
    from django.conf import settings

    if "sqlite" in settings.DATABASES["default"]["ENGINE"]:
        pytest.skip("the subprocess cannot see the test database on SQLite")
    project = ProjectFactory()
    document = {**COGNIBENCH.document, "start": "nowhere"}
    done = subprocess.run([sys.executable, "manage.py", "protocol_set", "--project", project.slug,
                           write(tmp_path, "bad.json", document)], capture_output=True, text=True)
    assert done.returncode != 0


# -- versions, freezing, mapping ------------------------------------------------------------------------

def test_before_any_annotation_a_new_document_simply_becomes_the_current_version():
    project = ProjectFactory()
    first = protocol_set(project, FACE4RAG.document)
    second = protocol_set(fresh(project), CLINICAL.document)
    project = fresh(project)
    assert (first.number, second.number) == (1, 2) and project.protocol_version == second
    assert protocol_for(project) == CLINICAL
    assert protocol_set(project, CLINICAL.document) is None  # the same document: no new version


def test_once_annotated_a_new_version_needs_a_mapping_of_every_old_label():
    project = ProjectFactory()
    annotate(project)
    with pytest.raises(ProtocolDocumentError) as refused:
        protocol_set(project, CLINICAL.document, label_mapping={"invented": "harmful", "faithful": "nonsense"})
    problems = dict(refused.value.problems)
    assert problems["/label_mapping/faithful"] == "'nonsense' is not a label of the new version"
    assert "needs a mapping" in problems["/label_mapping/irrelevant"]
    assert fresh(project).protocol_version_id is None and not ProtocolVersion.objects.exists()


def test_a_new_version_keeps_earlier_work_under_the_version_it_was_made_with():
    project = ProjectFactory()
    old_slot = annotate(project)
    mapping = {label: label for label in COGNIBENCH.labels}
    version = protocol_set(project, CLINICAL.document, label_mapping=mapping)
    project = fresh(project)
    builtin = version.previous
    assert builtin.number == 1 and builtin.document == COGNIBENCH.document and version.number == 2
    assert protocol_for(project) == CLINICAL
    assert protocol_for_assignment(Assignment.objects.get(pk=old_slot.pk)) == COGNIBENCH
    new_slot = AssignmentFactory(turn=TurnFactory(dialogue__project=project), project=project)
    assert protocol_for_assignment(new_slot) == CLINICAL
    assert SentenceAnnotation.objects.get(assignment=old_slot).label == "invented"  # records are never rewritten
    assert carried_label(version, "invented") == "invented"
    assert "project version 2" in protocol_caption(project)


def test_a_label_whose_meaning_does_not_carry_over_maps_to_null():
    project = ProjectFactory()
    annotate(project)
    mapping = {label: None for label in COGNIBENCH.labels}
    version = protocol_set(project, FACE4RAG.document, label_mapping=mapping)
    assert carried_label(version, "invented") is None


# -- the API --------------------------------------------------------------------------------------------

def client_for(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def protocol_url(project):
    return f"/api/v1/projects/{project.slug}/protocol/"


def test_members_read_the_same_document_protocol_show_prints():
    project = ProjectFactory()
    protocol_set(project, FACE4RAG.document)
    annotator = member(project, Role.ANNOTATOR)
    answer = client_for(annotator).get(protocol_url(project))
    assert answer.status_code == 200
    assert answer.json() == json.loads(show(project.slug)) == FACE4RAG.document
    outsider = ProjectFactory()
    assert client_for(member(outsider, Role.LEAD)).get(protocol_url(project)).status_code == 404


def test_a_lead_puts_a_new_document_and_only_a_lead():
    project = ProjectFactory()
    lead, annotator = member(project, Role.LEAD), member(project, Role.ANNOTATOR)
    assert client_for(annotator).put(protocol_url(project), CLINICAL.document, format="json").status_code == 404
    answer = client_for(lead).put(protocol_url(project), CLINICAL.document, format="json")
    assert answer.status_code == 200 and answer.json() == CLINICAL.document
    assert protocol_for(fresh(project)) == CLINICAL
    assert ProtocolVersion.objects.get().created_by == lead


def test_a_refused_put_is_a_400_listing_every_problem_by_path_and_saves_nothing():
    project = ProjectFactory()
    lead = member(project, Role.LEAD)
    document = copy.deepcopy(COGNIBENCH.document)
    document["labels"][0]["key"] = "u"
    document["groups"]["evaluation"]["views"][1]["positive"] = []
    answer = client_for(lead).put(protocol_url(project), document, format="json")
    assert answer.status_code == 400
    body = answer.json()
    assert body["errors"] == {
        "/labels/0/key": ["key 'u' takes the last answer back on the annotation screen: a label cannot use it"],
        "/groups/evaluation/views/1/positive": ["view 'factual' has no positive label: nothing to detect"],
    }
    assert [p["path"] for p in body["problems"]] == ["/labels/0/key", "/groups/evaluation/views/1/positive"]
    assert fresh(project).protocol_version_id is None


@pytest.mark.parametrize("body", [[], "cognibench", {"steps": "many"}, {"document": None}])
def test_malformed_bodies_are_400_never_500(body):
    project = ProjectFactory()
    answer = client_for(member(project, Role.LEAD)).put(protocol_url(project), body, format="json")
    assert answer.status_code == 400, answer.content


def test_a_put_on_an_annotated_project_takes_a_label_mapping():
    project = ProjectFactory()
    annotate(project)
    lead = member(project, Role.LEAD)
    refused = client_for(lead).put(protocol_url(project), CLINICAL.document, format="json")
    assert refused.status_code == 400 and "/label_mapping" in refused.json()["errors"]
    mapping = {label: label for label in COGNIBENCH.labels}
    accepted = client_for(lead).put(protocol_url(project), {"document": CLINICAL.document, "label_mapping": mapping},
                                    format="json")
    assert accepted.status_code == 200 and protocol_for(fresh(project)) == CLINICAL


def test_the_report_pages_name_the_protocol_version_they_cover():
    from django.test import Client

    project = ProjectFactory()
    lead = member(project, Role.LEAD)
    client = Client()
    client.force_login(lead)
    reports = f"/p/{project.slug}/reports/"
    assert "Protocol: CogniBench protocol v1 (built-in)." in client.get(reports).content.decode()
    annotate(project)
    protocol_set(project, CLINICAL.document, label_mapping={label: label for label in COGNIBENCH.labels})
    html = client.get(reports).content.decode()
    assert "Protocol: CogniBench, clinical protocol v1 (project version 2" in html
    assert "work begun before then follows CogniBench v1 (project version 1)" in html
    claims = client.get(f"/p/{project.slug}/claims/reports/").content.decode()
    assert "CogniBench, clinical protocol v1" in claims


def test_a_project_with_protocol_versions_can_still_be_deleted():
    project = ProjectFactory()
    annotate(project)
    protocol_set(project, CLINICAL.document, label_mapping={label: label for label in COGNIBENCH.labels})
    protocol_set(fresh(project), FACE4RAG.document, label_mapping={label: None for label in CLINICAL.labels})
    fresh(project).delete()
    assert not ProtocolVersion.objects.exists() and not Assignment.objects.exists()
