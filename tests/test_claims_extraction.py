"""LLM claim-triplet extraction: prompt and parser (pure), jobs over real HTTP to the baseline server, a real worker."""

from io import StringIO

import pytest
from django.core.management import call_command

from annotator.models import ClaimTriplet
from annotator.domain.vocabulary import TripletSource
from autolabel.extraction import triplets as extraction
from autolabel.extraction.services import extraction_job_create, extraction_job_run
from autolabel.models import ExtractionJob
from tests.autolabel_fixtures import baseline_llm, baseline_server, profile  # noqa: F401
from tests.conftest import wait_until

from .factories_claims import turn_with_triplets, views_project

SENTENCES = ["The Amazon flows through Brazil.", "Hello there!", "It is probably the most important river on Earth."]


# --------------------------------------------------------------------------- pure


def test_prompt_marks_every_sentence_and_the_parser_ties_triplets_to_them():
    content = extraction.build_messages(SENTENCES, "Tell me about the Amazon.")[0]["content"]
    assert extraction.is_extraction_prompt(content)
    assert "<s1>The Amazon flows through Brazil.</s1>" in content and "<s3>" in content
    assert "Question: Tell me about the Amazon." in content
    reply = "\n".join([
        "Here are the triplets:",                      # chatter
        "s1 | The Amazon | flows through | Brazil",
        "- S3 | Amazon | is | most important river",   # bullet and capital S accepted
        "s1 | the amazon | flows through | brazil",    # duplicate
        "s7 | X | y | z",                              # no such sentence
        "s2 | Hello |  | there",                      # empty relation
    ])
    parsed = extraction.parse_reply(reply, 3)
    assert [(t.sentence_number, t.head, t.relation, t.tail) for t in parsed.triplets] == [
        (1, "The Amazon", "flows through", "Brazil"), (3, "Amazon", "is", "most important river")]
    assert parsed.problems == {"line not in the format": 1, "duplicate triplet": 1, "unknown sentence number": 1,
                               "empty part": 1}
    assert extraction.parse_reply("", 3).problems == {"empty reply": 1}


def test_baseline_rule_is_transparent():
    assert extraction.baseline_triplet("The Amazon flows through Brazil.") == ("The Amazon", "flows through", "Brazil")
    assert extraction.baseline_triplet("Laskowice is a village, in Poland.") == ("Laskowice", "is", "a village")
    assert extraction.baseline_triplet("Hello there!") is None
    answer = extraction.baseline_answer(extraction.build_messages(SENTENCES)[0]["content"])
    assert answer.splitlines() == ["s1 | The Amazon | flows through | Brazil",
                                   "s3 | It | is | probably the most important river on Earth"]


# --------------------------------------------------------------------------- jobs, real HTTP


@pytest.mark.django_db
def test_job_extracts_triplets_of_turns_without_any_over_http_and_is_idempotent(profile):
    project = views_project()
    empty = turn_with_triplets(project, triplets=(), sentences=SENTENCES)
    imported = turn_with_triplets(project)  # already has two imported triplets: skipped
    job = extraction_job_create(project=project, profile=profile, enqueue=False)
    assert job.total_turns == 1 and job.model == "baseline-lexical"
    assert extraction_job_run(job.pk) == ExtractionJob.Status.DONE
    job.refresh_from_db()
    assert (job.done_turns, job.triplets_created, job.faults, job.requests) == (1, 2, 0, 1)
    triplets = list(ClaimTriplet.objects.filter(turn=empty).order_by("index"))
    assert [(t.sentence.index, t.head, t.relation, t.tail, t.source) for t in triplets] == [
        (0, "The Amazon", "flows through", "Brazil", TripletSource.LLM),
        (2, "It", "is", "probably the most important river on Earth", TripletSource.LLM),
    ]
    assert triplets[0].metadata == {"job": job.pk, "model": "baseline-lexical"}
    assert imported.triplets.count() == 2
    # Running the same job again does nothing; a new "all turns" job adds after the existing triplets.
    assert extraction_job_run(job.pk) == ExtractionJob.Status.DONE
    assert ClaimTriplet.objects.filter(turn=empty).count() == 2
    again = extraction_job_create(project=project, profile=profile, only_missing=False, enqueue=False)
    extraction_job_run(again.pk)
    assert [t.index for t in imported.triplets.order_by("index")] == [0, 1, 2, 3]
    assert imported.triplets.filter(source=TripletSource.LLM).count() == 2


@pytest.mark.django_db
def test_faults_are_retried_counted_and_never_crash_the_job(profile, baseline_llm):
    project = views_project()
    for _ in range(3):
        turn_with_triplets(project, triplets=(), sentences=SENTENCES)
    profile.max_retries = 1
    profile.save()
    # Every request fails with 500: each turn is retried once, then counted as a fault.
    baseline_llm.configure(faults={"500": {"every": 1}})
    job = extraction_job_create(project=project, profile=profile, enqueue=False)
    assert extraction_job_run(job.pk) == ExtractionJob.Status.DONE
    job.refresh_from_db()
    assert (job.done_turns, job.faults, job.retries, job.triplets_created) == (3, 3, 3, 0)
    # Malformed replies: the lines that still follow the format are kept, the rest counted.
    baseline_llm.configure(faults={"malformed": {"every": 1}})
    job = extraction_job_create(project=project, profile=profile, enqueue=False)
    extraction_job_run(job.pk)
    job.refresh_from_db()
    assert job.faults == 0 and job.problems.get("line not in the format", 0) >= 3


@pytest.mark.django_db
def test_command_runs_a_job_inline(profile):
    project = views_project()
    turn_with_triplets(project, triplets=(), sentences=SENTENCES)
    out = StringIO()
    call_command("extract_triplets", "--project", project.slug, "--profile", profile.name, "--inline", stdout=out)
    assert "done: 1/1 turns, 2 triplets" in out.getvalue()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_the_extraction_job(start_celery_worker, baseline_llm, profile):
    project = views_project()
    for _ in range(4):
        turn_with_triplets(project, triplets=(), sentences=SENTENCES)
    start_celery_worker(concurrency=1)
    job = extraction_job_create(project=project, profile=profile)  # enqueued on commit
    wait_until(lambda: ExtractionJob.objects.get(pk=job.pk).is_finished, timeout=90, message="the extraction job")
    job.refresh_from_db()
    assert (job.status, job.done_turns, job.triplets_created) == (ExtractionJob.Status.DONE, 4, 8)


@pytest.mark.django_db
def test_a_lead_starts_an_extraction_job_in_the_admin(client, profile, django_capture_on_commit_callbacks):
    from tests.factories import UserFactory

    project = views_project()
    turn_with_triplets(project, triplets=(), sentences=SENTENCES)
    staff = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(staff)
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.post("/admin/autolabel/extractionjob/add/",
                               {"project": project.pk, "kind": "triplets", "profile": profile.pk, "model": "",
                                "only_missing": "on", "source_job": ""})
    assert response.status_code == 302
    job = ExtractionJob.objects.get()
    assert (job.total_turns, job.model, job.created_by, job.status) == (1, "baseline-lexical", staff, "queued")
    assert len(callbacks) == 1  # the task is sent once the job is committed


# --------------------------------------------------------------------------- severity by the pre-labeler


def test_severity_prompt_parser_and_baseline_rule():
    reference = "The Amazon flows through Brazil and Peru. It is 6400 km long."
    content = extraction.build_severity_messages(reference, [(2, "It is 7000 km long."), (3, "Cats sing opera.")])[0]["content"]
    assert extraction.is_severity_prompt(content) and not extraction.is_extraction_prompt(content)
    answer = extraction.baseline_severity_answer(content)
    assert answer.splitlines() == ["s2 | 5 | numbers not in the reference: 7000",
                                   "s3 | 4 | 0% of its content words are in the reference"]
    rated, problems = extraction.parse_severity_reply(answer + "\ns2 | 1 | again\ns9 | 3 | x\nnonsense", [2, 3, 4])
    assert rated == {2: (5, "numbers not in the reference: 7000"), 3: (4, "0% of its content words are in the reference")}
    assert problems == {"sentence rated twice": 1, "unknown sentence number": 1, "line not in the format": 1,
                        "sentence not rated": 1}


@pytest.mark.django_db
def test_prelabeler_rates_the_severity_of_its_predicted_hallucinations(profile, client):
    from annotator.models import GoldLabel
    from annotator.domain.vocabulary import GoldProvenance, Label, Role, SEVERITY_LABELS
    from autolabel.jobs import services
    from autolabel.models import Prediction, SeverityPrediction

    from .factories import member
    from .factories_workspace import NO_PASSWORD

    project = views_project()
    turn = turn_with_triplets(project, triplets=(), sentences=[
        "The Amazon flows through Brazil.", "It carries 90 percent of the world's fresh water.",
        "Penguins invented the telescope in Antarctica."])
    source = services.job_create(project=project, profile=profile, samples=3, threshold=2, enqueue=False)
    services.job_run(source.pk)
    predicted = dict(Prediction.objects.filter(job=source).values_list("sentence__index", "label"))
    hallucinated = {i for i, label in predicted.items() if label in SEVERITY_LABELS}
    assert hallucinated, predicted  # the baseline finds at least the penguins
    project.enable_severity = False
    project.save()
    with pytest.raises(Exception, match="switched off"):
        extraction_job_create(project=project, profile=profile, kind=ExtractionJob.Kind.SEVERITY, source_job=source,
                              enqueue=False)
    project.enable_severity = True
    project.save()
    job = extraction_job_create(project=project, profile=profile, kind=ExtractionJob.Kind.SEVERITY, source_job=source,
                                enqueue=False)
    assert extraction_job_run(job.pk) == ExtractionJob.Status.DONE
    job.refresh_from_db()
    ratings = {p.sentence.index: (p.severity, p.justification) for p in SeverityPrediction.objects.filter(job=job)}
    assert set(ratings) == hallucinated and job.triplets_created == len(hallucinated) and job.faults == 0
    if 2 in ratings:
        assert ratings[2][0] >= 3
    # The claims reports compare the pre-labeler's severity with the gold.
    first = min(ratings)
    GoldLabel.objects.create(sentence=turn.sentences.get(index=first), label=Label.INVENTED,
                             provenance=GoldProvenance.OVERRIDE, severity=ratings[first][0])
    lead = member(project, Role.LEAD, password=NO_PASSWORD)
    client.force_login(lead)
    report = client.get(f"/p/{project.slug}/claims/reports/").context["prelabel_severity"]
    assert (report["n"], report["exact"], report["mean_abs_diff"]) == (1, 1.0, 0.0)
    # A new job (e.g. another model) rates the same sentences again; the finished job is not re-run.
    again = extraction_job_create(project=project, profile=profile, kind=ExtractionJob.Kind.SEVERITY,
                                  source_job=source, enqueue=False)
    assert again.total_turns == 1


@pytest.mark.django_db
def test_the_admin_refuses_a_severity_job_without_a_prelabelling_job(client, profile):
    from tests.factories import UserFactory

    project = views_project()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    response = client.post("/admin/autolabel/extractionjob/add/",
                           {"project": project.pk, "kind": "severity", "profile": profile.pk, "model": "",
                            "only_missing": "on", "source_job": ""})
    assert response.status_code == 200
    assert "rates the predictions of a pre-labelling job" in response.content.decode()
    assert not ExtractionJob.objects.exists()
