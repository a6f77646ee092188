"""Walk the whole URL conf: every route, with its parameters filled in.

The security tests use this instead of a hand-written list of URLs, so that a
route another engineer adds later is covered without anyone remembering to add
it here. A route whose parameters cannot be filled in fails the walk (extend
``SAMPLE_VALUES``), rather than being skipped silently.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.urls.resolvers import RegexPattern, RoutePattern

# A parameter named like this and written as a regex (admin) gets these values.
SAMPLE_VALUES = {
    "app_label": ["annotator"],
    "model_name": ["project"],
    "object_id": ["1"],
    "content_type_id": ["1"],
    "url": ["x"],
    "path": ["x"],
    "format": [".json"],
    "uidb64": ["MQ"],
    "token": ["set-password"],
    "rest": ["no-such-endpoint/"],
}

ROUTE_PARAMETER = re.compile(r"<(?:(?P<converter>[^>:]+):)?(?P<name>[^>]+)>")
REGEX_GROUP = re.compile(r"\(\?P<(?P<name>\w+)>(?P<body>(?:[^()]|\([^()]*\))*)\)")


@dataclass(frozen=True)
class Route:
    """One route of the URL conf, as a template with ``{name}`` holes."""

    template: str  # e.g. "/p/{slug}/qa/questions/{pk}/"
    parameters: tuple[tuple[str, str], ...]  # (name, converter or "regex:<body>")
    name: str  # namespaced URL name, "" when unnamed
    callback: object

    @property
    def is_api(self) -> bool:
        """A Django REST framework view (answers 401/403 in JSON rather than redirecting to the login page)."""
        from rest_framework.views import APIView

        view_class = getattr(self.callback, "cls", None) or getattr(self.callback, "view_class", None)
        return isinstance(view_class, type) and issubclass(view_class, APIView)

    @property
    def is_admin(self) -> bool:
        return self.template.startswith("/admin/")

    def fill(self, values: dict) -> str:
        return self.template.format(**values)


def _pattern_text(pattern) -> tuple[str, list[tuple[str, str]]]:
    """A template piece and its parameters for one RoutePattern or RegexPattern."""
    if isinstance(pattern, RoutePattern):
        route = str(pattern._route)
        params = []

        def replace(match):
            params.append((match["name"], match["converter"] or "str"))
            return "{" + match["name"] + "}"

        return ROUTE_PARAMETER.sub(replace, route), params
    if isinstance(pattern, RegexPattern):
        regex = pattern._regex
        params = []

        def replace_group(match):
            params.append((match["name"], "regex:" + match["body"]))
            return "{" + match["name"] + "}"

        text = REGEX_GROUP.sub(replace_group, regex)
        text = text.lstrip("^").rstrip("$").replace("\\Z", "")
        text = text.replace("\\.", ".").replace("\\-", "-")
        # Optional trailing slash and similar regex leftovers of admin patterns.
        text = text.replace("/?", "/")
        return text, params
    raise TypeError(f"unknown pattern type {type(pattern)!r}")


def routes() -> list[Route]:
    """Every route of the project's URL conf (views, not includes)."""
    found: list[Route] = []

    def walk(patterns, prefix, params, namespace):
        for entry in patterns:
            text, more = _pattern_text(entry.pattern)
            if isinstance(entry, URLResolver):
                ns = namespace
                if entry.namespace:
                    ns = f"{namespace}{entry.namespace}:"
                walk(entry.url_patterns, prefix + text, params + more, ns)
            elif isinstance(entry, URLPattern):
                name = f"{namespace}{entry.name}" if entry.name else ""
                found.append(Route("/" + prefix + text, tuple(params + more), name, entry.callback))

    walk(get_resolver().url_patterns, "", [], "")
    return found


def candidate_values(route: Route, values_for) -> list[dict]:
    """Every combination of values for the route's parameters.

    ``values_for(name, converter)`` gives the candidates for one parameter (the
    test's real objects); regex parameters of the admin fall back to SAMPLE_VALUES.
    """
    choices = []
    for name, converter in route.parameters:
        if converter.startswith("regex:"):
            options = values_for(name, converter) or SAMPLE_VALUES.get(name)
            if options is None:
                body = converter.removeprefix("regex:")
                # A plain alternation like (auth|annotator): take its first option.
                options = [body.split("|")[0]] if re.fullmatch(r"[\w|]+", body) else None
        else:
            options = values_for(name, converter)
        if not options:
            raise AssertionError(f"no sample value for parameter {name!r} ({converter}) of {route.template}")
        choices.append([(name, str(value)) for value in options])
    return [dict(combo) for combo in itertools.product(*choices)]


def urls(values_for) -> list[tuple[Route, str]]:
    """(route, concrete URL) for every route and every combination of candidate values.

    Each URL is checked to resolve to the route's own view, so that the walk
    really reaches every view.
    """
    out = []
    for route in routes():
        for values in candidate_values(route, values_for):
            url = route.fill(values)
            match = resolve(url)
            assert match.func == route.callback or getattr(match.func, "__wrapped__", None) == route.callback or (
                match.url_name and route.name.endswith(match.url_name)
            ), f"{url} resolves to {match.view_name}, not to the walked route {route.name or route.template}"
            out.append((route, url))
    return out


def integer_like(converter: str) -> bool:
    """Whether a path converter takes integers (``int`` or a project converter such as ``id``)."""
    if converter == "int":
        return True
    if converter.startswith("regex:"):
        return False
    from django.urls.converters import get_converters

    found = get_converters().get(converter)
    return found is not None and re.fullmatch(found.regex, "1") is not None and re.fullmatch(found.regex, "x") is None


def simple_values(name: str, converter: str) -> list:
    """One harmless value per parameter: enough to check what happens before any view runs."""
    if integer_like(converter):
        return [1]
    if converter == "slug":
        return ["some-project"]
    if converter == "uuid":
        return ["00000000-0000-0000-0000-000000000001"]
    if converter.startswith("regex:"):
        return SAMPLE_VALUES.get(name)
    return ["x"]


def ids_by_parameter(pooled: list[int]) -> dict[str, list[int]]:
    """Candidate ids of the named id parameters: ``turn_id`` gets the ids of its own table plus the first few
    of ``pooled`` (so a view that looks up the wrong table is still caught); ``pk`` and any other name are
    for the caller to give all of ``pooled``. Without this, a route with two id slots is walked with every
    pair of ids of every table."""
    from django.contrib.auth import get_user_model

    from annotator import models

    tables = {"adjudication_id": models.Adjudication, "annotation_id": models.SentenceAnnotation,
              "assignment_id": models.Assignment, "batch_id": models.ImportBatch, "sentence_id": models.Sentence,
              "turn_id": models.Turn, "user_id": get_user_model()}
    strangers = set(pooled[:3])
    named = {name: sorted(set(model.objects.values_list("pk", flat=True)) | strangers)
             for name, model in tables.items()}
    return named


def ids_from_one() -> None:
    """Set every table's id sequence just above its largest id, as in a new database: call it before a walk's
    world is built.

    On SQLite the ids of every table start at 1 in each test, so the tables' ids overlap: the pool a walk tries
    in each id slot (the union over the tables) stays small, and a view that looks up the wrong table meets a
    real row of it. On PostgreSQL the sequences keep counting through the test session, each table at its own
    height, so the pool was the sum of the tables' ids and a wrong-table lookup met no row: the isolation walk
    sent 19,456 requests there against 6,536 on SQLite, for the same routes and objects (docs/benchmarks.md).
    The new positions outlive the test's rollback (``setval``, like ``nextval``, is not transactional); the
    rollback empties the tables, so no later row collides."""
    from django.apps import apps
    from django.core.management.color import no_style
    from django.db import connection

    statements = connection.ops.sequence_reset_sql(no_style(), apps.get_models())
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
