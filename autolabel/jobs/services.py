"""The life of an auto-labelling job: prompt versions, jobs created, run, cancelled and adopted.

A job runs in one Celery task (tasks.py), which calls ``job_run``: it takes the job's lease,
hands the job to the realtime runner (realtime.py) or the Batch API runner (batch.py), and
records how the job ended. Both runners take each turn through the pure pipeline
(pipeline.py) and write finished turns with progress.flush, which renews the lease. A worker
killed mid-job stops renewing it; the lease expires, a watchdog re-enqueues the job
(``jobs_orphaned_claim``), and another worker adopts it and carries on from the turns not
marked done.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from datetime import timedelta

from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from annotator.projects.protocols import protocol_of_version
from annotator.queue import task_send

from autolabel.labelling import prompting
from autolabel.jobs.batch import run_batch
from autolabel.jobs.learned import MODEL_NAME, learned_estimate, run_learned
from autolabel.jobs.llm import EndpointConfigurationError
from autolabel.endpoints.policy import profile_refusal
from autolabel.jobs import estimation, selectors, states
from autolabel.learned.store import JudgeRefused, judge_refusal
from autolabel.learned.decision import SAMPLES, THRESHOLD
from autolabel.models import AutoLabelJob, JobTurn, LearnedJudge, LLMProfile, Prediction, PromptVersion
from autolabel.labelling.pipeline import JobConfig
from autolabel.jobs.progress import LEASE_SECONDS, LeaseLost, lease_deadline
from autolabel.jobs.realtime import run_realtime

log = logging.getLogger(__name__)

MAX_SAMPLES = 20


class JobError(ValueError):
    """A job that cannot be created as asked; the message says why."""


# ---------------------------------------------------------------------------
# Prompt versions
# ---------------------------------------------------------------------------

def prompt_version_current(project) -> PromptVersion:
    """The project's latest prompt version, creating version 1 (the default wording) if it has none."""
    latest = PromptVersion.objects.filter(project=project).order_by("-version").first()
    if latest is not None:
        return latest
    return prompt_version_create(project, notes="Default wording.")


def prompt_version_create(project, stage1_template=None, stage2_template=None, notes="") -> PromptVersion:
    with transaction.atomic():
        last = PromptVersion.objects.select_for_update().filter(project=project).aggregate(m=Max("version"))["m"] or 0
        return PromptVersion.objects.create(
            project=project, version=last + 1,
            stage1_template=stage1_template or prompting.DEFAULT_STAGE1_TEMPLATE,
            stage2_template=stage2_template or prompting.DEFAULT_STAGE2_TEMPLATE, notes=notes,
        )


# ---------------------------------------------------------------------------
# Jobs: create, cancel
# ---------------------------------------------------------------------------

def job_create(*, project, profile: LLMProfile, model: str = "", samples: int = 5, threshold: int = 3,
               prompt_version: PromptVersion | None = None, turn_ids=None, use_n: bool = True,
               batch_mode: bool = False, created_by=None, enqueue: bool = True) -> AutoLabelJob:
    """Create a job over ``turn_ids`` (default: every non-qualification turn of the project) and enqueue it."""
    if not 1 <= samples <= MAX_SAMPLES:
        raise JobError(f"samples must be between 1 and {MAX_SAMPLES}, not {samples}")
    if not 1 <= threshold <= samples:
        raise JobError(f"threshold must be between 1 and the number of samples ({samples}), not {threshold}")
    if batch_mode and not profile.supports_batch:
        raise JobError(f"the endpoint profile {profile.name!r} does not offer the Batch API")
    if profile.project_id is not None and profile.project_id != project.pk:
        raise JobError(f"the endpoint {profile.name!r} belongs to another project")
    if refusal := profile_refusal(profile):
        raise JobError(refusal)
    if prompt_version is None:
        prompt_version = prompt_version_current(project)
    elif prompt_version.project_id != project.pk:
        raise JobError("the prompt version belongs to another project")
    turns, strangers = selectors.job_scope(project, turn_ids)
    if strangers:
        raise JobError(f"turns not in project {project.slug}: {', '.join(map(str, strangers[:10]))}")
    job_estimate = estimation.estimate_for(
        project, profile, turns=turns, samples=samples, use_n=use_n and profile.supports_n, batch_mode=batch_mode,
        prompt_version=prompt_version)
    examples = selectors.active_example_ids(project)
    with transaction.atomic():
        job = AutoLabelJob.objects.create(
            project=project, profile=profile, prompt_version=prompt_version, model=model or profile.default_model,
            protocol_version_id=project.protocol_version_id,
            samples=samples, threshold=threshold, use_n=use_n and profile.supports_n, batch_mode=batch_mode,
            created_by=created_by,
            parameters={
                "base_url": profile.endpoint_url(), "temperature": profile.temperature, "max_tokens": profile.max_tokens,
                "concurrency": profile.concurrency, "timeout": profile.timeout_seconds,
                "max_retries": profile.max_retries, "contrastive_examples": examples,
                "prompt_version": prompt_version.version, "protocol": protocol_summary(project),
            },
            estimate=job_estimate.as_dict(),
        )
        ids = turns.order_by("pk").values_list("pk", flat=True)
        batch, total = [], 0
        for turn_id in ids.iterator(chunk_size=2000):
            batch.append(JobTurn(job=job, turn_id=turn_id))
            if len(batch) >= 2000:
                JobTurn.objects.bulk_create(batch)
                total += len(batch)
                batch = []
        JobTurn.objects.bulk_create(batch)
        total += len(batch)
        if total == 0:
            raise JobError("there are no turns to label")
        job.total_turns = total
        job.save(update_fields=["total_turns"])
        if enqueue:
            transaction.on_commit(lambda: job_enqueue(job.pk))
    return job


def learned_job_create(*, project, judge: LearnedJudge, created_by=None, enqueue: bool = True) -> AutoLabelJob:
    """A job labelling every non-qualification turn of the project with ``judge`` (``JudgeRefused`` when the
    judge may not: another project, not trained, another protocol version)."""
    refusal = judge_refusal(judge, project, project.protocol_version_id)
    if refusal:
        raise JudgeRefused(refusal)
    turns, _ = selectors.job_scope(project)  # the turns an LLM job labels by default
    ids = list(turns.order_by("pk").values_list("pk", flat=True))
    if not ids:
        raise JobError("there are no turns to label")
    with transaction.atomic():
        job = AutoLabelJob.objects.create(
            project=project, profile=None, learned_judge=judge, prompt_version=prompt_version_current(project),
            protocol_version_id=project.protocol_version_id, model=f"{MODEL_NAME} #{judge.pk}",
            samples=SAMPLES, threshold=THRESHOLD, use_n=False, created_by=created_by, total_turns=len(ids),
            parameters={"learned_judge": judge.pk, "gold_sentences": judge.gold_sentences,
                        "votes_job": judge.votes_job_id, "protocol": protocol_summary(project)},
            estimate=learned_estimate(project).as_dict(),
        )
        JobTurn.objects.bulk_create([JobTurn(job=job, turn_id=turn_id) for turn_id in ids], batch_size=2000)
        if enqueue:
            transaction.on_commit(lambda: job_enqueue(job.pk))
    return job


def job_enqueue(job_id: int):
    task_send("autolabel.run_job", job_id, job=AutoLabelJob.objects.filter(pk=job_id))  # refused: failed, 503


def job_cancel(job: AutoLabelJob) -> AutoLabelJob:
    """Ask a job to stop. A queued job stops at once; a running one at its next write (within a second or so)."""
    with transaction.atomic():
        job = AutoLabelJob.objects.select_for_update().get(pk=job.pk)
        if job.is_finished:
            return job
        job.cancel_requested = True
        fields = ["cancel_requested"]
        if job.status == AutoLabelJob.Status.QUEUED:
            job.status, job.finished_at = AutoLabelJob.Status.CANCELLED, timezone.now()
            fields += ["status", "finished_at"]
        job.save(update_fields=fields)
    return job


def jobs_orphaned_claim() -> list[int]:
    """Jobs to re-enqueue: running jobs whose worker stopped renewing the lease, and queued jobs
    nobody picked up. Each is marked "adoption pending" for two lease periods, so that the
    watchdogs of several workers do not flood the queue with copies while it waits for a worker.
    """
    now = timezone.now()
    pending_until = now + timedelta(seconds=2 * LEASE_SECONDS)
    lapsed = Q(lease_until__lt=now) | Q(lease_until__isnull=True)
    running = Q(status=AutoLabelJob.Status.RUNNING) & lapsed
    queued = (
        Q(status=AutoLabelJob.Status.QUEUED, cancel_requested=False, lease_owner="",
          created_at__lt=now - timedelta(seconds=2 * LEASE_SECONDS)) & lapsed
    )
    with transaction.atomic():
        ids = list(AutoLabelJob.objects.select_for_update().filter(running | queued).values_list("pk", flat=True))
        if ids:
            AutoLabelJob.objects.filter(pk__in=ids).update(lease_owner="", lease_until=pending_until)
    return ids


def _job_config(job: AutoLabelJob) -> JobConfig:
    examples = selectors.prompt_examples(job.parameters.get("contrastive_examples") or [])
    return JobConfig(job.samples, job.threshold, job.use_n, job.prompt_version.stage1_template,
                     job.prompt_version.stage2_template, examples, protocol=job_protocol(job))


def job_protocol(job: AutoLabelJob):
    """The protocol a job labels with: the project's version recorded at its creation (built-in when none)."""
    return protocol_of_version(job.protocol_version)


def protocol_summary(project) -> dict:
    """The protocol's id, version and name as recorded in the job's parameters (read by a person)."""
    protocol = protocol_of_version(project.protocol_version)
    return {"id": protocol.id, "version": protocol.version, "name": protocol.name,
            "project_version": project.protocol_version.number if project.protocol_version_id else None}


# ---------------------------------------------------------------------------
# Running a job: the lease, the runner, the end
# ---------------------------------------------------------------------------

def _lease_acquire(job_id: int, owner: str) -> bool:
    now = timezone.now()
    with transaction.atomic():
        job = AutoLabelJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.is_finished:
            return False
        if job.lease_owner and job.lease_owner != owner and job.lease_until and job.lease_until > now:
            return False
        job.lease_owner, job.lease_until = owner, lease_deadline()
        if job.status == AutoLabelJob.Status.QUEUED:
            job.status, job.started_at = AutoLabelJob.Status.RUNNING, now
        job.save(update_fields=["lease_owner", "lease_until", "status", "started_at"])
    return True


def _finish(job: AutoLabelJob, status: str, error: str = ""):
    AutoLabelJob.objects.filter(pk=job.pk).update(
        status=status, error=error[:5000], finished_at=timezone.now(), lease_owner="", lease_until=None,
        done_turns=JobTurn.objects.filter(job_id=job.pk, done=True).count(),
    )
    job.refresh_from_db()


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def job_run(job_id: int, owner: str | None = None) -> str:
    """Run (or resume) a job to its end. Returns the final status, or '' if another worker holds it."""
    owner = owner or _owner()
    if not _lease_acquire(job_id, owner):
        return ""
    job = AutoLabelJob.objects.select_related("profile", "prompt_version", "project", "protocol_version",
                                              "learned_judge").get(pk=job_id)
    if job.cancel_requested:
        _finish(job, AutoLabelJob.Status.CANCELLED)
        return job.status
    try:
        if job.learned_judge_id:  # the learned judge (autolabel/learned): no endpoint, no prompt
            stopped = run_learned(job, owner)
        elif job.batch_mode:
            stopped = run_batch(job, owner, _job_config(job))
        else:
            stopped = run_realtime(job, owner, _job_config(job))
    except LeaseLost as error:
        log.warning("%s", error)
        return ""
    except (EndpointConfigurationError, JudgeRefused) as error:
        _finish(job, AutoLabelJob.Status.FAILED, str(error))
        return job.status
    except Exception as error:  # recorded on the job for the lead to see, then re-raised for the worker's log
        _finish(job, AutoLabelJob.Status.FAILED, f"{type(error).__name__}: {error}")
        raise
    if stopped:
        _finish(job, AutoLabelJob.Status.CANCELLED)
        return job.status
    job.refresh_from_db(fields=["requests", "faults", "first_fault"])
    labelled = Prediction.objects.filter(job_id=job.pk).exclude(label="").count()
    status, error = states.end_of_run(job.requests, job.faults, labelled, job.first_fault)
    _finish(job, status, error)
    return job.status
