"""No HTML route answers 5xx to malformed input, and a malformed request writes nothing.

Every route of the URL conf that accepts a POST (tests/url_walk.py walks them, so a
route added later fails ``test_every_html_post_route_has_malformed_probes`` until it
is given probes here) is sent, as the role that can reach it, malformed values of
each field it reads: non-numeric, negative and 20-digit ids, numbers that are no
numbers, unknown vocabulary values, over-long texts, NUL characters, missing fields,
a JSON body instead of a form. Every answer must be below 500, the form checks must
answer 400, and no row may change. The GET query parameters of the HTML pages
(``?annotator=``, ``?sentence=``, ``?page=``, filters) get the same treatment.
"""

from dataclasses import dataclass, field

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotator import models
from annotator.work.services import annotation_evidence_add
from annotator.work.write import AnnotationError
from annotator.domain.vocabulary import Label
from tests.malformed_world import Unchanged, make_world, path_values, snapshot
from tests.url_walk import routes, simple_values, urls

# Whole-route walks with malformed parameters: `slow` has tests/conftest.py start this module first.
pytestmark = [pytest.mark.django_db, pytest.mark.slow]

# What a field holds, and the malformed values each kind is sent. A request carrying one of
# these must be refused by the form (400) before any lookup or service runs.
ID, NUMBER, ENUM, TEXT, SHORT = "id", "number", "enum", "text", "short"
MALFORMED = {
    ID: ["abc", "-1", "-1000000000", "99999999999999999999", "1.5", "1e3", "0x1f", "1\x00"],
    NUMBER: ["abc", "-1000000000", "99999999999999999999", "1e309", "nan", "9" * 5000],
    ENUM: ["no-such-value", "x" * 5001, "side-99999999999999999999", "relevant\x00"],
    TEXT: ["x" * 100_001, "a\x00b"],
    SHORT: ["x" * 5001, "a\x00b"],  # an idempotency key, a filter: short texts
}


@dataclass
class Probe:
    """How to reach one POST route: who, which path values, a well-formed body, and its fields' kinds."""

    role: str
    fields: dict  # name -> kind (ID, NUMBER, ...)
    body: dict = field(default_factory=dict)  # well-formed values of the other fields
    required: tuple = ()  # fields whose absence is itself malformed (answered 400)
    path: dict = field(default_factory=dict)  # path parameters beyond the route's defaults


SENTENCE_WRITE = {"sentence": ID, "version": NUMBER, "request_id": SHORT, "seconds": NUMBER}
PANEL_WRITE = {"version": NUMBER, "request_id": SHORT}

# One entry per POST route (per action of the routes with an ``action`` slot).
PROBES = {
    ("annotate_act", "answer"): Probe("annotator", {**SENTENCE_WRITE, "step": ENUM, "value": ENUM},
                                      {"step": "relevance", "value": "relevant"}, ("sentence", "step", "value")),
    ("annotate_act", "pick"): Probe("annotator", {**SENTENCE_WRITE, "label": ENUM}, {"label": Label.FAITHFUL},
                                    ("sentence", "label")),
    ("annotate_act", "undo"): Probe("annotator", SENTENCE_WRITE, required=("sentence",)),
    ("annotate_act", "note"): Probe("annotator", {**SENTENCE_WRITE, "note": TEXT}, {"note": "a note"}, ("sentence",)),
    ("annotate_act", "evidence_add"): Probe("annotator", {**SENTENCE_WRITE, "start": NUMBER, "end": NUMBER},
                                            {"start": "4", "end": "10"}, ("sentence",)),
    ("annotate_act", "evidence_remove"): Probe("annotator", {**SENTENCE_WRITE, "evidence": ID}, {"evidence": "evidence"},
                                               ("sentence", "evidence")),
    ("annotate_act", "submit"): Probe("annotator", {**PANEL_WRITE, "then": ENUM}, {"then": "queue"}),
    # The page's background saving takes a JSON batch (tests/test_annotation_sync.py sends it malformed JSON);
    # here it gets form bodies, and the walk's JSON body, which it refuses the same way.
    ("annotate_sync", None): Probe("annotator", {"version": NUMBER, "changes": TEXT}, {"version": "1"}),
    ("annotate_act", "time"): Probe("annotator", {"sentence": ID, "seconds": NUMBER}, {"seconds": "3"}, ("sentence",)),
    ("claims_act", "triplet_label"): Probe("annotator", {**PANEL_WRITE, "triplet": ID, "label": ENUM},
                                           {"triplet": "triplet", "label": "Neutral"}, ("triplet",)),
    ("claims_act", "triplet_add"): Probe("annotator", {**PANEL_WRITE, "head": TEXT, "relation": TEXT, "tail": TEXT,
                                                       "sentence": ID},
                                         {"head": "Amazon", "relation": "is", "tail": "wide"}),
    ("claims_act", "triplet_edit"): Probe("annotator", {**PANEL_WRITE, "triplet": ID, "head": TEXT, "relation": TEXT,
                                                        "tail": TEXT, "sentence": ID},
                                          {"triplet": "triplet", "head": "A", "relation": "b", "tail": "c"},
                                          ("triplet",)),
    ("claims_act", "triplet_delete"): Probe("annotator", {**PANEL_WRITE, "triplet": ID}, {"triplet": "triplet"},
                                            ("triplet",)),
    ("claims_act", "severity"): Probe("annotator", {**PANEL_WRITE, "sentence": ID, "severity": ENUM,
                                                    "justification": TEXT},
                                      {"severity": "3", "justification": "why"}, ("sentence",)),
    ("claims_act", "error_type"): Probe("annotator", {**PANEL_WRITE, "sentence": ID, "error_type": SHORT},
                                        {"error_type": "contradiction"}, ("sentence",)),
    ("claims_dispute_resolve", None): Probe("adjudicator", {"label": ENUM, "reason": TEXT},
                                            {"label": "Neutral", "reason": "because"}),
    # This route names its action in the body (``action``), not in the path.
    ("claims_turn_triplets_change", "add"): Probe("lead", {"action": ENUM, "head": TEXT, "relation": TEXT, "tail": TEXT,
                                                           "sentence": ID},
                                                  {"head": "A", "relation": "b", "tail": "c"}, ("action",)),
    ("claims_turn_triplets_change", "edit"): Probe("lead", {"action": ENUM, "triplet": ID, "head": TEXT,
                                                            "relation": TEXT, "tail": TEXT, "sentence": ID},
                                                   {"triplet": "triplet", "head": "A", "relation": "b", "tail": "c"},
                                                   ("action", "triplet")),
    ("claims_turn_triplets_change", "delete"): Probe("lead", {"action": ENUM, "triplet": ID}, {"triplet": "triplet"},
                                                     ("action", "triplet")),
    ("claims_turn_triplets_change", "override"): Probe("lead", {"action": ENUM, "triplet": ID, "label": ENUM,
                                                                "reason": TEXT},
                                                       {"triplet": "triplet", "label": "Neutral", "reason": "because"},
                                                       ("action", "triplet")),
    ("workspace_next", None): Probe("annotator", {}),
    ("workspace_release_stale", None): Probe("lead", {"stale": ENUM}, {"stale": "24"}),
    ("workspace_release", None): Probe("lead", {"reason": TEXT}, {"reason": "gone"}),
    ("workspace_reassign", None): Probe("lead", {"annotator": ID}, {"annotator": "peer"}, ("annotator",)),
    ("gold_queue_settings", None): Probe("lead", {"adjudication_order": ENUM, "imported_gold": ENUM},
                                         {"adjudication_order": "oldest", "imported_gold": "final"},
                                         ("adjudication_order", "imported_gold")),
    ("gold_resolve", None): Probe("adjudicator", {"decision": ENUM, "path": SHORT, "reason": TEXT},
                                  {"decision": "protocol", "reason": "because",
                                   "path": '{"relevance": "relevant", "kind": "factual", "faithfulness": "faithful"}'}),
    ("gold_sentence", None): Probe("lead", {"label": ENUM, "reason": TEXT}, {"label": Label.FAITHFUL, "reason": "x"}),
    ("gold_reopen", None): Probe("lead", {"reason": TEXT, "next": SHORT}, {"reason": "again", "next": "/"}),
    ("project_export", None): Probe("lead", {}, path={"fmt": "jsonl"}),
    ("export_job_start", None): Probe("lead", {}, path={"fmt": "jsonl"}),
    # Files are checked by the form too (tests/test_security_uploads.py); here the fields beside them.
    ("import_upload", None): Probe("lead", {"kind": ENUM}, {"kind": "jsonl"}, ("kind",)),
    ("qa:ask", None): Probe("annotator", {"turn": ID, "sentence": ID, "body": TEXT, "path": TEXT},
                            {"turn": "turn", "body": "Is this grounded?", "path": "{}"}, ("turn",)),
    ("qa:question", None): Probe("lead", {"body": TEXT}, {"body": "An answer."}),
    ("qa:question_close", None): Probe("lead", {}),
    ("qa:question_promote", None): Probe("lead", {"step": ENUM, "expected_answer": ENUM, "text": TEXT,
                                                  "explanation": TEXT},
                                         {"step": "relevance", "expected_answer": "relevant"}),
    ("qa:feedback_acknowledge", None): Probe("annotator", {}),
    ("qa:feedback_amend", None): Probe("annotator", {"label": ENUM, "request_id": SHORT}, {"label": Label.FAITHFUL}),
    ("qa:feedback_give", None): Probe("lead", {"comment": TEXT, "expected_label": ENUM},
                                      {"comment": "Look again.", "expected_label": Label.FAITHFUL}),
    ("qa:qualification", None): Probe("lead", {"turns": ID, "pass_mark": NUMBER}, {"turns": "turn", "pass_mark": "80"},
                                      ("pass_mark",)),
    ("qa:qualification_retry", None): Probe("lead", {}),
    ("qa:qualification_retries", None): Probe("lead", {"qualification_auto_retries": NUMBER}, {},
                                              ("qualification_auto_retries",)),
    ("qa:qualification_gold_reason", None): Probe("lead", {"reason": TEXT}),
    ("autolabel:job_list", None): Probe("lead", {"profile": ID, "prompt_version": ID, "samples": NUMBER,
                                                 "threshold": NUMBER, "model": SHORT},
                                        {"profile": "profile", "samples": "5", "threshold": "3"},
                                        ("profile", "samples", "threshold")),
    ("autolabel:job_cancel", None): Probe("lead", {}),
    ("unit_flag", None): Probe("annotator", {"sentence": ID, "kind": ENUM, "note": TEXT}, {"kind": "two_sentences"},
                               ("sentence", "kind")),
    ("unit_split", None): Probe("lead", {"sentence": ID, "offset": NUMBER, "reason": TEXT}, {"offset": "5"},
                                ("sentence", "offset")),
    ("unit_merge", None): Probe("lead", {"sentence": ID, "reason": TEXT}, required=("sentence",)),
    ("unit_flag_dismiss", None): Probe("lead", {"resolution": TEXT}, {"resolution": "One sentence."}, ("resolution",)),
    ("autolabel:job_checks", None): Probe("lead", {"strategy": ENUM, "size": NUMBER, "seed": NUMBER, "note": TEXT},
                                          {"strategy": "random", "size": "2"}, ("strategy", "size")),
    # The lead's console (annotator/projects/console_views.py).
    ("project_create", None): Probe("creator", {"name": SHORT, "slug": SHORT, "protocol_mode": ENUM, "overlap": NUMBER},
                                    {"name": "New", "protocol_mode": "sequential", "overlap": "2"},
                                    ("name", "protocol_mode", "overlap")),
    ("project_settings", None): Probe("lead", {"name": SHORT, "guidelines": TEXT, "overlap": NUMBER,
                                               "protocol_mode": ENUM, "imported_gold": ENUM,
                                               "qualification_pass_mark": NUMBER, "error_types": TEXT},
                                      {"name": "Pilot", "overlap": "3", "protocol_mode": "sequential",
                                       "imported_gold": "reference", "adjudication_order": "oldest",
                                       "drawn_turn_review": "double", "qualification_pass_mark": "0.9",
                                       "qualification_auto_retries": "0", "severity_threshold": "4"},
                                      ("overlap", "protocol_mode", "imported_gold")),
    ("project_member_add", None): Probe("lead", {"username": SHORT, "role": ENUM}, {"username": "creator",
                                                                                    "role": "annotator"},
                                        ("username",)),
    ("project_member_role", None): Probe("lead", {"role": ENUM}, {"role": "adjudicator"}, ("role",)),
    ("project_member_remove", None): Probe("lead", {"confirm": ENUM}, {"confirm": "yes"}, ("confirm",)),
    ("project_invite_create", None): Probe("lead", {"role": ENUM, "days": NUMBER}, {"role": "annotator", "days": "7"},
                                           ("role", "days")),
    ("project_invite_revoke", None): Probe("lead", {"confirm": ENUM}, {"confirm": "yes"}, ("confirm",)),
    ("project_join", None): Probe("creator", {"confirm": ENUM}, {"confirm": "yes"}, ("confirm",)),
    ("project_protocol", None): Probe("lead", {"source": ENUM, "shipped": ENUM, "document": TEXT, "label_mapping": TEXT},
                                      {"source": "edited", "document": '{"id": "cognibench"}'}, ("source",)),
    # The preview judges the document's text (a 200 listing its problems is its answer); its form fields are probed.
    ("project_protocol_preview", None): Probe("lead", {"source": ENUM, "shipped": ENUM}, {"document": "{}"}),
    ("api:token-page", None): Probe("annotator", {"action": ENUM}, {"action": "create"}),
    ("login", None): Probe("annotator", {"username": SHORT, "password": SHORT}),
    ("logout", None): Probe("annotator", {}),
}

# Pages that take any method and read nothing from a POST body (they answer a POST as a GET).
READS_NO_POST = {
    "home", "project_detail", "turn_list", "turn_detail", "export_job_status", "export_job_download", "import_list",
    "import_status", "gold_queue", "gold_turn", "reports", "reports_status", "reports_csv", "qa:inbox",
    "qa:my_questions", "qa:feedback_inbox", "qa:review", "qa:measures", "qa:qualification_score",
    "qa:qualification_result", "autolabel:job_detail", "autolabel:job_evaluation", "autolabel:turn_predictions",
    "autolabel:job_faithfulness", "autolabel:job_faithfulness_csv",
    "project_people",
    "autolabel:job_comparison",  # GET only (405 to a POST); listed so that the walk probes it
}

# Routes whose fields are not all checked to 400 by a form: the lead's raw export reads only ``fmt``
# from its path; the token page and the login form are Django's / read one fixed value.
FORM_ANSWER_NOT_REQUIRED = {"project_export", "api:token-page", "login", "logout"}

# Query parameters the HTML pages read (beyond ``page``, which Django's paginator reads leniently).
QUERY_PROBES = {
    "annotate": {"sentence": ID},
    "qa:review": {"annotator": ID, "seed": NUMBER},
    "turn_list": {"batch": ID, "topic": SHORT, "model": SHORT, "q": SHORT},
    "autolabel:turn_predictions": {"job": ID},
    "autolabel:job_comparison": {"other": ID},
    "autolabel:job_detail": {"after": NUMBER, "partial": ENUM},
}
# Every page is also sent these, all at once and one at a time: none may answer 5xx.
COMMON_QUERY = ["page", "sentence", "annotator", "seed", "mode", "status", "project", "batch", "topic", "model", "q",
                "severity", "show", "stale", "job", "partial", "compare", "format", "min_severity"]
QUERY_VALUES = ["abc", "-1", "99999999999999999999", "1e309", "x" * 3000, "\x00"]


def well_formed(w, probe):
    """The probe's body with its placeholders (``"turn"``, ``"triplet"``...) replaced by the world's ids."""
    ids = {"turn": w.turn.pk, "triplet": w.triplet.pk, "evidence": w.evidence.pk, "peer": w.peer.pk,
           "profile": w.profile.pk}
    body = {name: str(ids.get(value, value)) for name, value in probe.body.items()}
    if "sentence" in probe.fields and "sentence" not in body and probe.fields["sentence"] == ID:
        body["sentence"] = str(w.sentence.pk)
    return body


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
