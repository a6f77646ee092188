"""JSON nested too deep, or holding an integer of more than 4,300 digits, is a 400 with the route's error body on
every route that parses JSON, never a 500 with an HTML body.

Python's json raised RecursionError on an array nested ~1,000 deep and ValueError on an integer past its digit
limit (``sys.get_int_max_str_digits``); both reached the views as 500s: the anonymous ``POST /api/v1/auth/token/``,
every API write with a JSON body (DRF's parser), the annotation page's ``/a/<id>/sync/`` and the JSON fields of
the pages' forms (a question's decision path, an adjudicator's walk). The API reads JSON through
``api.parsers.LimitedJSONParser``, the pages through ``annotator.json_input.json_loads_limited``
(docs/reliability.md, "Integrity round 4"). The protocol page and its preview read their documents with the
protocol's own limits (``PROTOCOL_MAX_DEPTH``), tested with the protocol documents.
"""

import json

import pytest
from django.test import Client, override_settings
from django.urls import reverse

from tests.malformed_world import make_world, snapshot
from tests.test_nul_everywhere import api_path, api_writes

pytestmark = pytest.mark.django_db

BODIES = {
    "an array 100,000 deep": "[" * 100_000 + "]" * 100_000,
    "an object 5,000 deep": '{"a":' * 5_000 + "1" + "}" * 5_000,
    "an integer of 5,000 digits": '{"version": ' + "9" * 5_000 + "}",
    "nested past JSON_MAX_DEPTH": '{"version": 1, "x": ' + "[" * 40 + "]" * 40 + "}",
}
# What fits in a form field of the pages (at most 5,000 characters of JSON; the adjudicator's walk 1,000).
FIELD_VALUES = {
    "an array 2,500 deep": "[" * 2_500 + "]" * 2_500,
    "an array 500 deep": "[" * 500 + "]" * 500,
    "an integer of 4,500 digits": '{"relevance": ' + "9" * 4_500 + "}",
}


def client_of(user=None):
    client = Client(raise_request_exception=False)  # an exception is answered as the server would: 500
    if user is not None:
        client.force_login(user)
    return client


def is_api_error(response) -> bool:
    """The API's one error body: JSON with status, code and detail."""
    if response.status_code != 400 or response["Content-Type"] != "application/json":
        return False
    body = response.json()
    return body.get("status") == 400 and bool(body.get("code")) and bool(body.get("detail"))


@pytest.mark.parametrize("name", BODIES)
def test_the_anonymous_token_route_answers_a_400_with_the_api_error_body(name):
    response = client_of().post("/api/v1/auth/token/", BODIES[name], content_type="application/json")
    assert is_api_error(response), (response.status_code, response.content[:300])


@pytest.mark.parametrize("name", BODIES)
def test_every_api_write_with_a_json_body_answers_a_400_with_the_api_error_body(name):
    w = make_world()
    before, failures, tried = snapshot(), [], 0
    for method, template, _fields in api_writes():
        url, role = api_path(w, template)
        tried += 1
        response = getattr(client_of(w.users[role]), method)(url, BODIES[name], content_type="application/json")
        if not is_api_error(response):
            failures.append(f"{method.upper()} {url}: {response.status_code} {response.content[:200]!r}")
    assert tried > 20
    assert not failures, "\n".join(failures)
    assert snapshot() == before


@pytest.mark.parametrize("name", BODIES)
def test_the_annotation_pages_sync_answers_a_400_with_its_error_body(name):
    w = make_world()
    before = snapshot()
    response = client_of(w.annotator).post(f"/a/{w.assignment.pk}/sync/", BODIES[name], content_type="application/json")
    assert response.status_code == 400 and response["Content-Type"] == "application/json", response.content[:300]
    assert response.json()["error"]
    assert snapshot() == before


@pytest.mark.parametrize("name", FIELD_VALUES)
def test_the_json_fields_of_the_pages_forms_answer_a_400(name):
    w = make_world()
    before = snapshot()
    asked = client_of(w.annotator).post(reverse("qa:ask", args=[w.project.slug]),
                                        {"turn": w.turn.pk, "body": "Is this grounded?", "path": FIELD_VALUES[name]})
    assert asked.status_code == 400, asked.content[:300]
    walk = FIELD_VALUES[name][:1000]  # the adjudicator's walk is at most 1,000 characters
    resolved = client_of(w.adjudicator).post(reverse("gold_resolve", args=[w.project.slug, w.adjudication.pk]),
                                             {"decision": "protocol", "path": walk, "reason": "because"})
    assert resolved.status_code == 400, resolved.content[:300]
    assert snapshot() == before


def test_json_max_depth_is_a_setting():
    """A body within the setting is read (a 400 for its content, not its depth); one level past it is refused."""
    within = '{"username": ' + "[" * 5 + "]" * 5 + "}"
    with override_settings(JSON_MAX_DEPTH=6):
        answer = client_of().post("/api/v1/auth/token/", within, content_type="application/json")
        assert answer.status_code == 400 and "username" in answer.json()["errors"]
    with override_settings(JSON_MAX_DEPTH=5):
        answer = client_of().post("/api/v1/auth/token/", within, content_type="application/json")
        assert is_api_error(answer) and "JSON_MAX_DEPTH" in answer.json()["detail"]


@pytest.mark.parametrize("name", BODIES)
def test_the_protocol_page_and_its_preview_answer_a_400_naming_the_problem(name):
    """The protocol page and its preview read the editor's text with the protocol's own limits
    (``PROTOCOL_MAX_DEPTH``, Python's integer digits): a refusal listing the problem, never a 500."""
    w = make_world()
    lead = client_of(w.lead)
    before = snapshot()
    page = lead.post(reverse("project_protocol", args=[w.project.slug]), {"source": "edited", "document": BODIES[name]})
    assert page.status_code == 400 and 'data-testid="protocol-form-errors"' in page.content.decode(), page.content[:300]
    preview = lead.post(reverse("project_protocol_preview", args=[w.project.slug]),
                        {"source": "edited", "document": BODIES[name]})
    assert preview.status_code == 200 and 'data-testid="preview-problems"' in preview.content.decode()
    assert snapshot() == before


def test_the_depth_is_read_before_the_parser_so_it_never_reaches_its_recursion_limit():
    """A RecursionError caught inside a request left CPython 3.11's recursion bookkeeping off in that process (a
    later ``ast.parse`` failed with "AST constructor recursion depth mismatch"): too deep is refused unparsed."""
    from annotator.json_input import nesting_exceeds

    assert nesting_exceeds("[" * 100_000 + "]" * 100_000, 32)
    assert not nesting_exceeds('{"note": "[[[[[[[[ a quoted \\" [[[[ bracket", "path": [[1]]}', 3)
    assert nesting_exceeds('{"path": [[[1]]]}', 3) and not nesting_exceeds('{"path": [[[1]]]}', 4)
