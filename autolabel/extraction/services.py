"""LLM jobs of the finer views: create, run (a Celery worker calls ``extraction_job_run``), cancel.

Two kinds: claim-triplet extraction over a project's turns, and severity ratings
(HalluDetect) of the sentences a pre-labelling job predicted invented,
misleading or speculative (when the project has severity switched on).
A job sends one request per turn (the prompts of autolabel/extraction/triplets.py)
to the profile's OpenAI-compatible endpoint through ``llm.Caller``: retries with
backoff on 429/5xx/timeouts, counted; a turn whose request still fails is a
*fault*, counted, and left for a later job (``only_missing``) rather than
crashing the job. Triplets are written per turn in one transaction, once per
job and turn, so a job that is run again (a worker restarted) writes nothing twice.
"""

from __future__ import annotations

import asyncio
import logging

from django.db import transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from annotator.models import ClaimTriplet, Sentence, Turn
from annotator.claims.services import ClaimsError
from annotator.claims.extraction import triplets_add_extracted
from annotator.projects.protocols import protocol_for
from annotator.queue import task_send_after_commit

from autolabel.extraction import triplets as extraction
from autolabel.endpoints.policy import connection_for
from autolabel.jobs.llm import Caller, EndpointConfigurationError
from autolabel.models import AutoLabelJob, ExtractionJob, LLMProfile, Prediction, SeverityPrediction

log = logging.getLogger(__name__)
PAGE = 100


class ExtractionJobError(ValueError):
    """A job that cannot be started; the message says why."""


def _to_rate(job: ExtractionJob):
    """Severity jobs: the source job's predictions whose label takes a severity (the project's protocol) this job
    has not rated yet."""
    severity_labels = sorted(protocol_for(job.project).severity_labels)
    return Prediction.objects.filter(job_id=job.source_job_id, label__in=severity_labels).exclude(
        Exists(SeverityPrediction.objects.filter(job_id=job.pk, sentence_id=OuterRef("sentence_id"))))


def _turns(job: ExtractionJob):
    turns = Turn.objects.filter(dialogue__project_id=job.project_id, is_qualification=False)
    if job.kind == ExtractionJob.Kind.SEVERITY:
        return turns.filter(pk__in=_to_rate(job).values("sentence__turn_id")).order_by("id")
    if job.only_missing:
        turns = turns.exclude(Exists(ClaimTriplet.objects.filter(turn_id=OuterRef("pk"))))
    return turns.order_by("id")


def extraction_job_create(*, project, profile: LLMProfile, model: str = "", only_missing: bool = True,
                          created_by=None, enqueue: bool = True, kind: str = ExtractionJob.Kind.TRIPLETS,
                          source_job: AutoLabelJob | None = None) -> ExtractionJob:
    job = ExtractionJob(project=project, profile=profile, model=model or profile.default_model,
                        only_missing=only_missing, created_by=created_by, kind=kind, source_job=source_job)
    extraction_job_prepare(job)
    if enqueue:
        extraction_job_enqueue(job.pk)
    return job


def extraction_job_check(job: ExtractionJob) -> str | None:
    """Why the job cannot start, or None."""
    if not (job.model or job.profile.default_model):
        return "Name a model (the profile has no default model)."
    if job.kind == ExtractionJob.Kind.SEVERITY:
        if job.source_job is None or job.source_job.project_id != job.project_id:
            return "A severity job rates the predictions of a pre-labelling job of the same project."
        if not job.project.enable_severity:
            return "Severity is switched off for this project."
    elif job.source_job is not None:
        return "Only a severity job takes a pre-labelling job."
    return None


def extraction_job_prepare(job: ExtractionJob) -> ExtractionJob:
    """Fill in the model and the number of turns, and save (the admin's add form calls this too)."""
    problem = extraction_job_check(job)
    if problem:
        raise ExtractionJobError(problem)
    if not job.model:
        job.model = job.profile.default_model
    job.total_turns = _turns(job).count() if job.project_id else 0
    job.save()
    return job


def extraction_job_enqueue(job_id: int):
    task_send_after_commit("autolabel.extract_triplets", job_id, job=ExtractionJob.objects.filter(pk=job_id))


def extraction_job_cancel(job: ExtractionJob) -> ExtractionJob:
    ExtractionJob.objects.filter(pk=job.pk).update(cancel_requested=True)
    ExtractionJob.objects.filter(pk=job.pk, status=ExtractionJob.Status.QUEUED).update(
        status=ExtractionJob.Status.CANCELLED, finished_at=timezone.now())
    job.refresh_from_db()
    return job


def _caller(job: ExtractionJob) -> Caller:
    profile = job.profile
    base_url, api_key = connection_for(profile)
    return Caller(
        base_url=base_url, api_key=api_key, model=job.model,
        concurrency=profile.concurrency, timeout=profile.timeout_seconds, max_retries=profile.max_retries,
        temperature=0.0, max_tokens=profile.max_tokens,
    )


def _page(job: ExtractionJob, after_id: int):
    """The next turns to do: (turn id, [(sentence index, id, text) to send], question, reference, messages)."""
    turns = list(_turns(job).filter(pk__gt=after_id).values_list("pk", "user_message", "dialogue__reference")[:PAGE])
    sentences: dict[int, list] = {pk: [] for pk, _, _ in turns}
    rows = Sentence.objects.filter(turn_id__in=sentences)
    if job.kind == ExtractionJob.Kind.SEVERITY:
        rows = rows.filter(pk__in=_to_rate(job).values("sentence_id"))
    for turn_id, index, pk, text in rows.order_by("turn_id", "index").values_list("turn_id", "index", "pk", "text"):
        sentences[turn_id].append((index, pk, text))
    page = []
    for pk, question, reference in turns:
        chosen = sentences[pk]
        if job.kind == ExtractionJob.Kind.SEVERITY:
            messages = extraction.build_severity_messages(reference, [(i + 1, t) for i, _, t in chosen], question)
        else:
            messages = extraction.build_messages([t for _, _, t in chosen], question)
        page.append((pk, chosen, messages))
    return page


async def _extract(caller: Caller, messages):
    return await caller.chat(messages)


def _record_severity(job: ExtractionJob, chosen, choice, counts) -> dict:
    rated, problems = extraction.parse_severity_reply(choice.text, [i + 1 for i, _, _ in chosen])
    by_number = {i + 1: pk for i, pk, _ in chosen}
    rows = [SeverityPrediction(job=job, sentence_id=by_number[n], severity=s, justification=why)
            for n, (s, why) in rated.items()]
    SeverityPrediction.objects.bulk_create(rows, ignore_conflicts=True)  # once per job and sentence
    counts["created"], counts["problems"] = len(rows), problems
    return counts


def _record(job: ExtractionJob, turn_id: int, chosen, result) -> dict:
    counts = {"requests": 1 + result.retries, "retries": result.retries, "faults": 0, "created": 0,
              "prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens, "problems": {}}
    if result.error or not result.choices:
        counts["faults"] = 1
        log.warning("extraction job %s: turn %s failed: %s", job.pk, turn_id, result.error or "no choices")
        return counts
    choice = result.choices[0]
    if job.kind == ExtractionJob.Kind.SEVERITY:
        return _record_severity(job, chosen, choice, counts)
    parsed = extraction.parse_reply(choice.text, len(chosen))
    if choice.truncated:
        parsed.problem("reply cut short")
    counts["problems"] = parsed.problems
    try:
        counts["created"] = triplets_add_extracted(
            turn_id, [(t.sentence_number - 1, t.head, t.relation, t.tail) for t in parsed.triplets],
            job_id=job.pk, model=job.model,
        )
    except ClaimsError as error:  # a part longer than allowed, etc.: the reply is unusable
        counts["faults"] = 1
        counts["problems"] = {**parsed.problems, f"unusable reply: {error}": 1}
    return counts


def _save_progress(job: ExtractionJob, totals: dict):
    problems = dict(job.problems or {})
    for kind, n in totals.pop("problems").items():
        problems[kind] = problems.get(kind, 0) + n
    ExtractionJob.objects.filter(pk=job.pk).update(
        done_turns=F("done_turns") + totals["done"], triplets_created=F("triplets_created") + totals["created"],
        requests=F("requests") + totals["requests"], retries=F("retries") + totals["retries"],
        faults=F("faults") + totals["faults"], prompt_tokens=F("prompt_tokens") + totals["prompt_tokens"],
        completion_tokens=F("completion_tokens") + totals["completion_tokens"], problems=problems,
    )
    job.refresh_from_db()


def extraction_job_run(job_id: int) -> str:
    """Run a queued job to its end (or until cancelled); returns the final status."""
    with transaction.atomic():
        job = ExtractionJob.objects.select_for_update().select_related("profile", "project").get(pk=job_id)
        if job.status != ExtractionJob.Status.QUEUED:
            return job.status  # already run, running elsewhere, or cancelled
        job.status = ExtractionJob.Status.RUNNING
        job.started_at = timezone.now()
        job.save(update_fields=["status", "started_at"])
    try:
        status = _run(job)
        error = ""
    except EndpointConfigurationError as exc:
        status, error = ExtractionJob.Status.FAILED, str(exc)
    except Exception as exc:  # recorded for the lead, then re-raised for the worker's log
        ExtractionJob.objects.filter(pk=job.pk).update(
            status=ExtractionJob.Status.FAILED, error=f"{type(exc).__name__}: {exc}", finished_at=timezone.now())
        raise
    ExtractionJob.objects.filter(pk=job.pk).update(status=status, error=error, finished_at=timezone.now())
    return status


def _run(job: ExtractionJob) -> str:
    """Page by page: read the turns, send their requests at once (at most ``concurrency`` in flight), write."""
    after = 0
    while True:
        page = _page(job, after)
        if not page:
            return ExtractionJob.Status.DONE
        # "only missing" re-reads the turns without triplets: move past the page either way.
        after = page[-1][0]
        results = asyncio.run(_send(job, page))
        totals = {"done": 0, "created": 0, "requests": 0, "retries": 0, "faults": 0, "prompt_tokens": 0,
                  "completion_tokens": 0, "problems": {}}
        for (turn_id, chosen, _), result in zip(page, results):
            counts = _record(job, turn_id, chosen, result)
            totals["done"] += 1
            for key in ("created", "requests", "retries", "faults", "prompt_tokens", "completion_tokens"):
                totals[key] += counts[key]
            for kind, n in counts["problems"].items():
                totals["problems"][kind] = totals["problems"].get(kind, 0) + n
        _save_progress(job, totals)
        if job.cancel_requested:
            return ExtractionJob.Status.CANCELLED


async def _send(job: ExtractionJob, page):
    caller = _caller(job)
    try:
        return await asyncio.gather(*(_extract(caller, messages) for _, _, messages in page))
    finally:
        await caller.aclose()
