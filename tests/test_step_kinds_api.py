"""The API and step kinds (issue 42): a path's values are strings, integers or arrays of strings, as the OpenAPI
schema says, and they come back as they are stored (a list stays a list, a scale's point an integer)."""

import copy
import json
from html import unescape

import pytest
from django.test import Client
from django.urls import reverse
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer

from annotator.models import Assignment, SentenceAnnotation
from api.serializers.common import PATH_VALUE_SCHEMA
from annotator.domain.protocol.document import load_shipped
from annotator.domain.vocabulary import Role
from tests.factories import AssignmentFactory, ProjectFactory, TurnFactory, member
from tests.factories_api import fast, token_client, url, world  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db

# Stored by a protocol with kinds (annotator/protocols/halludetect.json): the database keeps JSON values as given.
KIND_PATH = {"supported": "no", "error_types": ["fabricated", "wrong_citation"], "severity": 4,
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


@pytest.mark.parametrize("value", [[1, 2], {"a": "b"}, True, None, "x" * 5001, [["nested"]], 10**12, "a\x00b",
                                   ["a\x00"]])
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


def _api(name, project, **kwargs):
    return reverse(f"api:{name}", kwargs={"slug": project.slug, **kwargs})


def test_a_lead_puts_a_document_with_kinds_and_an_annotator_answers_every_kind():
    halludetect = load_shipped("halludetect")
    project = ProjectFactory(slug="hd-api")
    TurnFactory(dialogue__project=project)
    lead = token_client(member(project, Role.LEAD, username="hd-lead"))
    put = lead.put(_api("project-protocol", project), halludetect.document, format="json")
    assert put.status_code == 200, put.json()
    assert put.json() == halludetect.document == lead.get(_api("project-protocol", project)).json()
    assert [step.get("kind", "choice") for step in put.json()["steps"]] == ["choice", "multiple", "scale", "text"]
    broken = copy.deepcopy(halludetect.document)
    scale = next(step for step in broken["steps"] if step.get("kind") == "scale")
    scale["min"], scale["max"] = 5, 1
    refused = lead.put(_api("project-protocol", project), broken, format="json")
    assert refused.status_code == 400
    assert any(problem["path"].startswith("/steps/2") for problem in refused.json()["problems"]), refused.json()

    annotator = token_client(member(project, Role.ANNOTATOR, username="hd-ann"))
    assignment = annotator.post(_api("assignment-next", project)).json()
    sentence = assignment["turn_detail"]["sentences"][0]["id"]
    answer_url = _api("assignment-answer", project, pk=assignment["id"])

    def answer(step, value):
        return annotator.post(answer_url, {"sentence": sentence, "step": step, "answer": value}, format="json")

    assert answer("supported", ["no"]).json()["errors"].keys() == {"answer"}  # a list to a choice step
    assert answer("supported", "maybe").status_code == 400
    assert answer("supported", "no").json()["next_step"] == "error_types"
    chosen = list(halludetect.answers("error_types")[:2])
    assert answer("error_types", chosen[::-1]).json()["next_step"] == "severity"  # any order: stored in the step's
    assert answer("severity", True).status_code == 400  # a bool is not a point
    assert answer("severity", 9).status_code == 400  # outside the scale: the protocol refuses it
    assert answer("severity", 4).json()["next_step"] == "justification"
    done = answer("justification", "The cited case does not exist.").json()
    assert done["next_step"] is None and done["annotation"]["label"] == "unsupported"
    assert done["annotation"]["path"] == {"supported": "no", "error_types": chosen, "severity": 4,
                                          "justification": "The cited case does not exist."}


def test_the_preview_draws_a_document_with_kinds_or_names_a_kinds_problem_by_path():
    halludetect = load_shipped("halludetect")
    project = ProjectFactory(slug="hd-preview")
    lead = Client()
    lead.force_login(member(project, Role.LEAD, username="hd-preview-lead"))
    preview_url = reverse("project_protocol_preview", args=[project.slug])
    drawn = lead.post(preview_url, {"source": "edited", "document": json.dumps(halludetect.document)})
    assert drawn.status_code == 200
    described = json.loads(unescape(drawn.content.decode().split('data-description="')[1].split('"')[0]))
    assert described == halludetect.describe()
    shipped = lead.post(preview_url, {"source": "shipped", "shipped": "halludetect"})
    assert shipped.status_code == 200 and "data-description" in shipped.content.decode()
    broken = copy.deepcopy(halludetect.document)
    multiple = next(step for step in broken["steps"] if step.get("kind") == "multiple")
    multiple["max"] = len(multiple["answers"]) + 1
    refused = lead.post(preview_url, {"source": "edited", "document": json.dumps(broken)}).content.decode()
    assert "<code>/steps/1/max</code>" in refused
