"""The reports page and the agreement selectors on a 234,000-sentence project.

    .venv/bin/python bench/reports.py [--database-url URL] [--turns 23400] [--rebuild]

Builds (once; ``--rebuild`` to start again) a project of 23,400 turns × 10
sentences from ``bench/synthetic.py``, then in bulk: two submitted annotations
per turn from a pool of four annotators over eight weeks (about 8% of the
sentences disputed), gold from agreement with its GoldEvent, and adjudications
(three quarters resolved). Then it measures what a lead waits for: the
agreement selector and the gold breakdown computed cold, the data-version query
behind the cache key, and GET /p/<slug>/reports/ cold (empty cache) and warm.
Default database: SQLite in var/bench-reports.sqlite3 (PostgreSQL with
``--database-url postgres://...``).
"""

from __future__ import annotations

import datetime
import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bootstrap import django_for_bench  # noqa: E402

ARGS = django_for_bench("reports", turns=23_400, repeat=5, description=__doc__.splitlines()[0])

import numpy as np  # noqa: E402
from django.core.cache import cache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from annotator.domain import protocol
from annotator.models import Adjudication, Assignment, GoldEvent, GoldLabel, Membership, Project, Sentence, SentenceAnnotation
from annotator.reports.agreement import data_version, project_agreement
from annotator.reports.selectors import gold_breakdown
from annotator.fastsql.bulk import allocate_ids, db_datetime, insert_rows
from annotator.domain.vocabulary import GoldProvenance, Role
from bench.synthetic import create_synthetic_project  # noqa: E402

SLUG = "bench-reports"
# Mostly faithful, as in CogniBench.
LABEL_WEIGHTS = {"irrelevant": 0.04, "faithful": 0.60, "invented": 0.08, "misleading": 0.05,
                 "speculative": 0.08, "reliable": 0.10, "unequivocal": 0.05}


def build(turns):
    from django.contrib.auth import get_user_model

    User = get_user_model()
    started = time.perf_counter()
    Project.objects.filter(slug=SLUG).delete()
    project, _ = create_synthetic_project(SLUG, turns=turns, labelled=False, name="Benchmark: reports")
    corpus_seconds = time.perf_counter() - started
    people = []
    for n in range(4):
        user, _ = User.objects.get_or_create(username=f"bench-annotator-{n}")
        Membership.objects.get_or_create(project=project, user=user, defaults={"role": Role.ANNOTATOR})
        people.append(user.pk)
    lead, _ = User.objects.get_or_create(username="bench-lead")
    Membership.objects.get_or_create(project=project, user=lead, defaults={"role": Role.LEAD})
    adjudicator, _ = User.objects.get_or_create(username="bench-adjudicator")
    Membership.objects.get_or_create(project=project, user=adjudicator, defaults={"role": Role.ADJUDICATOR})

    rows = list(
        Sentence.objects.filter(turn__dialogue__project=project).order_by("turn_id", "index").values_list("id", "turn_id")
    )
    sentence_ids = np.array([r[0] for r in rows])
    sentence_turns = np.array([r[1] for r in rows])
    turn_ids = np.unique(sentence_turns)
    rng = np.random.default_rng(4)
    labels = list(LABEL_WEIGHTS)
    weights = np.array(list(LABEL_WEIGHTS.values()))
    first = rng.choice(len(labels), size=len(sentence_ids), p=weights / weights.sum())
    second = np.where(rng.random(len(sentence_ids)) < 0.92, first, rng.choice(len(labels), size=len(sentence_ids)))
    paths = {i: protocol.path_for_label(label) for i, label in enumerate(labels)}
    now = timezone.now()
    pairs = [(0, 1), (2, 3), (0, 2), (1, 3)]

    with transaction.atomic():
        ids = allocate_ids(Assignment, 2 * len(turn_ids))
        assignment_of = {}
        assignment_rows = []
        for n, turn_id in enumerate(turn_ids):
            pair = pairs[n % len(pairs)]
            when = now - datetime.timedelta(days=int(56 * (1 - n / len(turn_ids))), minutes=n % 600)
            for side in (0, 1):
                pk = ids[2 * n + side]
                assignment_of[(int(turn_id), side)] = pk
                assignment_rows.append((pk, project.pk, int(turn_id), people[pair[side]], Assignment.Status.SUBMITTED.value,
                                        False, 1, db_datetime(when), db_datetime(when)))
        insert_rows(Assignment, ["id", "project_id", "turn_id", "annotator_id", "status", "is_qualification", "version",
                                 "started_at", "submitted_at"], assignment_rows)
        annotation_rows = []
        for side, values in ((0, first), (1, second)):
            for sentence_id, turn_id, value in zip(sentence_ids.tolist(), sentence_turns.tolist(), values.tolist()):
                annotation_rows.append((assignment_of[(turn_id, side)], sentence_id, paths[value], labels[value], "", 0.0, "", ""))
        insert_rows(SentenceAnnotation, ["assignment_id", "sentence_id", "path", "label", "note", "seconds_spent",
                                         "justification", "error_type"], annotation_rows, json_columns=["path"])
        del annotation_rows
        agreed = first == second
        gold_rows, event_rows, adjudication_rows = [], [], []
        resolved = rng.random(len(sentence_ids)) < 0.75
        stamp = db_datetime(now)
        for n, (sentence_id, turn_id) in enumerate(zip(sentence_ids.tolist(), sentence_turns.tolist())):
            if agreed[n]:
                label = labels[first[n]]
                gold_rows.append((sentence_id, label, paths[first[n]], GoldProvenance.AGREEMENT.value, "2 annotators agreed", "", None))
                event_rows.append((sentence_id, "", label, GoldProvenance.AGREEMENT.value, "2 annotators agreed", None))
            elif resolved[n]:
                value = first[n] if n % 2 else second[n]
                label = labels[value]
                gold_rows.append((sentence_id, label, paths[value], GoldProvenance.ADJUDICATION.value, "benchmark decision", "", adjudicator.pk))
                event_rows.append((sentence_id, "", label, GoldProvenance.ADJUDICATION.value, "benchmark decision", adjudicator.pk))
                adjudication_rows.append((sentence_id, turn_id, "resolved", adjudicator.pk, paths[value], label, "benchmark decision", stamp))
            else:
                adjudication_rows.append((sentence_id, turn_id, "open", None, {}, "", "", None))
        insert_rows(GoldLabel, ["sentence_id", "label", "path", "provenance", "reason", "error_type", "decided_by_id"],
                    gold_rows, json_columns=["path"])
        insert_rows(GoldEvent, ["sentence_id", "old_label", "new_label", "provenance", "reason", "actor_id"], event_rows)
        insert_rows(Adjudication, ["sentence_id", "turn_id", "status", "adjudicator_id", "path", "label", "reason",
                                   "resolved_at"], adjudication_rows, json_columns=["path"])
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    else:
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    return project, corpus_seconds, time.perf_counter() - started


def timed(function, repeat=1):
    times = []
    result = None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return result, times


def main():
    call_command("migrate", verbosity=0)
    project = Project.objects.filter(slug=SLUG).first()
    sentences = Sentence.objects.filter(turn__dialogue__project=project).count() if project else 0
    if project is None or ARGS.rebuild or sentences != ARGS.turns * 10:
        print(f"building {ARGS.turns * 10:,} sentences ...", flush=True)
        project, corpus_seconds, total_seconds = build(ARGS.turns)
        print(f"  corpus {corpus_seconds:.1f} s, whole build {total_seconds:.1f} s")
    from django.contrib.auth import get_user_model

    lead = get_user_model().objects.get(username="bench-lead")
    counts = {
        "sentences": Sentence.objects.filter(turn__dialogue__project=project).count(),
        "annotations": SentenceAnnotation.objects.filter(assignment__project=project).count(),
        "gold": GoldLabel.objects.filter(sentence__turn__dialogue__project=project).count(),
        "open disputes": Adjudication.objects.filter(turn__dialogue__project=project, status="open").count(),
    }
    print(f"database: {connection.vendor}; " + ", ".join(f"{k} {v:,}" for k, v in counts.items()))

    report, t_agreement = timed(lambda: project_agreement(project), ARGS.repeat)
    label = report["measures"][0]
    print(f"agreement selector (cold, no cache): median {statistics.median(t_agreement):.3f} s over {ARGS.repeat} "
          f"(alpha {label['alpha']:.4f}, percent {label['percent']:.4f}, kappa {label['kappa']:.4f}, units {label['units']:,})")
    _, t_gold = timed(lambda: gold_breakdown(project), ARGS.repeat)
    print(f"gold breakdown (cold): median {statistics.median(t_gold):.3f} s")
    _, t_version = timed(lambda: data_version(project), ARGS.repeat)
    print(f"data version (cache key) query: median {1000 * statistics.median(t_version):.1f} ms")

    client = Client()
    client.force_login(lead)
    url = f"/p/{project.slug}/reports/"
    cold = []
    for _ in range(ARGS.repeat):
        cache.clear()
        started = time.perf_counter()
        response = client.get(url)
        cold.append(time.perf_counter() - started)
        assert response.status_code == 200, response.status_code
    warm = []
    for _ in range(ARGS.repeat):
        started = time.perf_counter()
        response = client.get(url)
        warm.append(time.perf_counter() - started)
    print(f"GET {url} cold (empty cache): median {statistics.median(cold):.3f} s, max {max(cold):.3f} s")
    print(f"GET {url} warm (cached):      median {statistics.median(warm):.3f} s, max {max(warm):.3f} s "
          f"({len(response.content) / 1024:.0f} KB of HTML)")
    from annotator.gold.services import gold_version_bump
    from annotator.tasks import reports_refresh

    older, recompute = [], []
    for _ in range(ARGS.repeat):
        gold_version_bump(project.pk)  # what every change of gold does
        started = time.perf_counter()
        response = client.get(url)
        older.append(time.perf_counter() - started)
        assert b"report-refreshing" in response.content, "expected the older numbers while recomputing"
        started = time.perf_counter()
        reports_refresh(project.pk)  # the worker's part, run here
        recompute.append(time.perf_counter() - started)
    print(f"GET {url} right after new gold (older numbers, refresh asked): median {statistics.median(older):.3f} s, "
          f"max {max(older):.3f} s")
    print(f"  the worker's recomputation meanwhile: median {statistics.median(recompute):.3f} s")
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    print(f"machine: {os.cpu_count()} CPUs, load average {' / '.join(f'{x:.1f}' for x in os.getloadavg())} (1/5/15 min)")


if __name__ == "__main__":
    main()
