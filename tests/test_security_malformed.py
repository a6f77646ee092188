"""No HTML route answers 5xx to malformed input, and a malformed request writes nothing.

Every route of the URL conf that accepts a POST (tests/url_walk.py walks them, so a
route added later fails ``test_every_html_post_route_has_malformed_probes`` until it
is given probes in tests/malformed_probes.py) is sent, as the role that can reach it, malformed values of
each field it reads: non-numeric, negative and 20-digit ids, numbers that are no
numbers, unknown vocabulary values, over-long texts, NUL characters, missing fields,
a JSON body instead of a form. Every answer must be below 500, the form checks must
answer 400, and no row may change. The GET query parameters of the HTML pages
(``?annotator=``, ``?sentence=``, ``?page=``, filters) get the same treatment.
"""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotator import models
from annotator.work.services import annotation_evidence_add
from annotator.work.write import AnnotationError
from tests.malformed_probes import (COMMON_QUERY, FORM_ANSWER_NOT_REQUIRED, MALFORMED, PROBES,
                                    QUERY_PROBES, QUERY_VALUES, READS_NO_POST, well_formed)
from tests.malformed_world import Unchanged, make_world, path_values, snapshot
from tests.url_walk import routes, simple_values, urls

# Whole-route walks with malformed parameters: `slow` has tests/conftest.py start this module first.
pytestmark = [pytest.mark.django_db, pytest.mark.slow]

def assert_none(failures):
    """Fail with the list, server errors first: they are what this file is about."""
    failures.sort(key=lambda line: not line.endswith(tuple(f": {code}" for code in range(500, 600))))
    assert not failures, "\n".join(failures[:80])


def client_for(user, htmx):
    # An exception is answered as the server would (500), so that every failing probe is listed.
    client = Client(headers={"HX-Request": "true"} if htmx else {}, raise_request_exception=False)
    client.force_login(user)
    return client


def post_routes():
    """(route, url) of every HTML route that takes a POST (the others answer 405), with simple path values."""
    staff = get_user_model().objects.create(username="walker", is_staff=True, is_superuser=True)
    client = client_for(staff, htmx=False)
    found = {}
    # Sign-out last: a POST to it ends the walker's session, and every route after it would answer the
    # redirect to the sign-in page instead of its own 405.
    for route, url in sorted(urls(simple_values), key=lambda walked: walked[0].name == "logout"):
        if route.is_api or route.is_admin or route.name in found:
            continue
        if client.post(url).status_code != 405:
            found[route.name] = route
    return found


def test_every_html_post_route_has_malformed_probes():
    """A route added later that takes a POST must be given probes above (or this fails)."""
    probed = {name for name, _ in PROBES}
    missing = sorted(set(post_routes()) - probed - READS_NO_POST)
    assert not missing, f"POST routes without malformed-input probes: {missing}"
    assert len(PROBES) > 40


def test_pages_that_ignore_a_post_body_never_answer_5xx_to_one():
    w = make_world()
    by_name = {route.name: route for route in routes()}
    failures = []
    for name in sorted(READS_NO_POST):
        role = "annotator" if name in ("qa:my_questions", "qa:feedback_inbox") else "lead"
        values = path_values(w, name)
        url = by_name[name].fill({param: values[param] for param, _ in by_name[name].parameters})
        client = client_for(w.users[role], htmx=False)
        for body in ({"turn": "-1", "sentence": "abc", "annotator": "-1", "label": "x"},
                     {"page": "99999999999999999999", "job": "abc"}):
            response = client.post(url, body)
            if response.status_code >= 500:
                failures.append(f"POST {url} {body}: {response.status_code}")
    assert_none(failures)


def malformed_bodies(w, probe, body_action):
    """(description, body, needs a form answer) for every malformed variant of the probe's body."""
    base = {**body_action, **well_formed(w, probe)}
    for name, kind in probe.fields.items():
        for value in MALFORMED[kind]:
            yield f"{name}={value[:30]!r}", {**base, name: value}, True
    for name in probe.required:
        yield f"without {name}", {key: value for key, value in base.items() if key != name}, True


@pytest.mark.parametrize("key", list(PROBES), ids=[f"{name}-{action}" if action else name for name, action in PROBES])
def test_malformed_posts_are_refused_without_a_5xx_and_write_nothing(key):
    route_name, action = key
    probe = PROBES[key]
    w = make_world()
    by_name = {route.name: route for route in routes()}
    values = {**path_values(w, route_name), **probe.path}
    route = by_name[route_name]
    body_action = {}
    if action and "action" in dict(route.parameters):
        values["action"] = action
    elif action:
        body_action = {"action": action}
    url = route.fill(values)
    state = Unchanged()
    failures = []
    for htmx in (False, True):
        client = client_for(w.users[probe.role], htmx)
        if probe.session:
            session = client.session
            session.update(probe.session)
            session.save()
        variants = list(malformed_bodies(w, probe, body_action))
        variants.append(("a JSON body", None, False))
        for description, body, needs_form in variants:
            if body is None:
                response = client.post(url, data='{"sentence": [1], "version": {"a": 1}}', content_type="application/json")
            else:
                response = client.post(url, body)
            where = f"POST {url} {description} (htmx={htmx})"
            if response.status_code >= 500:
                failures.append(f"{where}: {response.status_code}")
            elif needs_form and route_name not in FORM_ANSWER_NOT_REQUIRED and response.status_code != 400:
                failures.append(f"{where}: {response.status_code}, not 400")
            if probe.fields and state.changed():  # a route that reads no field may act on any POST
                failures.append(f"{where}: wrote something")
    assert_none(failures)


def test_the_write_check_sees_a_saved_change_once_and_ignores_reads_and_untracked_rows():
    """What the POST probes above rely on: a read leaves the check quiet; a note the annotator saves is a change,
    seen once; a row written outside the snapshot (the annotator's session) moves the count but changes nothing."""
    w = make_world()
    state = Unchanged()
    client = client_for(w.annotator, htmx=False)
    assert client.get(f"/a/{w.assignment.pk}/").status_code == 200
    assert not state.changed()
    saved = client.post(f"/a/{w.assignment.pk}/note/", {"sentence": w.sentence.pk, "note": "a note",
                                                        "expected_version": w.assignment.version})
    assert saved.status_code in (200, 302) and models.SentenceAnnotation.objects.filter(note="a note").exists()
    assert state.changed() and not state.changed()
    client.session.save()  # a row of django_session: written, not part of the snapshot
    models.Sentence.objects.filter(pk=w.sentence.pk).update(start=w.sentence.start)  # the same values again
    assert not state.changed()


def test_a_400_says_what_was_wrong():
    """For a page: an error page naming the field; for htmx: the panel (annotation screen) or a plain-text reason."""
    w = make_world()
    url = f"/a/{w.assignment.pk}/evidence_add/"
    page = client_for(w.annotator, htmx=False).post(url, {"sentence": w.sentence.pk, "start": "-1000000000", "end": "5"})
    assert page.status_code == 400 and "Start:" in page.content.decode() and "Nothing was saved" in page.content.decode()
    panel = client_for(w.annotator, htmx=True).post(url, {"sentence": w.sentence.pk, "start": "-1", "end": "5"})
    assert panel.status_code == 400 and 'id="decision-panel"' in panel.content.decode()
    assert "greater than or equal to 0" in panel.content.decode()
    ask = client_for(w.annotator, htmx=True).post(f"/p/{w.project.slug}/qa/ask/", {"turn": "abc"})
    assert ask.status_code == 400 and ask["Content-Type"].startswith("text/plain")
    assert ask.content.decode() == "Turn: Enter a whole number."


def test_evidence_offsets_outside_the_reference_are_refused_by_the_service():
    """The service checks the range before indexing the reference (a negative offset raised IndexError)."""
    w = make_world()
    for start, end in ((-1_000_000_000, 5), (0, 10**12), (-5, -1)):
        with pytest.raises(AnnotationError):
            annotation_evidence_add(w.assignment, w.sentence, start, end, actor=w.annotator)
    assert models.EvidenceSpan.objects.count() == 1


def get_pages(w):
    """(route name, URL) of every HTML page that answers a GET, as the role that can see it."""
    by_role = {"annotate": "annotator", "claims_triplet_panel": "annotator", "qa:my_questions": "annotator",
               "qa:feedback_inbox": "annotator", "workspace_queue": "annotator"}
    found = []
    for route in routes():
        if route.is_api or route.is_admin or route.name in ("logout", "") or not route.name:
            continue
        values = path_values(w, route.name)
        if "action" in dict(route.parameters):
            continue  # the POST-only action routes
        url = route.fill({name: values.get(name, "x") for name, _ in route.parameters})
        found.append((route.name, url, by_role.get(route.name, "lead")))
    return found


def test_malformed_query_parameters_of_html_pages_never_answer_5xx():
    w = make_world()
    before = snapshot()
    failures = []
    clients = {role: client_for(user, htmx=False) for role, user in w.users.items()}
    for route_name, url, role in get_pages(w):
        client = clients[role]
        checks = [(f"all={value[:20]!r}", {name: value for name in COMMON_QUERY}, False) for value in QUERY_VALUES]
        for name, kind in QUERY_PROBES.get(route_name, {}).items():
            checks += [(f"{name}={value[:20]!r}", {name: value}, True) for value in MALFORMED[kind]]
        for description, query, needs_form in checks:
            response = client.get(url, query)
            if response.status_code == 405:
                break  # a POST-only route
            where = f"GET {url}?{description}"
            if response.status_code >= 500:
                failures.append(f"{where}: {response.status_code}")
            elif needs_form and response.status_code != 400:
                failures.append(f"{where}: {response.status_code}, not 400")
    assert set(QUERY_PROBES) <= {name for name, _, _ in get_pages(w)}
    assert_none(failures)
    assert snapshot() == before


def test_a_nul_in_any_query_parameter_is_refused_before_a_view_reads_it():
    """PostgreSQL cannot hold NUL: a search box or a project slug read outside a form answered 500 there."""
    w = make_world()
    client = client_for(w.users["lead"], htmx=False)
    for url in ("/qa/questions/?project=%00", f"/p/{w.project.slug}/qa/qualification/?q=a%00b",
                f"/p/{w.project.slug}/turns/?x%00=1"):
        response = client.get(url)
        assert response.status_code == 400 and b"NUL character" in response.content, url
    api = client.get(f"/api/v1/projects/{w.project.slug}/turns/?topic=%00")
    assert api.status_code == 400 and api.json()["code"] == "invalid" and set(api.json()["errors"]) == {"topic"}
