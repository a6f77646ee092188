"""The permission matrix: every API endpoint x every role x every method, expected status.

The table is checked against the URL conf: an endpoint added under ``api:`` without
an entry here fails ``test_every_endpoint_is_in_the_matrix``.
"""

import pytest
from django.core.cache import cache
from django.db import transaction
from django.urls import URLPattern, URLResolver, reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotator.models import QualificationResult
from api import urls as api_urls
from tests.factories_api import ROLES, make_world

METHODS = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE")
# A role comes from a membership: superusers lead every project; the staff flag alone is nobody's role.
MEMBERS = {"annotator", "adjudicator", "lead", "superuser"}
LEADS = {"lead", "superuser"}
ADJUDICATORS = {"adjudicator", "lead", "superuser"}
AUTHENTICATED = {"annotator", "outsider", "adjudicator", "lead", "staff", "superuser"}


ASSIGNMENT = {"pk": lambda w: w.assignment.pk}
JOB = {"pk": lambda w: w.job.pk}
QUESTION = {"pk": lambda w: w.question.pk}
FEEDBACK = {"pk": lambda w: w.feedback.pk}


# Project endpoints: {method: (roles allowed, status they get)}. Everyone else:
# anonymous 401, not a member 404 (whatever the method: the project's existence
# does not leak), a member without the role 404, a member using a method the
# endpoint does not have 405. Empty bodies are sent, so an allowed write answers
# 400 (shape checked after the permission) unless it needs no body.
PROJECT_ENDPOINTS = {
    "project-detail": ({}, {"GET": (MEMBERS, 200), "PATCH": (LEADS, 200)}),
    "member-list": ({}, {"GET": (LEADS, 200), "POST": (LEADS, 400)}),
    # Any member reads the protocol; a lead replaces it (an empty body is a document that does not hold: 400).
    "project-protocol": ({}, {"GET": (MEMBERS, 200), "PUT": (LEADS, 400)}),
    "member-detail": (
        {"user_id": lambda w: w.users["annotator"].pk},
        {"GET": (LEADS, 200), "PATCH": (LEADS, 400), "DELETE": (LEADS, 200)},
    ),
    # Uploads are multipart: the JSON body the matrix sends is refused as such (415).
    "import-list": ({}, {"GET": (LEADS, 200), "POST": (LEADS, 415)}),
    "import-detail": ({"pk": lambda w: w.batch.pk}, {"GET": (LEADS, 200)}),
    "dialogue-list": ({}, {"GET": (MEMBERS, 200)}),
    "dialogue-detail": ({"pk": lambda w: w.turn.dialogue_id}, {"GET": (MEMBERS, 200)}),
    "turn-list": ({}, {"GET": (MEMBERS, 200)}),
    "turn-detail": ({"pk": lambda w: w.turn.pk}, {"GET": (MEMBERS, 200)}),
    "sentence-list": ({}, {"GET": (MEMBERS, 200)}),
    "sentence-detail": ({"pk": lambda w: w.annotation.sentence_id}, {"GET": (MEMBERS, 200)}),
    "gold-list": ({}, {"GET": (ADJUDICATORS, 200)}),
    "assignment-list": ({}, {"GET": (MEMBERS, 200)}),
    # Only its holder (the annotator) and leads read an assignment.
    "assignment-detail": ({"pk": lambda w: w.assignment.pk}, {"GET": ({"annotator"} | LEADS, 200)}),
    "annotation-list": ({}, {"GET": (MEMBERS, 200)}),
    # Any member may ask for work (the world has an open turn for each of them); only annotators get a slot
    # unless the project lets adjudicators annotate (SLOT_REFUSED below).
    "assignment-next": ({}, {"POST": (MEMBERS, 200)}),
    # Writes on an assignment: its holder only (an empty body is invalid; the turn is not complete).
    "assignment-answer": (ASSIGNMENT, {"POST": ({"annotator"}, 400)}),
    "assignment-label": (ASSIGNMENT, {"POST": ({"annotator"}, 400)}),
    "assignment-undo": (ASSIGNMENT, {"POST": ({"annotator"}, 400)}),
    "assignment-note": (ASSIGNMENT, {"POST": ({"annotator"}, 400)}),
    "assignment-evidence-add": (ASSIGNMENT, {"POST": ({"annotator"}, 400)}),
    "assignment-evidence-remove": (ASSIGNMENT, {"POST": ({"annotator"}, 400)}),
    "assignment-submit": (ASSIGNMENT, {"POST": ({"annotator"}, 400)}),
    # A lead's actions on any assignment: reopen needs a reason (400); release needs no body (200).
    "assignment-reopen": (ASSIGNMENT, {"POST": (LEADS, 400)}),
    "assignment-release": (ASSIGNMENT, {"POST": (LEADS, 200)}),
    "assignment-reassign": (ASSIGNMENT, {"POST": (LEADS, 400)}),
    "gold-override": ({"sentence_id": lambda w: w.annotation.sentence_id}, {"POST": (LEADS, 400)}),
    "gold-export": ({}, {"GET": (LEADS, 200)}),
    "adjudication-list": ({}, {"GET": (ADJUDICATORS, 200)}),
    "adjudication-detail": ({"pk": lambda w: w.adjudication.pk}, {"GET": (ADJUDICATORS, 200)}),
    "adjudication-resolve": ({"pk": lambda w: w.adjudication.pk}, {"POST": (ADJUDICATORS, 400)}),
    "agreement-report": ({}, {"GET": (LEADS, 200)}),
    "autolabel-job-list": ({}, {"GET": (LEADS, 200), "POST": (LEADS, 400)}),
    "autolabel-job-detail": (JOB, {"GET": (LEADS, 200)}),
    "autolabel-job-estimate": ({}, {"POST": (LEADS, 400)}),
    # The learned judge: the world has none trained (404); training needs no body (202, queued); a job needs one.
    "learned-judge": ({}, {"GET": (LEADS, 404)}),
    "learned-judge-train": ({}, {"POST": (LEADS, 202)}),
    "learned-judge-label": ({}, {"POST": (LEADS, 400)}),
    "learned-judge-out-of-fold": ({}, {"GET": (LEADS, 404)}),
    "autolabel-job-cancel": (JOB, {"POST": (LEADS, 200)}),
    "autolabel-prediction-list": (JOB, {"GET": (LEADS, 200)}),
    "autolabel-job-faithfulness": (JOB, {"GET": (LEADS, 200)}),
    "autolabel-job-evaluation": (JOB, {"GET": (LEADS, 200)}),
    "autolabel-job-draws": (JOB, {"GET": (LEADS, 200), "POST": (LEADS, 400)}),
    "question-list": ({}, {"GET": (MEMBERS, 200), "POST": (MEMBERS, 400)}),
    # The annotator's question: the asker and leads read it; the adjudicator does not.
    "question-detail": (QUESTION, {"GET": ({"annotator"} | LEADS, 200)}),
    "question-reply": (QUESTION, {"POST": ({"annotator"} | LEADS, 400)}),
    "question-close": (QUESTION, {"POST": (LEADS, 200)}),
    "feedback-list": ({}, {"GET": (MEMBERS, 200), "POST": (LEADS, 400)}),
    "feedback-detail": (FEEDBACK, {"GET": ({"annotator"} | LEADS, 200)}),
    # Only the annotator it is addressed to acknowledges feedback.
    "feedback-acknowledge": (FEEDBACK, {"POST": ({"annotator"}, 200)}),
    "qualification": ({}, {"GET": (LEADS, 200), "PUT": (LEADS, 400)}),
    # Leads read the project's flags, anyone else their own (tests/test_unit_flags_views.py).
    "unit-flag-list": ({}, {"GET": (MEMBERS, 200)}),
    # A failed attempt of the annotator: a lead allows a retry without a body.
    "qualification-retry": ({"pk": lambda w: QualificationResult.objects.create(
        project=w.project, annotator=w.users["annotator"], correct=1, total=3).pk}, {"POST": (LEADS, 200)}),
}


def everyone(status_by_method, anonymous=None):
    """A full {role: {method: status}} table from {method: status} for authenticated users."""
    table = {}
    for role in ROLES:
        row = {}
        for method in METHODS:
            if role == "anonymous" and anonymous is not None:
                row[method] = anonymous.get(method, anonymous.get("*"))
            else:
                row[method] = status_by_method.get(method, status_by_method.get("*", 405))
        table[role] = row
    return table


# Endpoints whose roles above are object-level (the holder or asker, plus leads), not project roles.
HELD_OBJECTS = {name for name in PROJECT_ENDPOINTS if name.startswith(("assignment-", "question-", "feedback-"))
                and name not in ("assignment-list", "assignment-next", "assignment-reopen", "assignment-release",
                                 "assignment-reassign", "question-list", "question-close", "feedback-list")}

READ = {"GET": 200, "HEAD": 200, "OPTIONS": 200}
PAGE = {"GET": 200, "HEAD": 200}

# Endpoints outside a project: explicit tables.
GLOBAL_ENDPOINTS = {
    "me": everyone(READ, anonymous={"*": 401}),
    "project-list": everyone(READ, anonymous={"*": 401}),
    # POST is the login (empty body: 400); DELETE revokes your own token.
    "token": everyone({"POST": 400, "DELETE": 204, "OPTIONS": 200},
                      anonymous={"*": 405, "POST": 400, "DELETE": 401, "OPTIONS": 200}),
    # The schema and its viewers need a login like every endpoint (401 before any method check).
    "schema": everyone(READ, anonymous={"*": 401}),
    # HTML pages: GET and HEAD only.
    "swagger-ui": everyone(PAGE, anonymous={"*": 401}),
    "redoc": everyone(PAGE, anonymous={"*": 401}),
    # The HTML page of the user menu (GET and POST only): login redirect for anonymous; a POST redirects back.
    "token-page": everyone({"GET": 200, "POST": 302}, anonymous={"*": 302}),
    # Any other URL under /api/ (here /api/no/such/thing/): a JSON 404 for everyone, whatever the method.
    "not-found": everyone({"*": 404}, anonymous={"*": 404}),
}


# Members who take no annotation slot while Project.adjudicators_may_annotate is off (the default).
SLOT_REFUSED = ADJUDICATORS


def expected_project_status(name, role, method):
    """HEAD answers as GET does; OPTIONS (200) to whoever may use one of the endpoint's methods."""
    _, spec = PROJECT_ENDPOINTS[name]
    if role == "anonymous":
        return 401
    if role in ("outsider", "staff"):
        return 404
    if name == "assignment-next" and method == "POST" and role in SLOT_REFUSED:
        return 403
    if method == "HEAD":
        method = "GET"
    if method == "OPTIONS":
        if name in HELD_OBJECTS:
            return 200  # who may act is decided per object; describing the endpoint reveals no object
        return 200 if any(role in roles for roles, _ in spec.values()) else 404
    if method not in spec:
        return 405
    roles, status = spec[method]
    return status if role in roles else 404


def api_url_names():
    names = []

    def walk(patterns):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns)
            elif isinstance(pattern, URLPattern) and pattern.name:
                names.append(pattern.name)

    walk(api_urls.urlpatterns)
    return names


def test_every_endpoint_is_in_the_matrix():
    names = api_url_names()
    assert len(names) == len(set(names)), "duplicate URL names"
    assert set(names) == set(PROJECT_ENDPOINTS) | set(GLOBAL_ENDPOINTS)


def client_for(user):
    client = APIClient()
    if user is not None:
        client.force_login(user)  # the HTML page uses the session
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def call(client, method, url):
    kwargs = {"format": "json"} if method in ("POST", "PUT", "PATCH") else {}
    if method in ("POST", "PUT", "PATCH"):
        kwargs["data"] = {}
    return getattr(client, method.lower())(url, **kwargs)


@pytest.fixture(autouse=True)
def fresh_throttle_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """One world for the module's cases (each pytest-xdist worker builds its own), inside a transaction
    rolled back when the module is done. Every case runs in a savepoint of its own (pytest-django's
    ``django_db``), so what a case writes (a DELETE, a release, a retry) is undone before the next case."""
    with django_db_blocker.unblock(), transaction.atomic():
        yield make_world()
        transaction.set_rollback(True)


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name", sorted(PROJECT_ENDPOINTS))
def test_project_endpoint_matrix(world, name, role):
    kwarg_makers, _ = PROJECT_ENDPOINTS[name]
    kwargs = {"slug": world.project.slug, **{k: make(world) for k, make in kwarg_makers.items()}}
    url = reverse(f"api:{name}", kwargs=kwargs)
    client = client_for(world.users[role])
    got = {method: call(client, method, url).status_code for method in METHODS}
    expected = {method: expected_project_status(name, role, method) for method in METHODS}
    assert got == expected, f"{role} on {url}"


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name", sorted(GLOBAL_ENDPOINTS))
def test_global_endpoint_matrix(world, name, role):
    url = reverse(f"api:{name}", kwargs={"rest": "no/such/thing/"} if name == "not-found" else None)
    client = client_for(world.users[role])
    got = {}
    for method in METHODS:
        got[method] = call(client, method, url).status_code
    assert got == GLOBAL_ENDPOINTS[name][role], f"{role} on {url}"


@pytest.mark.django_db
def test_a_project_that_does_not_exist_looks_like_one_you_cannot_see(world):
    client = client_for(world.users["outsider"])
    hidden = client.get(reverse("api:project-detail", kwargs={"slug": world.project.slug}))
    missing = client.get(reverse("api:project-detail", kwargs={"slug": "no-such-project"}))
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json() == missing.json()
