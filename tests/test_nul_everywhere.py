"""A NUL character (\\u0000) in any text field of any write route is a 400 naming the field, never a 500; so is a
lone surrogate (\\ud800, half of a UTF-16 pair: no database or UTF-8 file holds it; issue 46, item 7).

PostgreSQL text and jsonb cannot hold NUL: a note "a\\u0000b" sent by the annotation page's background saving
failed in the database (500), and the page retried it forever. This walks every text field of every write
route: the HTML forms (the probes of tests/test_security_malformed.py), the page's JSON batch (/a/<id>/sync/)
and the API's writes read from its OpenAPI schema. A lone surrogate comes only as a JSON escape (a form body is
read as UTF-8, its bad bytes as U+FFFD): the JSON bodies, and the forms' fields that hold JSON, are sent one. Meant for PostgreSQL (where NUL fails) and run on SQLite too:
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/annotator TEST_DATABASE_NAME=test_sync \\
        .venv/bin/python -m pytest tests/test_nul_everywhere.py
"""

import json
import re

import pytest
from django.test import Client

from tests.malformed_world import make_world, path_values, snapshot
from tests.malformed_probes import FORM_ANSWER_NOT_REQUIRED, ID, PROBES, well_formed
from tests.url_walk import routes

pytestmark = pytest.mark.django_db

NUL = "a\x00b"
# The characters no text field takes, each sent where a NUL is: json.dumps writes the surrogate as its escape.
UNSTORABLE = pytest.mark.parametrize("bad", ["\x00", "\ud800"], ids=["NUL", "lone surrogate"])


def client_of(user):
    client = Client(raise_request_exception=False)  # an exception is answered as the server would: 500
    client.force_login(user)
    return client


def test_every_text_field_of_every_html_form_refuses_a_nul_with_a_400():
    w = make_world()
    by_name = {route.name: route for route in routes()}
    failures, before = [], snapshot()
    for (route_name, action), probe in PROBES.items():
        values = {**path_values(w, route_name), **probe.path}
        route, body_action = by_name[route_name], {}
        if action and "action" in dict(route.parameters):
            values["action"] = action
        elif action:
            body_action = {"action": action}
        url = route.fill(values)
        client = client_of(w.users[probe.role])
        if probe.session:  # what the page needs in the session first (an opened invite link)
            session = client.session
            session.update(probe.session)
            session.save()
        for name, kind in probe.fields.items():
            value = "1\x00" if kind == ID else NUL
            response = client.post(url, {**body_action, **well_formed(w, probe), name: value})
            expected_400 = route_name not in FORM_ANSWER_NOT_REQUIRED
            if response.status_code >= 500 or (expected_400 and response.status_code != 400):
                failures.append(f"POST {url} {name}=NUL: {response.status_code}")
    assert not failures, "\n".join(failures)
    assert snapshot() == before


def json_form_values():
    """(route, field): a value holding a lone surrogate, for each form field that holds JSON."""
    from annotator.domain.protocol.document import COGNIBENCH

    document = {**COGNIBENCH.document, "name": "Co\ud800gniBench"}
    walk = {"relevance": "relevant", "kind": "factual", "faithfulness": "faithful\ud800"}
    return {("qa:ask", "path"): {"relevance": "relevant\ud800"}, ("gold_resolve", "path"): walk,
            ("project_protocol", "document"): document,
            ("project_protocol", "label_mapping"): {"faithful\ud800": "faithful"}}


def test_every_form_field_that_holds_json_refuses_a_lone_surrogate_with_a_400():
    """A form's body is read as UTF-8 (a bad byte becomes U+FFFD): only JSON in a field brings a lone surrogate."""
    w = make_world()
    by_name = {route.name: route for route in routes()}
    failures, before = [], snapshot()
    for (route_name, name), value in json_form_values().items():
        probe = PROBES[(route_name, None)]
        url = by_name[route_name].fill({**path_values(w, route_name), **probe.path})
        text = json.dumps(value)
        assert "\\ud800" in text
        body = {**well_formed(w, probe), name: text}
        if name == "label_mapping":
            body["document"] = json.dumps(json_form_values()[("project_protocol", "document")] | {"name": "Other"})
        response = client_of(w.users[probe.role]).post(url, body)
        if response.status_code != 400:
            failures.append(f"POST {url} {name}={text[:80]!r}: {response.status_code}")
    assert not failures, "\n".join(failures)
    assert snapshot() == before


def sync_change(w, **extra):
    return {"request_id": "nul-walk-0001", "sentence": w.sentence.pk, "path": None,
            "steps": [{"action": "undo", "at": 1_700_000_000_000}], **extra}


def sync_bodies(w, bad="\x00"):
    """(where, body): the batch with ``bad`` in each of its text fields (keys included)."""
    step = {"action": "answer", "step": "relevance", "value": "relevant", "at": 1_700_000_000_000}
    changes = {
        "note": sync_change(w, note=f"a{bad}b"),
        "request_id": sync_change(w, request_id=f"nul-walk{bad}-1"),
        "step action": sync_change(w, steps=[{**step, "action": f"answer{bad}"}]),
        "step name": sync_change(w, steps=[{**step, "step": f"relevance{bad}"}]),
        "step answer": sync_change(w, steps=[{**step, "value": f"relevant{bad}"}]),
        "a step's key": sync_change(w, steps=[{**step, f"at{bad}": 1}]),
        "path answer": sync_change(w, path={"relevance": f"relevant{bad}"}),
        "path step": sync_change(w, path={f"relevance{bad}": "relevant"}),
        "evidence text": sync_change(w, evidence=[{"start": 4, "end": 10, "text": f"a{bad}b"}]),
        "evidence key": sync_change(w, evidence=[{"start": 4, "end": 10, f"te{bad}xt": "x"}]),
        "a change's key": {**sync_change(w), f"no{bad}te": "x"},
    }
    for where, change in changes.items():
        yield where, {"version": w.assignment.version, "changes": [change]}
    yield "the body's key", {"version": w.assignment.version, "changes": [sync_change(w)], f"x{bad}": 1}


@UNSTORABLE
def test_every_text_field_of_the_pages_sync_batch_refuses_a_nul_with_a_400(bad):
    w = make_world()
    w.assignment.refresh_from_db()  # the batch carries the current version: only the NUL is wrong with it
    client, before, failures = client_of(w.annotator), snapshot(), []
    for where, body in sync_bodies(w, bad):
        response = client.post(f"/a/{w.assignment.pk}/sync/", json.dumps(body), content_type="application/json")
        if response.status_code != 400:
            failures.append(f"sync, NUL in {where}: {response.status_code} {response.content[:200]!r}")
    assert not failures, "\n".join(failures)
    assert snapshot() == before


def api_writes():
    """(method, path template, writable JSON fields with their schema types) of every API write with a JSON body."""
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.renderers import OpenApiJsonRenderer

    schema = json.loads(OpenApiJsonRenderer().render(SchemaGenerator().get_schema(request=None, public=True)))
    components = schema["components"]["schemas"]

    def resolve(part):
        while "$ref" in part:
            part = components[part["$ref"].split("/")[-1]]
        return part

    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            content = operation.get("requestBody", {}).get("content", {})
            if method not in ("post", "put", "patch") or "application/json" not in content:
                continue
            body = resolve(content["application/json"]["schema"])
            fields = {name: resolve(part) for name, part in body.get("properties", {}).items()
                      if not resolve(part).get("readOnly")}
            yield method, path, fields


def nul_values(part, bad="\x00"):
    """A value of the field's type that holds ``bad``, or None for fields that hold no text."""
    kind, text = part.get("type"), f"a{bad}b"
    if kind == "string" or "enum" in part or "oneOf" in part or "allOf" in part:
        return [text]
    if kind == "object":
        return [{"relevance": f"relevant{bad}"}, {f"relev{bad}ance": "relevant"}]
    if kind == "array":
        items = part.get("items", {})
        if items.get("type") in ("integer", "number"):
            return None
        return [[text], [{"start": 1, "end": 2, "text": text}]]
    return None


def api_path(w, template):
    """The path with the world's objects, and who may write there."""
    role = "lead"
    ids = {"slug": w.project.slug, "sentence_id": w.sentence.pk, "user_id": w.annotator.pk}
    if "/assignments/{id}/" in template:
        lead_action = template.endswith(("/reassign/", "/release/", "/reopen/"))
        ids["id"] = w.peer_assignment.pk if template.endswith("/reopen/") else w.assignment.pk
        role = "lead" if lead_action else "annotator"
    elif "/adjudications/" in template:
        ids["id"], role = w.adjudication.pk, "adjudicator"
    elif "/autolabel-jobs/{id}" in template:
        ids["id"] = w.job.pk
    elif "/questions/" in template:
        ids["id"] = w.question.pk
    elif "/questions" in template:
        role = "annotator"
    return re.sub(r"\{(\w+)\}", lambda m: str(ids[m.group(1)]), template), role


def well_formed_api_body(w, template):
    """The other fields of the write, well formed: the NUL field is then the only thing wrong with it."""
    bodies = {
        "/resolve/": {"reason": "because"},  # and the field: exactly one of path, label, side decides
        "/questions/": {"turn": w.turn.pk, "sentence": w.sentence.pk, "body": "Is this grounded?", "path": {}},
        "/messages/": {"body": "An answer."},
        "/feedback/": {"annotation": w.peer_annotation.pk, "comment": "Look again.", "expected_label": "faithful"},
        "/override/": {"label": "faithful", "reason": "because"},
        "/note/": {"sentence": w.sentence.pk, "note": "a note", "expected_version": w.assignment.version},
        "/answer/": {"sentence": w.sentence.pk, "step": "relevance", "answer": "relevant"},
        "/label/": {"sentence": w.sentence.pk, "label": "faithful"},
        "/draws/": {"strategy": "random", "size": 1},
        "/release/": {"reason": "gone"}, "/reopen/": {"reason": "again"},
    }
    return next((body for suffix, body in bodies.items() if template.endswith(suffix)), {})


@UNSTORABLE
def test_every_text_field_of_every_api_write_refuses_a_nul_with_a_400_naming_it(bad):
    w = make_world()
    w.assignment.refresh_from_db()
    failures, tried = [], 0
    for method, template, fields in api_writes():
        url, role = api_path(w, template)
        client = client_of(w.users[role])
        for name, part in fields.items():
            for value in nul_values(part, bad) or []:
                tried += 1
                body = {**well_formed_api_body(w, template), name: value}
                response = getattr(client, method)(url, json.dumps(body), content_type="application/json")
                errors = response.json().get("errors", {}) if response.status_code == 400 else {}
                # Named as a field, or the refusal quotes the value (a protocol path refused as a whole).
                detail = response.json().get("detail", "") if response.status_code == 400 else ""
                named = any(key.split(".")[0] == name for key in errors) or "\\x00" in detail
                if response.status_code != 400 or not named:
                    failures.append(f"{method.upper()} {url} {name}={value!r}: {response.status_code} "
                                    f"{response.content[:200]!r}")
    assert tried > 30
    assert not failures, "\n".join(failures)
