"""The QA loop's requests on a large project: what is polled all day, and what leads open.

    .venv/bin/python bench/qa.py [--database-url URL] [--turns 5000] [--rebuild] [--repeat 40]

Builds (once; ``--rebuild`` to start again) a project of ``--turns`` turns × 10
sentences from ``bench/synthetic.py`` with gold, two submitted annotations per
turn from 20 annotators (about 8% of the sentences disputed), one question per
100 judged statements (two messages each, a third of them open) and one
feedback item per 200. Then, through Django's test client (the whole request:
middleware, session, view, template), it measures:

- the navigation badges, which every open page polls every 15 s;
- the "your questions on this turn" pane, which the annotation screen polls every 5 s;
- asking a question (POST, with the saved path looked up);
- the lead's question inbox, the review page (disagreements), the QA-per-500 page;
- ``qa_measures`` (the figure the reports page shows) computed alone.

Default database: SQLite in var/bench-qa.sqlite3 (PostgreSQL with ``--database-url postgres://...``).
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bootstrap import django_for_bench  # noqa: E402

ARGS = django_for_bench("qa", turns=5000, repeat=40, description=__doc__.splitlines()[0])

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from annotator.domain import protocol
from annotator.models import Assignment, Feedback, GoldLabel, Membership, Project, Question, QuestionMessage, Sentence, SentenceAnnotation, Turn
from annotator.qa.selectors import qa_measures
from annotator.domain.vocabulary import Label, Role
from bench.synthetic import create_synthetic_project  # noqa: E402

SLUG = "bench-qa"
ANNOTATORS = 20
LABELS = [label.value for label in Label]


def build():
    Project.objects.filter(slug=SLUG).delete()
    started = time.perf_counter()
    project, _ = create_synthetic_project(SLUG, turns=ARGS.turns, name="Benchmark QA")
    User = get_user_model()
    lead, _ = User.objects.get_or_create(username="bench-qa-lead")
    Membership.objects.get_or_create(project=project, user=lead, defaults={"role": Role.LEAD})
    people = []
    for n in range(ANNOTATORS):
        user, _ = User.objects.get_or_create(username=f"bench-qa-ann{n:02d}")
        Membership.objects.get_or_create(project=project, user=user, defaults={"role": Role.ANNOTATOR})
        people.append(user)
    rng = random.Random(7)
    gold = dict(GoldLabel.objects.filter(sentence__turn__dialogue__project=project).values_list("sentence_id", "label"))
    sentences_of = {}
    for sid, tid in Sentence.objects.filter(turn__dialogue__project=project).values_list("id", "turn_id"):
        sentences_of.setdefault(tid, []).append(sid)
    now = timezone.now()
    with transaction.atomic():
        assignments = []
        for tid in sentences_of:
            for user in rng.sample(people, 2):
                assignments.append(Assignment(project=project, turn_id=tid, annotator=user, status="submitted",
                                              submitted_at=now - timezone.timedelta(days=rng.randrange(56))))
        Assignment.objects.bulk_create(assignments, batch_size=2000)
        Turn.objects.filter(dialogue__project=project).update(slots_taken=2)
        rows = []
        for assignment in Assignment.objects.filter(project=project).only("id", "turn_id"):
            for sid in sentences_of[assignment.turn_id]:
                label = gold.get(sid) or "faithful"
                if rng.random() < 0.04:
                    label = rng.choice(LABELS)
                rows.append(SentenceAnnotation(assignment_id=assignment.pk, sentence_id=sid, label=label,
                                               path=protocol.path_for_label(label)))
        SentenceAnnotation.objects.bulk_create(rows, batch_size=5000)
        statements = len(rows)
        annotations = list(SentenceAnnotation.objects.filter(assignment__project=project)
                           .values_list("id", "sentence_id", "sentence__turn_id", "assignment__annotator_id",
                                        "path"))
        questions = []
        for _, sid, tid, uid, path in rng.sample(annotations, statements // 100):
            questions.append(Question(project=project, turn_id=tid, sentence_id=sid, asked_by_id=uid, path=path,
                                      status=rng.choice(["open", "answered", "closed"]), step="kind"))
        Question.objects.bulk_create(questions, batch_size=2000)
        messages = []
        for question in Question.objects.filter(project=project).only("id", "asked_by_id"):
            messages.append(QuestionMessage(question_id=question.pk, author_id=question.asked_by_id,
                                            body="Is this sentence factual or cognitive?"))
            messages.append(QuestionMessage(question_id=question.pk, author_id=lead.pk, body="Cognitive."))
        QuestionMessage.objects.bulk_create(messages, batch_size=5000)
        Feedback.objects.bulk_create(
            [Feedback(project=project, annotation_id=aid, lead=lead, expected_label="speculative", comment="Check.")
             for aid, *_ in rng.sample(annotations, statements // 200)], batch_size=2000)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    print(f"built {ARGS.turns} turns, {statements} judged statements, {len(questions)} questions, "
          f"{statements // 200} feedback items in {time.perf_counter() - started:.0f} s")
    return project


def measure(label, call, repeat=ARGS.repeat):
    call()  # warm
    captured = []
    # Count with an execute wrapper: the test client's request_started signal resets connection.queries.
    with connection.execute_wrapper(lambda execute, sql, params, many, context: (captured.append(sql),
                                                                                 execute(sql, params, many, context))[1]):
        call()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
    print(f"{label:<58} p50 {statistics.median(times):7.1f} ms   p95 {p95:7.1f} ms   {len(captured):3d} queries")


def main():
    call_command("migrate", verbosity=0)
    project = Project.objects.filter(slug=SLUG).first()
    if project is None or ARGS.rebuild:
        project = build()
    lead = get_user_model().objects.get(username="bench-qa-lead")
    annotator = get_user_model().objects.get(username="bench-qa-ann00")
    mine = SentenceAnnotation.objects.filter(assignment__annotator=annotator).select_related("sentence").first()
    turn_id, sentence_id = mine.sentence.turn_id, mine.sentence_id
    lead_client, ann_client = Client(), Client()
    lead_client.force_login(lead)
    ann_client.force_login(annotator)
    statements = SentenceAnnotation.objects.filter(assignment__project=project).count()
    load = os.getloadavg()[0]
    print(f"load average {load:.1f} on {os.cpu_count()} cores (shared machine)")
    print(f"database: {connection.vendor}; project {SLUG}: {statements} judged statements, "
          f"{Question.objects.filter(project=project).count()} questions, "
          f"{Feedback.objects.filter(project=project).count()} feedback; {ARGS.repeat} runs each")

    def ok(response):
        assert response.status_code in (200, 302), response.status_code
        return response

    measure("GET /qa/badges/ (lead; polled by every page)", lambda: ok(lead_client.get("/qa/badges/")))
    measure("GET /qa/badges/ (annotator)", lambda: ok(ann_client.get("/qa/badges/")))
    measure("GET turn questions pane (annotator; polled every 5 s)",
            lambda: ok(ann_client.get(f"/p/{SLUG}/qa/turns/{turn_id}/questions/")))
    created = []

    def ask():
        ok(ann_client.post(f"/p/{SLUG}/qa/ask/", {"turn": turn_id, "sentence": sentence_id,
                                                  "body": "Is this rational?"}, HTTP_HX_REQUEST="true"))
        created.append(1)

    measure("POST ask a question (htmx)", ask, repeat=min(ARGS.repeat, 20))
    measure("GET /qa/questions/ (lead inbox, open)", lambda: ok(lead_client.get("/qa/questions/")))
    measure("GET review: disagreements (first page of 30)",
            lambda: ok(lead_client.get(f"/p/{SLUG}/qa/review/", {"mode": "disagreements"})), repeat=10)
    measure("GET review: random sample of one annotator",
            lambda: ok(lead_client.get(f"/p/{SLUG}/qa/review/", {"mode": "sample", "annotator": annotator.pk})),
            repeat=10)
    measure("GET QA per 500 statements page", lambda: ok(lead_client.get(f"/p/{SLUG}/qa/measures/")), repeat=10)
    measure("qa_measures(project) alone (reports page)", lambda: qa_measures(project), repeat=10)
    Question.objects.filter(project=project, messages__body="Is this rational?").delete()


if __name__ == "__main__":
    main()
