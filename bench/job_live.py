"""The auto-label job page's poll while a job runs: cost per poll with nothing new and with new predictions.

    .venv/bin/python bench/job_live.py                 # 10,000 turns x 5 sentences, SQLite in var/
    .venv/bin/python bench/job_live.py --database-url postgres://postgres@127.0.0.1:5432/bench_job_live

The page polls `?partial=progress&after=<newest prediction it has>` once a second; the poll carries the
turns labelled last (at most 20) only when a newer prediction exists, so a 10,000-turn job does not
resend its predictions every second. Timed through Django's test client as a lead (no network).
"""

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bootstrap import django_for_bench  # noqa: E402

ARGS = django_for_bench("job_live", turns=10_000, repeat=20, description=__doc__.splitlines()[0])

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.urls import reverse  # noqa: E402

from annotator.domain.vocabulary import Role  # noqa: E402
from annotator.models import Dialogue, Membership, Project, Sentence, Turn  # noqa: E402
from autolabel.models import AutoLabelJob, JobTurn, LLMProfile, Prediction, PromptVersion  # noqa: E402

SLUG = "bench-job-live"
SENTENCES = 5


@transaction.atomic
def build(turns):
    Project.objects.filter(slug=SLUG).delete()
    project = Project.objects.create(name="Bench job page", slug=SLUG)
    dialogue = Dialogue.objects.create(project=project, external_id="d", reference="The reference.")
    Turn.objects.bulk_create([Turn(dialogue=dialogue, index=i, assistant_response="An answer.") for i in range(turns)],
                             batch_size=2000)
    turn_ids = list(Turn.objects.filter(dialogue=dialogue).order_by("index").values_list("pk", flat=True))
    Sentence.objects.bulk_create([Sentence(turn_id=t, index=j, text=f"Sentence {j} of turn {t}.", start=0, end=1)
                                  for t in turn_ids for j in range(SENTENCES)], batch_size=5000)
    profile, _ = LLMProfile.objects.get_or_create(name="bench-job-live", defaults={"base_url": "http://127.0.0.1:9/v1",
                                                                                  "api_key_env": ""})
    prompt = PromptVersion.objects.create(project=project, version=1)
    # A running job whose every turn is done: the poll's worst case (every prediction is a candidate).
    job = AutoLabelJob.objects.create(project=project, profile=profile, prompt_version=prompt, model="m",
                                      status=AutoLabelJob.Status.RUNNING, total_turns=turns, done_turns=turns)
    JobTurn.objects.bulk_create([JobTurn(job=job, turn_id=t, done=True) for t in turn_ids], batch_size=5000)
    sentence_ids = Sentence.objects.filter(turn__dialogue=dialogue).order_by("turn_id", "index").values_list("pk", flat=True)
    Prediction.objects.bulk_create([Prediction(job=job, sentence_id=s, label="faithful", hallucinated_votes=1,
                                               label_votes={"faithful": 4, "invented": 1}, sample_votes=["f"] * 5)
                                    for s in sentence_ids], batch_size=5000)
    lead = get_user_model().objects.filter(username="bench-lead").first() or get_user_model().objects.create(
        username="bench-lead")
    Membership.objects.create(project=project, user=lead, role=Role.LEAD)
    return project, job, lead


def timed(client, url, repeat):
    client.get(url)  # warm
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - started)
        assert response.status_code == 200, response.status_code
    return times, len(response.content)


def main():
    call_command("migrate", verbosity=0)
    job = AutoLabelJob.objects.filter(project__slug=SLUG).first()
    if ARGS.rebuild or job is None or job.total_turns != ARGS.turns:
        print(f"building {ARGS.turns:,} turns x {SENTENCES} sentences and a running job's predictions ...", flush=True)
        project, job, lead = build(ARGS.turns)
    else:
        project, lead = job.project, get_user_model().objects.get(username="bench-lead")
    client = Client(HTTP_HX_REQUEST="true")
    client.force_login(lead)
    url = reverse("autolabel:job_detail", args=[project.slug, job.pk])
    newest = Prediction.objects.filter(job=job).latest("pk").pk
    print(f"{Prediction.objects.filter(job=job).count():,} predictions; {ARGS.repeat} polls per case")
    for case, after in (("nothing new", newest), ("new predictions (the last 20 turns sent)", newest - 1)):
        times, size = timed(client, f"{url}?partial=progress&after={after}", ARGS.repeat)
        print(f"{case}: median {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms per poll, "
              f"{size:,} bytes")
    print(f"machine: {os.cpu_count()} CPUs, load average {' / '.join(f'{x:.1f}' for x in os.getloadavg())} (1/5/15 min)")


if __name__ == "__main__":
    main()
