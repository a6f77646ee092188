"""The claims reports (HalluDetect, RefChecker, PROBE, Face4RAG views) on a large project.

    .venv/bin/python bench/claims.py [--database-url URL] [--turns 5000] [--rebuild]

Builds (once; ``--rebuild`` to start again) a project of ``--turns`` turns × 10
sentences from ``bench/synthetic.py`` (with its gold labels), then in bulk: a
severity and an error type on every hallucinated gold sentence, three claim
triplets per turn with an imported label and a triplet gold, two submitted
annotations per turn (labels and triplet labels, one evidence span per
faithful / grounded annotation). Then it times, cold, each selector of the
claims reports page and GET /p/<slug>/claims/reports/ as a lead, and prints the
peak memory of the process. Default database: SQLite in var/bench-claims.sqlite3.
"""

from __future__ import annotations

import random
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bootstrap import django_for_bench  # noqa: E402

ARGS = django_for_bench("claims", turns=5000, repeat=3, description=__doc__.splitlines()[0])

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from annotator.domain import protocol
from annotator.models import Assignment, ClaimTriplet, EvidenceSpan, GoldLabel, Membership, Project, SentenceAnnotation, TripletAnnotation, TripletGold, Turn
from annotator.claims import selectors as selectors
from annotator.domain.vocabulary import DEFAULT_ERROR_TYPES, HALLUCINATED_LABELS, Label, Role, TripletLabel
from bench.synthetic import create_synthetic_project  # noqa: E402

SLUG = "bench-claims"
JUDGED = [TripletLabel.ENTAILMENT, TripletLabel.NEUTRAL, TripletLabel.CONTRADICTION]


def build(turns: int):
    call_command("migrate", verbosity=0)
    if ARGS.rebuild:
        Project.objects.filter(slug=SLUG).delete()
    project = Project.objects.filter(slug=SLUG).first()
    if project is not None and Turn.objects.filter(dialogue__project=project).count() == turns:
        return project
    Project.objects.filter(slug=SLUG).delete()
    started = time.perf_counter()
    project, _ = create_synthetic_project(SLUG, turns=turns, sentences_per_turn=10, reference_words=300)
    project.enable_triplets = project.enable_severity = project.enable_error_types = True
    project.save()
    rng = random.Random(7)
    User = get_user_model()
    people = [User.objects.get_or_create(username=f"bench-claims-{n}")[0] for n in range(2)]
    lead = User.objects.get_or_create(username="bench-claims-lead")[0]
    for user, role in [(people[0], Role.ANNOTATOR), (people[1], Role.ANNOTATOR), (lead, Role.LEAD)]:
        Membership.objects.get_or_create(project=project, user=user, defaults={"role": role})
    with transaction.atomic():
        hallucinated = list(GoldLabel.objects.filter(sentence__turn__dialogue__project=project,
                                                     label__in=list(HALLUCINATED_LABELS)).values_list("pk", "label"))
        for pk, label in hallucinated:
            GoldLabel.objects.filter(pk=pk).update(
                severity=rng.randint(1, 5),
                error_type=rng.choice(DEFAULT_ERROR_TYPES) if label in (Label.INVENTED, Label.MISLEADING) else "")
        turn_ids = list(Turn.objects.filter(dialogue__project=project).values_list("pk", flat=True))
        triplets = [ClaimTriplet(turn_id=t, index=i, head=f"h{i}", relation="r", tail=f"t{i}", source="imported",
                                 reference_label=rng.choice(JUDGED)) for t in turn_ids for i in range(3)]
        ClaimTriplet.objects.bulk_create(triplets, batch_size=5000)
        triplets = list(ClaimTriplet.objects.filter(turn__dialogue__project=project).values_list("pk", "turn_id", "reference_label"))
        TripletGold.objects.bulk_create([TripletGold(triplet_id=pk, label=ref if rng.random() < 0.8 else rng.choice(JUDGED),
                                                     provenance="agreement") for pk, _, ref in triplets], batch_size=5000)
        now = timezone.now()
        assignments = [Assignment(project=project, turn_id=t, annotator=u, status=Assignment.Status.SUBMITTED,
                                  submitted_at=now) for t in turn_ids for u in people]
        Assignment.objects.bulk_create(assignments, batch_size=5000)
        by_turn = {}
        for pk, turn_id in Assignment.objects.filter(project=project).values_list("pk", "turn_id"):
            by_turn.setdefault(turn_id, []).append(pk)
        gold = dict(GoldLabel.objects.filter(sentence__turn__dialogue__project=project).values_list("sentence_id", "label"))
        rows = []
        sentences = list(GoldLabel.objects.filter(sentence__turn__dialogue__project=project)
                         .values_list("sentence_id", "sentence__turn_id"))
        for sentence_id, turn_id in sentences:
            for assignment_id in by_turn[turn_id]:
                label = gold[sentence_id] if rng.random() < 0.92 else rng.choice(list(Label))
                rows.append(SentenceAnnotation(assignment_id=assignment_id, sentence_id=sentence_id, label=label,
                                               path=protocol.path_for_label(label)))
        SentenceAnnotation.objects.bulk_create(rows, batch_size=5000)
        spans = []
        for pk, label in SentenceAnnotation.objects.filter(
                assignment__project=project, label__in=[Label.FAITHFUL, Label.RELIABLE, Label.UNEQUIVOCAL]
        ).values_list("pk", "label"):
            if rng.random() < 0.7:
                start = rng.randint(0, 200)
                spans.append(EvidenceSpan(annotation_id=pk, start=start, end=start + rng.randint(20, 80)))
        EvidenceSpan.objects.bulk_create(spans, batch_size=5000)
        labels = []
        for pk, turn_id, ref in triplets:
            for assignment_id in by_turn[turn_id]:
                labels.append(TripletAnnotation(assignment_id=assignment_id, triplet_id=pk,
                                                label=ref if rng.random() < 0.85 else rng.choice(list(TripletLabel))))
        TripletAnnotation.objects.bulk_create(labels, batch_size=5000)
    print(f"built {turns} turns in {time.perf_counter() - started:.1f} s")
    return project


def timed(name, call):
    times = []
    for _ in range(ARGS.repeat):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    print(f"{name:<34} median {statistics.median(times) * 1000:8.0f} ms   (min {min(times) * 1000:.0f} ms)")


def main():
    project = build(ARGS.turns)
    sentences = GoldLabel.objects.filter(sentence__turn__dialogue__project=project).count()
    print(f"project {SLUG}: {ARGS.turns} turns, {sentences} gold sentences, "
          f"{ClaimTriplet.objects.filter(turn__dialogue__project=project).count()} triplets, "
          f"{SentenceAnnotation.objects.filter(assignment__project=project).count()} annotations")
    timed("hallucination_report (threshold)", lambda: selectors.hallucination_report(project, 4))
    timed("hallucination_report (all)", lambda: selectors.hallucination_report(project, None))
    timed("triplet_report", lambda: selectors.triplet_report(project))
    timed("error_type_report", lambda: selectors.error_type_report(project))
    timed("evidence_report", lambda: selectors.evidence_report(project))
    client = Client()
    client.force_login(get_user_model().objects.get(username="bench-claims-lead"))
    url = f"/p/{SLUG}/claims/reports/"

    def page():
        response = client.get(url)
        assert response.status_code == 200, response.status_code

    timed("GET claims reports page", page)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory of the process: {peak:.0f} MB")


if __name__ == "__main__":
    main()
