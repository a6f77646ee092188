"""The API and step kinds (issue 42): a path's values are strings, integers or arrays of strings, as the OpenAPI
schema says, and they come back as they are stored (a list stays a list, a scale's point an integer)."""

import json

import pytest
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer

from annotator.models import Assignment, SentenceAnnotation
from api.serializers.common import PATH_VALUE_SCHEMA
from annotator.domain.vocabulary import Role
from tests.factories import AssignmentFactory, member
from tests.factories_api import fast, token_client, url, world  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db

# Stored by a protocol with kinds (annotator/protocols/halludetect.json): the database keeps JSON values as given.
KIND_PATH = {"supported": "no", "error_types": ["fabricated_fact", "wrong_citation"], "severity": 4,
             "justification": "The cited case does not exist."}


def _schema() -> dict:
    return json.loads(OpenApiJsonRenderer().render(SchemaGenerator().get_schema(request=None, public=True)))


def test_the_schema_describes_a_path_value_as_string_integer_or_array_of_strings():
    components = _schema()["components"]["schemas"]
    described = {name: schema["properties"]["path"] for name, schema in components.items()
                 if "path" in schema.get("properties", {})}
    # Every resource with a decision path, read or written.
    assert {"Gold", "Adjudication", "DisputedAnnotation", "ResolveRequest", "SentenceAnnotation", "Question",
            "AskRequest"} <= set(described)
    for name, path in described.items():
        assert path["type"] == "object", name
        assert path["additionalProperties"] == PATH_VALUE_SCHEMA, name
    types = [option["type"] for option in PATH_VALUE_SCHEMA["oneOf"]]
    assert types == ["string", "integer", "array"]
    assert PATH_VALUE_SCHEMA["oneOf"][2]["items"]["type"] == "string"


def test_a_path_with_kind_values_is_read_back_as_stored(world):
    world.gold.path = KIND_PATH
    world.gold.save()
    lead = token_client(world.users["lead"])
    golds = lead.get(url("gold-list", world)).json()["results"]
    assert KIND_PATH in [gold["path"] for gold in golds]

    # The disputed answers an adjudicator reads: a list was written as its Python text ("['a', 'b']") and an
    # integer as a string before paths held kinds.
    sentence = world.adjudication.sentence
    for name in ("first", "second"):
        assignment = AssignmentFactory(turn=world.turn, annotator=member(world.project, Role.ANNOTATOR, username=name),
                                       status=Assignment.Status.SUBMITTED)
        SentenceAnnotation.objects.create(assignment=assignment, sentence=sentence, path=KIND_PATH, label="")
    disputed = token_client(world.users["adjudicator"]).get(url("adjudication-list", world)).json()["results"]
    paths = [a["path"] for d in disputed for a in d["annotations"]]
    assert paths and all(path == KIND_PATH for path in paths)


@pytest.mark.parametrize("value", [[1, 2], {"a": "b"}, True, None, "x" * 5001, [["nested"]], 10**12])
def test_a_path_value_of_no_kind_is_a_field_error_not_a_crash(world, value):
    annotator = token_client(world.users["annotator"])
    sentence = world.turn.sentences.first()
    response = annotator.post(url("question-list", world), {
        "turn": world.turn.pk, "sentence": sentence.pk, "body": "Which kind?", "path": {"relevance": value}},
        format="json")
    assert response.status_code == 400, response.content
    assert "path.relevance" in response.json()["errors"]


def test_a_resolve_with_a_list_value_is_read_by_the_protocol_not_refused_by_the_shape(world):
    """CogniBench has no multiple step: the list reaches the protocol, which refuses it by its step (a 400 naming
    the problem), instead of the serializer refusing any list."""
    adjudicator = token_client(world.users["adjudicator"])
    response = adjudicator.post(url("adjudication-resolve", world, pk=world.adjudication.pk), {
        "path": {"relevance": ["relevant"]}, "reason": "A list where one answer is asked."}, format="json")
    assert response.status_code == 400, response.content
    body = response.json()
    assert "path" not in body.get("errors", {}), body
    assert "relevance" in body["detail"]
