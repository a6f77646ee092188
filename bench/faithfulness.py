"""The LLM faithfulness report (issue #18 §4) on a CogniBench-L-sized project.

    .venv/bin/python bench/faithfulness.py [--database-url URL] [--turns 24000] [--repeat 5] [--rebuild]

Builds (once; ``--rebuild`` to start again) a project of ``--turns`` turns × 10 sentences from
``bench/synthetic.py``, a hidden true label per sentence (mostly faithful; each generator model its own
mix), and three finished pre-labelling jobs over the first quarter, half and all of the turns, whose
judge is right 75 % of the time and otherwise leans towards "hallucinated". For each job, a random draw
of 1,000 of its turns (a twenty-fourth of them at the small sizes) with gold on every sentence, plus gold
on 60 turns that were not drawn. Then it times ``faithfulness_report`` per job (median of ``--repeat``
runs), measures the peak of Python memory during one report (tracemalloc) and prints the estimates next
to the hidden truth. Default database: SQLite in var/bench-faithfulness.sqlite3.
"""

from __future__ import annotations

import os
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bootstrap import django_for_bench  # noqa: E402

ARGS = django_for_bench("faithfulness", turns=24_000, repeat=5, description=__doc__.splitlines()[0])

import numpy as np  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from annotator.domain import protocol  # noqa: E402
from annotator.domain.vocabulary import HALLUCINATED_LABELS, DrawStrategy, GoldProvenance  # noqa: E402
from annotator.fastsql.bulk import insert_rows  # noqa: E402
from annotator.models import DrawnTurn, GoldLabel, Project, Sentence, TurnDraw  # noqa: E402
from autolabel.faithfulness.report import faithfulness_report  # noqa: E402
from autolabel.models import AutoLabelJob, JobTurn, LLMProfile, Prediction, PromptVersion  # noqa: E402
from bench.synthetic import create_synthetic_project  # noqa: E402

SLUG = "bench-faithfulness"
LABELS = ["irrelevant", "faithful", "invented", "misleading", "speculative", "reliable", "unequivocal"]
# Each generator model's true mix of labels (CogniBench: mostly faithful; models differ).
MIXES = {
    "model-a": [0.04, 0.62, 0.06, 0.04, 0.06, 0.12, 0.06],
    "model-b": [0.04, 0.52, 0.12, 0.06, 0.10, 0.10, 0.06],
    "model-c": [0.05, 0.55, 0.08, 0.08, 0.12, 0.07, 0.05],
}
# When the judge is wrong, what it says instead: hallucinated labels more often than not.
MISTAKES = [0.05, 0.15, 0.30, 0.15, 0.25, 0.05, 0.05]
JUDGE_ACCURACY = 0.75
DRAWN_TURNS = 1_000
NOT_DRAWN_GOLD_TURNS = 60


def build(turns):
    started = time.perf_counter()
    Project.objects.filter(slug=SLUG).delete()
    project, _ = create_synthetic_project(SLUG, turns=turns, labelled=False, name="Benchmark: faithfulness")
    rows = list(Sentence.objects.filter(turn__dialogue__project=project).order_by("turn_id", "index")
                .values_list("id", "turn_id", "turn__dialogue__generator_model"))
    sentence_ids = np.array([r[0] for r in rows])
    sentence_turns = np.array([r[1] for r in rows])
    rng = np.random.default_rng(18)
    truth = np.empty(len(rows), dtype=np.int64)
    for model, mix in MIXES.items():
        mine = np.array([r[2] == model for r in rows])
        truth[mine] = rng.choice(len(LABELS), size=int(mine.sum()), p=mix)
    del rows
    judged = np.where(rng.random(len(truth)) < JUDGE_ACCURACY, truth, rng.choice(len(LABELS), size=len(truth), p=MISTAKES))
    turn_ids = np.unique(sentence_turns)
    profile, _ = LLMProfile.objects.get_or_create(name="bench-faithfulness", defaults={"base_url": "http://127.0.0.1:9/v1"})
    prompt, _ = PromptVersion.objects.get_or_create(project=project, version=1)
    gold_turns = set()
    with transaction.atomic():
        for size in sizes(turns):
            scope = turn_ids[:size]
            job = AutoLabelJob.objects.create(project=project, profile=profile, prompt_version=prompt,
                                              model=f"bench-judge-{size}", status=AutoLabelJob.Status.DONE,
                                              total_turns=size, done_turns=size)
            insert_rows(JobTurn, ["job_id", "turn_id", "done"], ((job.pk, int(t), True) for t in scope))
            in_scope = sentence_turns <= scope[-1]
            insert_rows(Prediction, ["job_id", "sentence_id", "label", "hallucinated", "stage1_kind"], (
                (job.pk, int(s), LABELS[j], LABELS[j] in HALLUCINATED_LABELS, kind(LABELS[j]))
                for s, j in zip(sentence_ids[in_scope].tolist(), judged[in_scope].tolist())
            ))
            drawn = rng.choice(scope, size=min(DRAWN_TURNS, max(2, size // 24)), replace=False)
            draw = TurnDraw.objects.create(project=project, strategy=DrawStrategy.RANDOM, source_job_id=job.pk,
                                           size=len(drawn), seed=18, note="benchmark")
            insert_rows(DrawnTurn, ["draw_id", "turn_id", "position"], ((draw.pk, int(t), n) for n, t in enumerate(drawn)))
            gold_turns.update(drawn.tolist())
        gold_turns.update(rng.choice(turn_ids, size=min(NOT_DRAWN_GOLD_TURNS, len(turn_ids) // 4), replace=False).tolist())
        with_gold = np.isin(sentence_turns, np.fromiter(gold_turns, dtype=np.int64))
        paths = {label: protocol.path_for_label(label) for label in LABELS}
        insert_rows(GoldLabel, ["sentence_id", "label", "path", "provenance"], (
            (int(s), LABELS[j], paths[LABELS[j]], GoldProvenance.AGREEMENT.value)
            for s, j in zip(sentence_ids[with_gold].tolist(), truth[with_gold].tolist())
        ), json_columns=["path"])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    hidden = [float(np.isin(truth[sentence_turns <= turn_ids[:size][-1]], [2, 3, 4]).mean()) for size in sizes(turns)]
    print(f"  built in {time.perf_counter() - started:.1f} s; the hidden hallucination rate of each job's turns: "
          + ", ".join(f"{rate:.4f}" for rate in hidden), flush=True)
    return project


def time_page(project, job):
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from annotator.domain.vocabulary import Role
    from annotator.models import Membership

    lead, _ = get_user_model().objects.get_or_create(username="bench-faithfulness-lead")
    Membership.objects.get_or_create(project=project, user=lead, defaults={"role": Role.LEAD})
    client = Client()
    client.force_login(lead)
    url = reverse("autolabel:job_faithfulness", args=[project.slug, job.pk])
    times = []
    for _ in range(ARGS.repeat):
        started = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - started)
        assert response.status_code == 200, response.status_code
    return times


def kind(label):
    return "factual" if label in ("faithful", "invented") else "cognitive" if label != "irrelevant" else ""


def sizes(turns):
    return [turns // 4, turns // 2, turns]


def main():
    call_command("migrate", verbosity=0)
    project = Project.objects.filter(slug=SLUG).first()
    jobs = list(AutoLabelJob.objects.filter(project=project).order_by("total_turns")) if project else []
    if ARGS.rebuild or [job.total_turns for job in jobs] != sizes(ARGS.turns):
        print(f"building {ARGS.turns:,} turns × 10 sentences, three jobs and their gold ...", flush=True)
        project = build(ARGS.turns)
        jobs = list(AutoLabelJob.objects.filter(project=project).order_by("total_turns"))
    print(f"database: {connection.vendor}; predictions {Prediction.objects.filter(job__project=project).count():,}, "
          f"gold sentences {GoldLabel.objects.filter(sentence__turn__dialogue__project=project).count():,}")
    for job in jobs:
        times = []
        for _ in range(ARGS.repeat):
            started = time.perf_counter()
            report, calibration = faithfulness_report(job)
            times.append(time.perf_counter() - started)
        tracemalloc.start()
        faithfulness_report(job)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        overall = report["overall"]["hallucination_rate"]
        print(f"{job.total_turns:>6} turns: report median {statistics.median(times):.3f} s (max {max(times):.3f}) over "
              f"{ARGS.repeat}; peak Python memory {peak / 2**20:.2f} MiB; {calibration.turns} calibration turns")
        print(f"        hallucination rate: auto {overall['auto']}, gold only {overall['gold_only']} "
              f"{overall['gold_only_ci95']}, corrected {overall['corrected']} {overall['corrected_ci95']}")
        print(f"        {calibration.statement}")
    page_times = time_page(project, jobs[-1])
    print(f"GET the faithfulness page of the {jobs[-1].total_turns}-turn job: median {statistics.median(page_times):.3f} s "
          f"over {len(page_times)}")
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    print(f"machine: {os.cpu_count()} CPUs, load average {' / '.join(f'{x:.1f}' for x in os.getloadavg())} (1/5/15 min)")


if __name__ == "__main__":
    main()
