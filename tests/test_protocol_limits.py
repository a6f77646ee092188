"""Integrity round 4 (issue 38, items 1, 2 and 6): every route that takes a protocol document (the protocol
page, its preview, the API, ``protocol_set``, a JSONL file's header) reads it within the same limits
(``PROTOCOL_MAX_CHARS``, ``PROTOCOL_MAX_DEPTH``), refuses YAML aliases before they expand, keeps every refusal
short, and matches ids, keys and colours as whole strings."""

import copy
import json
from html import unescape
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotator.domain.protocol.document import load_shipped
from annotator.domain.vocabulary import Role
from annotator.models import Dialogue, ProtocolVersion

from .factories import ProjectFactory, member

pytestmark = pytest.mark.django_db

FACE4RAG = load_shipped("face4rag")
SHORT = 20_000  # the most a refusal may say, whatever the document


def alias_bomb(levels=6) -> str:
    """About 300 bytes of YAML whose aliases expand to 9**6 = 531,441 strings in each of three fields."""
    names = "abcdefgh"
    lines = [f"a: &a [{','.join('x' * 9)}]"]
    for n in range(1, levels):
        lines.append(f"{names[n]}: &{names[n]} [{','.join([f'*{names[n - 1]}'] * 9)}]")
    top = names[levels - 1]
    lines += ["id: bomb", "version: 1", f"name: *{top}", "start: x", f"steps: *{top}", f"labels: *{top}"]
    return "\n".join(lines) + "\n"


def nested(depth, leaf="deep"):
    for _ in range(depth):
        leaf = [leaf]
    return leaf


def lead_of(project, client_class=Client):
    client = client_class()
    client.force_login(member(project, Role.LEAD))
    return client


def page(project):
    return reverse("project_protocol", args=[project.slug])


def api(project):
    return f"/api/v1/projects/{project.slug}/protocol/"


def command_says(project, path) -> str:
    """What protocol_set prints when it refuses ``path`` (stdout, stderr and its error)."""
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError) as refused:
        call_command("protocol_set", "--project", project.slug, str(path), stdout=out, stderr=err)
    return out.getvalue() + err.getvalue() + str(refused.value)


# -- item 1: a YAML alias bomb, and refusals that stay short ------------------------------------------------

def test_protocol_set_refuses_a_yaml_alias_bomb_in_a_few_lines(tmp_path):
    project = ProjectFactory()
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb())
    assert len(path.read_bytes()) < 320
    said = command_says(project, path)
    assert len(said) < SHORT, len(said)
    assert "bomb.yaml: the protocol document uses an anchor ('a', line 1)" in said
    assert "YAML aliases and anchors are refused" in said
    assert not ProtocolVersion.objects.exists()


def test_the_protocol_page_refuses_an_uploaded_alias_bomb_in_a_short_page():
    project = ProjectFactory()
    lead = lead_of(project)
    plain = lead.post(page(project), {"source": "edited", "file": SimpleUploadedFile("bad.yaml", b"id: [unclosed")})
    bombed = lead.post(page(project), {"source": "edited", "file": SimpleUploadedFile("bomb.yaml", alias_bomb().encode())})
    assert plain.status_code == bombed.status_code == 400
    assert len(bombed.content) < len(plain.content) + SHORT, len(bombed.content)
    assert "YAML aliases and anchors are refused" in unescape(bombed.content.decode())
    assert not ProtocolVersion.objects.exists()


def test_an_api_refusal_cuts_the_values_it_quotes_and_counts_the_problems_past_fifty():
    project = ProjectFactory()
    document = copy.deepcopy(FACE4RAG.document)
    document["description"] = [["x" * 50] * 100] * 50  # 265,000 characters where a text belongs
    document["labels"] = [{"id": "Bad Id", "name": 5, "colour": "red", "extra": True}] * 40  # four problems each
    answer = lead_of(project, APIClient).put(api(project), document, format="json")
    assert answer.status_code == 400
    assert len(answer.content) < SHORT, len(answer.content)
    problems = answer.json()["problems"]
    assert len(problems) == 51 and problems[-1]["message"].startswith("and ") and "more problem(s)" in problems[-1]["message"]
    name = next(problem["message"] for problem in problems if problem["path"] == "/description")
    assert "is not of type 'string'" in name and len(name) < 400
    assert not ProtocolVersion.objects.exists()


# -- item 2: one size and depth limit, on every route --------------------------------------------------------

def refusal_by(route, project, document, tmp_path, text=None) -> tuple[bool, str]:
    """Offer ``document`` (or ``text``) by ``route``: (whether it was refused, what the user was told)."""
    text = json.dumps(document) if text is None else text
    if route == "page":
        answer = lead_of(project).post(page(project), {"source": "edited", "document": text})
        return answer.status_code == 400, unescape(answer.content.decode())
    if route == "upload":
        upload = SimpleUploadedFile("protocol.json", text.encode())
        answer = lead_of(project).post(page(project), {"source": "edited", "file": upload})
        return answer.status_code == 400, unescape(answer.content.decode())
    if route == "preview":
        url = reverse("project_protocol_preview", args=[project.slug])
        answer = lead_of(project).post(url, {"source": "edited", "document": text})
        return "data-description=\"{" not in answer.content.decode(), unescape(answer.content.decode())
    if route == "api":
        answer = lead_of(project, APIClient).put(api(project), json.loads(text), format="json")
        return answer.status_code == 400, answer.content.decode()
    if route == "command":
        path = tmp_path / "protocol.json"
        path.write_text(text)
        try:
            said = command_says(project, path)
        except pytest.fail.Exception:
            return False, ""
        return True, said
    assert route == "jsonl"
    path = tmp_path / "in.jsonl"
    turn = {"dialogue": {"id": "d1", "reference": "The river is long."}, "turn": {"index": 0, "response": "It is long."}}
    path.write_text('{"protocol": ' + text + "}\n" + json.dumps(turn) + "\n")
    try:
        call_command("import_jsonl", "--project", project.slug, str(path), stdout=StringIO(), stderr=StringIO())
    except CommandError as refused:
        return True, str(refused)
    return False, ""


ROUTES = ["page", "upload", "preview", "api", "command", "jsonl"]


@pytest.mark.parametrize("route", ROUTES)
def test_every_route_refuses_a_document_longer_than_protocol_max_chars(route, settings, tmp_path):
    settings.PROTOCOL_MAX_CHARS = 5_000  # Face4RAG's document: 9,637 characters as compact JSON
    project = ProjectFactory()
    refused, said = refusal_by(route, project, FACE4RAG.document, tmp_path)
    assert refused and "at most 5,000 are accepted (PROTOCOL_MAX_CHARS)" in said, said[-3000:]
    assert not ProtocolVersion.objects.exists() and not Dialogue.objects.exists()


@pytest.mark.parametrize("route", ROUTES)
def test_every_route_refuses_a_document_nested_deeper_than_protocol_max_depth(route, tmp_path):
    project = ProjectFactory()
    # 20 deep: past PROTOCOL_MAX_DEPTH (12), within the API's JSON_MAX_DEPTH (32), which refuses deeper bodies first
    document = {**FACE4RAG.document, "description": nested(20)}
    refused, said = refusal_by(route, project, document, tmp_path)
    assert refused and "deeper than 12" in said and "(PROTOCOL_MAX_DEPTH)" in said, said[-3000:]
    assert not ProtocolVersion.objects.exists() and not Dialogue.objects.exists()


def test_a_yaml_document_nested_thousands_deep_is_refused_not_a_traceback(tmp_path):
    project = ProjectFactory()
    path = tmp_path / "deep.yaml"
    path.write_text("id: face4rag\nname: " + "[" * 5000 + "]" * 5000 + "\n")
    said = command_says(project, path)
    assert "deep.yaml: the protocol document nests objects and lists deeper than 12 at line 2" in said


def test_the_same_document_within_the_limits_is_still_taken_by_every_route(tmp_path):
    for route in ROUTES:
        project = ProjectFactory()
        refused, said = refusal_by(route, project, FACE4RAG.document, tmp_path)
        assert not refused, (route, said[-3000:])


# -- item 6: ids, keys and colours match whole strings ------------------------------------------------------

def with_change(change):
    document = copy.deepcopy(FACE4RAG.document)
    change(document)
    return document


@pytest.mark.parametrize("change, where", [
    (lambda d: d.update(id=d["id"] + "\n"), "/id"),
    (lambda d: d["groups"]["families"][0].update(colour=d["groups"]["families"][0]["colour"] + "\n"), "/groups/families/0/colour"),
    (lambda d: d["steps"][0]["answers"][0].update(key="1\n"), "/steps/0/answers/0/key"),
    (lambda d: d["labels"].append({**d["labels"][0], "id": d["labels"][0]["id"] + "\n", "key": "z"}), "/labels/10/id"),
])
def test_an_id_key_or_colour_with_a_trailing_newline_is_refused_by_its_path(change, where):
    project = ProjectFactory()
    answer = lead_of(project, APIClient).put(api(project), with_change(change), format="json")
    assert answer.status_code == 400, answer.content[:500]
    assert where in answer.json()["errors"], answer.json()["errors"]
    assert "does not match" in answer.json()["errors"][where][0]
    assert not ProtocolVersion.objects.exists()
