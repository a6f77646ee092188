"""Issue 42's bar: a held-out document with a multiple, a scale and a text step is accepted by ``protocol_set``,
printed back with its kinds by ``protocol_show``; a scale whose min is above its max is refused naming its step."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotator.models import Project, ProtocolVersion
from annotator.projects.protocols import protocol_for

from .factories import ProjectFactory

pytestmark = pytest.mark.django_db

# Not a shipped document: a clinical note checker, steps in another order than HalluDetect's (the text step in
# the middle, the scale last, a multiple step with a max below its answers and an optional text).
HELD_OUT = {
    "id": "note_check", "version": 2, "name": "Clinical note check", "start": "accurate",
    "steps": [
        {"id": "accurate", "question": "Is the sentence accurate?", "answers": [
            {"value": "yes", "label": "Yes", "yields": "accurate"},
            {"value": "no", "label": "No", "next": "problems"}]},
        {"id": "problems", "kind": "multiple", "question": "What is wrong?", "max": 2, "answers": [
            {"value": "dose", "label": "Dose"}, {"value": "drug", "label": "Drug"},
            {"value": "timing", "label": "Timing"}], "next": "comment"},
        {"id": "comment", "kind": "text", "question": "Anything to add?", "max_length": 300, "optional": True,
         "next": "harm"},
        {"id": "harm", "kind": "scale", "question": "Potential harm?", "min": 0, "max": 4,
         "anchors": {"4": "severe", "0": "none"}, "yields": "inaccurate"},
    ],
    "labels": [{"id": "accurate", "name": "Accurate"}, {"id": "inaccurate", "name": "Inaccurate"}],
    "groups": {"hallucination": ["inaccurate"]},
}


def run(*args):
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue()


def write(tmp_path, document, name="protocol.json"):
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return str(path)


def test_a_held_out_document_with_every_kind_is_set_and_shown_back_with_its_kinds(tmp_path):
    project = ProjectFactory()
    said = run("protocol_set", "--project", project.slug, write(tmp_path, HELD_OUT))
    assert f"{project.slug}: protocol note_check v2 set" in said
    assert "  problems: multiple, 1 to 2 of 3 answers" in said.splitlines()
    assert "  harm: scale, 0 to 4 (0 none, 4 severe)" in said.splitlines()
    shown = json.loads(run("protocol_show", "--project", project.slug))
    assert [step.get("kind", "choice") for step in shown["steps"]] == ["choice", "multiple", "text", "scale"]
    assert shown["steps"][1]["min"] == 1 and shown["steps"][2]["optional"] is True
    assert list(shown["steps"][3]["anchors"]) == ["0", "4"]
    assert run("protocol_show", "--project", project.slug, "--steps").splitlines() == [
        "accurate: choice, 2 answers, each leading on", "problems: multiple, 1 to 2 of 3 answers",
        "comment: text, at most 300 characters, optional", "harm: scale, 0 to 4 (0 none, 4 severe)"]
    # what protocol_show prints is accepted unchanged by another project, and is the same protocol
    other = ProjectFactory()
    run("protocol_set", "--project", other.slug, write(tmp_path, shown, "shown.json"))
    assert protocol_for(Project.objects.get(pk=other.pk)) == protocol_for(Project.objects.get(pk=project.pk))
    assert protocol_for(Project.objects.get(pk=other.pk)).kind_steps() == ("problems", "comment", "harm")


def test_a_scale_with_min_above_max_is_refused_naming_its_step_and_nothing_is_saved(tmp_path, capsys):
    project = ProjectFactory()
    document = json.loads(json.dumps(HELD_OUT))
    document["steps"][3].update(min=5, max=1)
    with pytest.raises(CommandError) as refused:
        call_command("protocol_set", "--project", project.slug, write(tmp_path, document))
    assert refused.value.returncode == 1
    assert capsys.readouterr().err.strip().splitlines() == ["/steps/3: a scale's min (5) must be below its max (1)"]
    assert not ProtocolVersion.objects.exists()
