"""XSS: a dialogue made of payloads, imported the way a lead imports, is rendered escaped on every page.

Every field of the JSONL format that holds text carries a payload; annotators'
notes and questions carry some too (a lead reads them). Then every route of the
URL conf (tests/url_walk.py) is fetched, as page and as htmx partial, by each
role, with every id the world has, and no HTML answer may contain a payload
unescaped. A browser check runs the annotation screen and the lead's turn page
in Chromium and checks that no payload ran.
"""

import json

import pytest
from django.core.management import call_command
from django.test import Client

from annotator import models
from annotator.corpus.exports.exporters import FORMATS
from annotator.work.assignment import assignment_next
from annotator.domain.vocabulary import Role
from tests.factories import ProjectFactory, UserFactory, member
from tests.url_walk import ids_by_parameter, ids_from_one, integer_like, urls

# A whole-route walk of a minute or more: `slow` has tests/conftest.py start this module first.
pytestmark = pytest.mark.slow


# (payload, what must never appear in HTML: the markup that would run)
PAYLOADS = [
    ('<script>window.__xss=1</script>', "<script>window.__xss"),
    ('"><img src=x onerror="window.__xss=2">', "<img src=x onerror"),
    ("'><svg onload=window.__xss=3>", "<svg onload"),
    ('<a href="javascript:window.__xss=4">click</a>', '<a href="javascript:'),
    ('<div hx-get="/admin/" hx-trigger="load" hx-on::load="window.__xss=5">x</div>', '<div hx-get="/admin/"'),
    ("</textarea><script>window.__xss=6</script>", "</textarea><script>"),
    ('<iframe srcdoc="<script>window.__xss=7</script>"></iframe>', "<iframe srcdoc"),
]


def payload(n):
    return PAYLOADS[n % len(PAYLOADS)][0]


def all_payloads():
    return " ".join(p for p, _ in PAYLOADS)


def hostile_line():
    sentences = [f"Sentence {n} {p}." for n, (p, _) in enumerate(PAYLOADS)]
    response = " ".join(sentences)
    return {
        "dialogue": {
            "id": "dlg-<script>window.__xss=8</script>",
            "reference": "Reference text. " + all_payloads(),
            "topic": payload(1), "language": "english", "generator_model": payload(3),
            "metadata": {"source": payload(4), payload(0): "key"},
        },
        "turn": {
            "index": 0, "id": payload(5), "response": response, "user_message": "Question? " + all_payloads(),
            "history": [{"role": "user", "text": payload(6)}, {"role": "assistant", "text": payload(0)}],
            "metadata": {"note": payload(1)},
        },
        "triplets": [{"head": payload(2), "relation": payload(3), "tail": payload(4), "sentence_index": 0}],
        "extra_field": payload(5),
    }


def unescaped(text):
    return [marker for _, marker in PAYLOADS if marker in text] + (
        ["<script>window.__xss"] if "<script>window.__xss" in text else [])


@pytest.fixture
def hostile_world(db, tmp_path):
    from django.core.cache import cache

    cache.clear()
    ids_from_one()
    project = ProjectFactory(slug="hostile", name="Hostile " + payload(0), guidelines="Read this. " + all_payloads())
    path = tmp_path / "hostile.jsonl"
    path.write_text(json.dumps(hostile_line()) + "\n", encoding="utf-8")
    call_command("import_jsonl", "--project", project.slug, str(path), stdout=open("/dev/null", "w"))
    # An import refuses an unknown language; a row stored before that check (or written otherwise) may hold anything.
    models.Dialogue.objects.filter(project=project).update(language=payload(2))
    turn = models.Turn.objects.get(dialogue__project=project)
    assert "<script>window.__xss=1</script>" in turn.assistant_response  # stored as given, escaped on output
    users = {
        "annotator": member(project, Role.ANNOTATOR, username="ann"),
        "other": member(project, Role.ANNOTATOR, username="ann2"),
        "adjudicator": member(project, Role.ADJUDICATOR, username="adj"),
        "lead": member(project, Role.LEAD, username="lea"),
        "staff": UserFactory(username="sta", is_staff=True, is_superuser=True),
    }
    mine = assignment_next(project, users["annotator"])
    theirs = assignment_next(project, users["other"])
    sentences = list(turn.sentences.order_by("index"))
    for assignment in (mine, theirs):
        models.SentenceAnnotation.objects.create(assignment=assignment, sentence=sentences[0], path={"relevance": "relevant"},
                                                 note="My note " + all_payloads())
    question = models.Question.objects.create(project=project, turn=turn, sentence=sentences[0], asked_by=users["other"])
    models.QuestionMessage.objects.create(question=question, author=users["other"], body="Why? " + all_payloads())
    models.GuidelineExample.objects.create(project=project, step="relevance", text=payload(0), explanation=payload(1))
    return project, users, mine


def values_for(project):
    # The ids objects really have (not range(1, max id): PostgreSQL's sequences keep counting across the
    # test session, which made this walk grow with every test that ran before it).
    ids = sorted(set().union(*(
        m.objects.values_list("pk", flat=True)
        for m in (models.Turn, models.Sentence, models.Assignment, models.SentenceAnnotation, models.Question,
                  models.Dialogue, models.ImportBatch, models.Adjudication, models.GuidelineExample)
    )))
    named = ids_by_parameter(ids)

    def values(name, converter):
        if integer_like(converter):
            return named.get(name, ids)
        if name == "slug":
            return [project.slug]
        if name == "fmt":
            return sorted(FORMATS)
        if name == "table":
            return ["agreement", "batches", "pairs", "weekly"]
        if name == "action":
            return ["answer"]
        return None if converter.startswith("regex:") else ["x"]

    return values


@pytest.mark.django_db
def test_every_page_renders_the_imported_payloads_escaped(hostile_world):
    project, users, _ = hostile_world
    walked = [(r, u) for r, u in urls(values_for(project)) if r.name not in ("logout",) and not r.is_admin]
    bad, html_pages, showing_payload_text = [], 0, set()
    for role, user in users.items():
        client = Client()
        client.force_login(user)
        for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
            for route, url in walked:
                response = client.get(url, **headers)
                if not response.get("Content-Type", "").startswith("text/html") or getattr(response, "streaming", False):
                    continue
                text = response.content.decode("utf-8", "replace")
                html_pages += 1
                if "window.__xss" in text:
                    showing_payload_text.add(route.name)
                for marker in unescaped(text):
                    bad.append(f"{role}: GET {url}{' (htmx)' if headers else ''} contains {marker!r} unescaped")
    assert html_pages > 100
    # The check can fail: the payload text does reach the pages that show imported data.
    assert {"annotate", "turn_detail"} <= showing_payload_text, showing_payload_text
    assert not bad, "\n".join(bad[:30])


@pytest.mark.django_db
def test_admin_pages_show_the_payloads_escaped(hostile_world):
    project, users, _ = hostile_world
    client = Client()
    client.force_login(users["staff"])
    turn = models.Turn.objects.get(dialogue__project=project)
    pages = ["/admin/annotator/turn/", f"/admin/annotator/turn/{turn.pk}/change/", "/admin/annotator/dialogue/",
             f"/admin/annotator/dialogue/{turn.dialogue_id}/change/", "/admin/annotator/project/",
             f"/admin/annotator/project/{project.pk}/change/"]
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        assert not unescaped(response.content.decode()), url


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_no_payload_runs_in_the_browser(hostile_world, page_for, live_server):
    project, users, mine = hostile_world
    turn = models.Turn.objects.get(dialogue__project=project)
    for user, path in ((users["annotator"], f"/a/{mine.pk}/"), (users["lead"], f"/p/{project.slug}/turns/{turn.pk}/"),
                       (users["lead"], f"/p/{project.slug}/")):
        page = page_for(user)
        dialogs = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(live_server.url + path)
        page.wait_for_load_state("networkidle")
        assert "Sentence 0" in page.content() or "Hostile" in page.content()
        assert page.evaluate("typeof window.__xss") == "undefined", path
        assert not dialogs
