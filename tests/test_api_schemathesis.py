"""schemathesis against the OpenAPI schema, as a lead with a token: no 5xx, every response as documented.

Bounded on purpose in the default run: every operation, its schema examples and three generated
requests (valid and malformed alike), so that it runs in the suite, not as a fuzzing campaign. The deeper
run, ``SCHEMATHESIS_DEEP=1`` (``make test-schema-deep``), adds schemathesis's coverage phase (every
boundary value, missing field and wrong type the schema defines: 2,697 requests for the 13 assignment
operations where the default run sends 50) and 100 generated requests an operation
(``SCHEMATHESIS_MAX_EXAMPLES`` sets another number).
The project's slug is pinned to the test world's project so that requests reach the views instead of
stopping at the project lookup.
"""

import os

import pytest
import schemathesis
from django.core.cache import cache
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, settings
from rest_framework.authtoken.models import Token
from schemathesis.config import SchemathesisConfig
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.factories_api import make_world

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
DEEP = os.environ.get("SCHEMATHESIS_DEEP", "") not in ("", "0")
MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", 100 if DEEP else 3))
# The coverage phase's cases are made when the tests are collected (in every pytest-xdist worker) and run
# as explicit examples; they are what made a case take 3-6 s.
CONFIG = SchemathesisConfig.from_dict({"phases": {"coverage": {"enabled": DEEP}}})


@pytest.fixture
def lead_token(db):
    cache.clear()
    world = make_world()
    token, _ = Token.objects.get_or_create(user=world.users["lead"])
    # Requests go straight to the WSGI app, which closes the database connection at the end of each
    # request; like Django's test client, keep the test's connection (and its transaction) open.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield world, token.key
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
        cache.clear()


def load_schema():
    """The schema /api/schema/ serves, generated in process (serving it needs a login, and at collection
    time there is no database to log in with); requests then go to the WSGI app."""
    import json

    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.renderers import OpenApiJsonRenderer

    from config.wsgi import application

    generated = SchemaGenerator().get_schema(request=None, public=True)
    loaded = schemathesis.openapi.from_dict(json.loads(OpenApiJsonRenderer().render(generated)), config=CONFIG)
    loaded.app = application
    loaded.location = "/api/schema/"
    return loaded


# Revoking the token would log the rest of the run out.
schema = load_schema().exclude(method="DELETE", path="/api/v1/auth/token/")


@pytest.mark.django_db
@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES, deadline=None, derandomize=True,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_api_matches_its_schema(case, lead_token):
    world, key = lead_token
    if "slug" in (case.path_parameters or {}):
        case.path_parameters["slug"] = world.project.slug
    case.call_and_validate(headers={"Authorization": f"Token {key}"}, checks=CHECKS)
