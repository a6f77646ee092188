"""Writes of the auto-labeller: prompt versions, jobs (create, run, cancel, adopt).

A job runs in one Celery task. The task's thread reads turns from the database
page by page and hands each turn to an asyncio event loop running in a helper
thread, which makes the LLM calls (at most ``profile.concurrency`` in flight).
Finished turns come back to the task's thread, which writes them in small
transactions: the sample replies, the predictions and the turn's ``done`` mark
together. A worker killed mid-job loses only the turns in flight; the job's
lease expires, another worker adopts the job and carries on from the turns not
marked done. Unique constraints on (job, turn, stage, sample) and (job, sentence)
make a replayed write harmless.

Calls per turn: stage 1 costs ``samples`` requests (one with ``n``); stage 2
the same again, only for turns in which a sample judged a sentence cognitive.
Never one request per sentence.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import os
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import reset_queries, transaction
from django.db.models import Max, Q
from django.utils import timezone

from annotator.models import Sentence, Turn

from . import llm, parsing, prompting
from .llm import Caller, CallResult, Choice, EndpointConfigurationError, api_key_from_env, cost_of, request_body
from .models import AutoLabelJob, ContrastiveExample, JobTurn, LLMProfile, Prediction, PromptVersion, SampleReply
from .voting import decide

log = logging.getLogger(__name__)

LEASE_SECONDS = float(os.environ.get("AUTOLABEL_LEASE_SECONDS", "30"))
FLUSH_TURNS = 50
FLUSH_SECONDS = 1.0
PAGE_TURNS = 200
MAX_EXAMPLES = 8
MAX_SAMPLES = 20
BATCH_POLL_SECONDS = float(os.environ.get("AUTOLABEL_BATCH_POLL_SECONDS", "2"))
BATCH_ROUNDS = 3


class JobError(ValueError):
    """A job that cannot be created as asked; the message says why."""


class LeaseLost(RuntimeError):
    """Another worker adopted the job (this one was presumed dead)."""


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
    if refusal := llm.api_key_env_refusal(profile.api_key_env):
        raise JobError(refusal)
    if prompt_version is None:
        prompt_version = prompt_version_current(project)
    elif prompt_version.project_id != project.pk:
        raise JobError("the prompt version belongs to another project")
    turns = Turn.objects.filter(dialogue__project=project)
    if turn_ids is None:
        turns = turns.filter(is_qualification=False)
    else:
        turn_ids = sorted({int(t) for t in turn_ids})
        found = set(turns.filter(pk__in=turn_ids).values_list("pk", flat=True))
        strangers = [t for t in turn_ids if t not in found]
        if strangers:
            raise JobError(f"turns not in project {project.slug}: {', '.join(map(str, strangers[:10]))}")
        turns = turns.filter(pk__in=turn_ids)
    examples = list(
        ContrastiveExample.objects.filter(project=project, active=True).values_list("pk", flat=True)[:MAX_EXAMPLES]
    )
    with transaction.atomic():
        job = AutoLabelJob.objects.create(
            project=project, profile=profile, prompt_version=prompt_version, model=model or profile.default_model,
            samples=samples, threshold=threshold, use_n=use_n and profile.supports_n, batch_mode=batch_mode,
            created_by=created_by,
            parameters={
                "base_url": profile.base_url, "temperature": profile.temperature, "max_tokens": profile.max_tokens,
                "concurrency": profile.concurrency, "timeout": profile.timeout_seconds,
                "max_retries": profile.max_retries, "contrastive_examples": examples,
                "prompt_version": prompt_version.version,
            },
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


def job_enqueue(job_id: int):
    from .tasks import autolabel_run_job

    autolabel_run_job.delay(job_id)


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


# ---------------------------------------------------------------------------
# Per-turn logic shared by the real-time and batch runners
# ---------------------------------------------------------------------------

@dataclass
class TurnSpec:
    job_turn_id: int
    turn_id: int
    reference: str
    question: str
    sentences: list[tuple[int, int, str]]  # (number, sentence id, text); number = index + 1
    existing: dict = field(default_factory=dict)  # (stage, sample_index) -> {"votes": ..., "error": ...}

    @property
    def numbers(self):
        return [number for number, _, _ in self.sentences]


@dataclass
class TurnOutcome:
    spec: TurnSpec
    rows: list[dict] = field(default_factory=list)  # new SampleReply rows
    requests: int = 0
    retries: int = 0
    faults: int = 0
    predictions: list[dict] = field(default_factory=list)
    abstentions: int = 0
    problems: dict = field(default_factory=dict)


@dataclass
class JobConfig:
    samples: int
    threshold: int
    use_n: bool
    stage1_template: str
    stage2_template: str
    examples: list


def _job_config(job: AutoLabelJob) -> JobConfig:
    ids = job.parameters.get("contrastive_examples") or []
    rows = ContrastiveExample.objects.filter(pk__in=ids).select_related("sentence__turn__dialogue").order_by("position", "pk")
    examples = [
        prompting.Example(
            sentence=row.sentence.text, reference=row.sentence.turn.dialogue.reference,
            wrong=row.wrong_label, right=row.right_label, explanation=row.explanation,
        )
        for row in rows
    ]
    return JobConfig(job.samples, job.threshold, job.use_n, job.prompt_version.stage1_template,
                     job.prompt_version.stage2_template, examples)


def _messages(spec: TurnSpec, config: JobConfig, stage: int, numbers) -> list[dict]:
    texts = {number: text for number, _, text in spec.sentences}
    template = config.stage1_template if stage == prompting.STAGE_1 else config.stage2_template
    return prompting.build_messages(stage, template, spec.reference, spec.question,
                                    [(n, texts[n]) for n in numbers], config.examples)


def _cognitive_numbers(spec: TurnSpec) -> list[int]:
    numbers = set()
    for (stage, _), row in spec.existing.items():
        if stage != prompting.STAGE_1:
            continue
        for number, tag in (row.get("votes") or {}).items():
            parsed = parsing.tag_from_json(tag, prompting.STAGE_1)
            if parsed is not None and parsed.kind == prompting.Kind.COGNITIVE:
                numbers.add(int(number))
    return sorted(numbers)


def plan_requests(spec: TurnSpec, config: JobConfig, stage: int) -> list[tuple[list[int], list[int], list[dict]]]:
    """The requests a turn still needs for ``stage``: (sample indices, sentence numbers, messages).

    With ``n`` the missing samples go in one request when they are consecutive
    (sample i is always seed i); otherwise one request per sample.
    """
    numbers = spec.numbers if stage == prompting.STAGE_1 else _cognitive_numbers(spec)
    if not numbers:
        return []
    missing = [i for i in range(config.samples) if (stage, i) not in spec.existing]
    if not missing:
        return []
    messages = _messages(spec, config, stage, numbers)
    if config.use_n and len(missing) > 1 and missing == list(range(missing[0], missing[-1] + 1)):
        return [(missing, numbers, messages)]
    return [([i], numbers, messages) for i in missing]


def rows_from_result(stage: int, indices: list[int], numbers: list[int], result: CallResult) -> list[dict]:
    """SampleReply rows for the samples one request covered. Tokens go on the first row."""
    rows = []
    for position, index in enumerate(indices):
        row = {"stage": stage, "sample_index": index, "raw_reply": "", "votes": {}, "problems": {}, "error": "",
               "prompt_tokens": 0, "completion_tokens": 0}
        if position == 0:
            row["prompt_tokens"], row["completion_tokens"] = result.prompt_tokens, result.completion_tokens
        if result.error:
            row["error"] = result.error
        elif position < len(result.choices):
            choice = result.choices[position]
            parsed = parsing.parse_reply(choice.text, stage, numbers, truncated=choice.truncated)
            row["raw_reply"] = choice.text or ""
            row["votes"] = {str(n): parsing.tag_to_json(tag) for n, tag in parsed.tags.items()}
            row["problems"] = parsed.problems
        else:
            row["error"] = "the endpoint returned fewer choices than asked for"
        rows.append(row)
    return rows


def outcome_predictions(spec: TurnSpec, config: JobConfig, outcome: TurnOutcome):
    """Vote over the samples of a turn (stored and new rows) into prediction rows."""
    stage_rows = {key: row for key, row in spec.existing.items()}
    for row in outcome.rows:
        stage_rows[(row["stage"], row["sample_index"])] = row
    for number, sentence_id, _ in spec.sentences:
        votes = []
        for index in range(config.samples):
            s1_row = stage_rows.get((prompting.STAGE_1, index)) or {}
            s2_row = stage_rows.get((prompting.STAGE_2, index)) or {}
            s1 = parsing.tag_from_json((s1_row.get("votes") or {}).get(str(number)), prompting.STAGE_1)
            s2 = parsing.tag_from_json((s2_row.get("votes") or {}).get(str(number)), prompting.STAGE_2)
            label, hallucinated, kind = parsing.sample_label(s1, s2)
            votes.append({"label": label, "hallucinated": hallucinated, "kind": kind})
        decision = decide(votes, config.threshold)
        outcome.abstentions += decision.abstentions
        outcome.predictions.append({
            "sentence_id": sentence_id, "label": decision.label, "hallucinated": decision.hallucinated,
            "hallucinated_votes": decision.hallucinated_votes, "abstentions": decision.abstentions,
            "stage1_kind": decision.kind, "label_votes": decision.label_votes, "sample_votes": votes,
        })
    for row in outcome.rows:
        for problem, count in (row.get("problems") or {}).items():
            outcome.problems[problem] = outcome.problems.get(problem, 0) + count


async def process_turn(caller: Caller, spec: TurnSpec, config: JobConfig) -> TurnOutcome:
    """Both stages of one turn over HTTP (runs in the event loop thread; touches no database)."""
    outcome = TurnOutcome(spec)
    for stage in (prompting.STAGE_1, prompting.STAGE_2):
        plans = plan_requests(spec, config, stage)
        results = await asyncio.gather(*[_fetch(caller, indices, messages) for indices, _, messages in plans])
        for (indices, numbers, _), (result, extra_requests) in zip(plans, results):
            outcome.requests += 1 + extra_requests
            outcome.retries += result.retries
            outcome.faults += 1 if result.error else 0
            rows = rows_from_result(stage, indices, numbers, result)
            outcome.rows.extend(rows)
            for row in rows:
                spec.existing[(stage, row["sample_index"])] = row
    outcome_predictions(spec, config, outcome)
    # The rows were merged into spec.existing for stage 2; predictions are computed, drop the duplicates.
    return outcome


async def _fetch(caller: Caller, indices: list[int], messages) -> tuple[CallResult, int]:
    """One request for the samples ``indices`` (n when several); tops up if the endpoint ignored n."""
    if len(indices) == 1:
        return await caller.chat(messages, n=1, seed=indices[0]), 0
    result = await caller.chat(messages, n=len(indices), seed=indices[0])
    extra = 0
    if not result.error and len(result.choices) < len(indices):
        # The endpoint ignored n: ask for the remaining samples one by one.
        rest = indices[len(result.choices):]
        more = await asyncio.gather(*[caller.chat(messages, n=1, seed=i) for i in rest])
        extra = len(more)
        for single in more:
            result.retries += single.retries
            result.prompt_tokens += single.prompt_tokens
            result.completion_tokens += single.completion_tokens
            result.choices.append(single.choices[0] if single.choices and not single.error else Choice(None, False))
    return result, extra


# ---------------------------------------------------------------------------
# Reading turns, writing results
# ---------------------------------------------------------------------------

def iter_specs(job: AutoLabelJob, page: int = PAGE_TURNS):
    """The job's turns not yet done, page by page (constant memory)."""
    last = 0
    while True:
        job_turns = list(
            JobTurn.objects.filter(job=job, done=False, pk__gt=last).order_by("pk")
            .select_related("turn__dialogue")[:page]
        )
        if not job_turns:
            return
        last = job_turns[-1].pk
        turn_ids = [jt.turn_id for jt in job_turns]
        sentences: dict[int, list] = {}
        for sid, turn_id, index, text in (
            Sentence.objects.filter(turn_id__in=turn_ids).order_by("turn_id", "index").values_list("pk", "turn_id", "index", "text")
        ):
            sentences.setdefault(turn_id, []).append((index + 1, sid, text))
        existing: dict[int, dict] = {}
        for row in SampleReply.objects.filter(job=job, turn_id__in=turn_ids).values(
            "turn_id", "stage", "sample_index", "votes", "error", "problems"
        ):
            existing.setdefault(row["turn_id"], {})[(row["stage"], row["sample_index"])] = row
        for jt in job_turns:
            yield TurnSpec(
                job_turn_id=jt.pk, turn_id=jt.turn_id, reference=jt.turn.dialogue.reference,
                question=jt.turn.user_message, sentences=sentences.get(jt.turn_id, []),
                existing=existing.get(jt.turn_id, {}),
            )


@dataclass
class FlushState:
    cancel_requested: bool


def _lease_deadline():
    return timezone.now() + timedelta(seconds=LEASE_SECONDS)


def flush(job: AutoLabelJob, owner: str, outcomes: list[TurnOutcome], mark_done=True, extra: dict | None = None) -> FlushState:
    """Write finished turns in one transaction; renew the lease; report whether to stop."""
    profile = job.profile
    with transaction.atomic():
        locked = AutoLabelJob.objects.select_for_update().get(pk=job.pk)
        if locked.lease_owner != owner:
            raise LeaseLost(f"job {job.pk} is now run by {locked.lease_owner or 'nobody'}")
        replies = []
        predictions = []
        for outcome in outcomes:
            for row in outcome.rows:
                replies.append(SampleReply(
                    job_id=job.pk, turn_id=outcome.spec.turn_id, stage=row["stage"], sample_index=row["sample_index"],
                    raw_reply=row["raw_reply"], votes=row["votes"], problems=row["problems"], error=row["error"],
                    prompt_tokens=row["prompt_tokens"], completion_tokens=row["completion_tokens"],
                ))
                locked.prompt_tokens += row["prompt_tokens"]
                locked.completion_tokens += row["completion_tokens"]
                locked.cost += cost_of(row["prompt_tokens"], row["completion_tokens"], profile.input_price_per_million,
                                       profile.output_price_per_million, batch=job.batch_mode)
            if mark_done:
                for p in outcome.predictions:
                    predictions.append(Prediction(job_id=job.pk, **p))
            locked.requests += outcome.requests
            locked.retries += outcome.retries
            locked.faults += outcome.faults
            locked.abstentions += outcome.abstentions
            for problem, count in outcome.problems.items():
                locked.problems[problem] = locked.problems.get(problem, 0) + count
        SampleReply.objects.bulk_create(replies, ignore_conflicts=True, batch_size=500)
        if predictions:
            Prediction.objects.bulk_create(
                predictions, batch_size=500, update_conflicts=True, unique_fields=["job", "sentence"],
                update_fields=["label", "hallucinated", "hallucinated_votes", "abstentions", "stage1_kind",
                               "label_votes", "sample_votes"],
            )
        if mark_done and outcomes:
            JobTurn.objects.filter(pk__in=[o.spec.job_turn_id for o in outcomes]).update(done=True)
            locked.done_turns = JobTurn.objects.filter(job_id=job.pk, done=True).count()
        for key, value in (extra or {}).items():
            setattr(locked, key, value)
        locked.lease_until = _lease_deadline()
        locked.save()
    # With DEBUG on, Django keeps every query of the connection (up to 9,000, bulk inserts included):
    # a job is one long "request", so drop them or a worker's memory grows with the job.
    reset_queries()
    # Keep the caller's copy current (the job page and the command read these).
    for name in ("done_turns", "requests", "retries", "faults", "abstentions", "problems", "prompt_tokens",
                 "completion_tokens", "cost", "cancel_requested", "batch_state"):
        setattr(job, name, getattr(locked, name))
    return FlushState(cancel_requested=locked.cancel_requested)


def _lease_acquire(job_id: int, owner: str) -> bool:
    now = timezone.now()
    with transaction.atomic():
        job = AutoLabelJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.is_finished:
            return False
        if job.lease_owner and job.lease_owner != owner and job.lease_until and job.lease_until > now:
            return False
        job.lease_owner, job.lease_until = owner, _lease_deadline()
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


def _caller_for(job: AutoLabelJob) -> Caller:
    profile = job.profile
    return Caller(
        base_url=profile.base_url, api_key=api_key_from_env(profile.api_key_env), model=job.model,
        concurrency=profile.concurrency, timeout=profile.timeout_seconds, max_retries=profile.max_retries,
        temperature=profile.temperature, max_tokens=profile.max_tokens,
        backoff_base=float(os.environ.get("AUTOLABEL_BACKOFF_BASE", "0.5")),
    )


# ---------------------------------------------------------------------------
# Running a job
# ---------------------------------------------------------------------------

def job_run(job_id: int, owner: str | None = None) -> str:
    """Run (or resume) a job to its end. Returns the final status, or '' if another worker holds it."""
    owner = owner or _owner()
    if not _lease_acquire(job_id, owner):
        return ""
    job = AutoLabelJob.objects.select_related("profile", "prompt_version", "project").get(pk=job_id)
    if job.cancel_requested:
        _finish(job, AutoLabelJob.Status.CANCELLED)
        return job.status
    try:
        if job.batch_mode:
            stopped = _run_batch(job, owner)
        else:
            stopped = _run_realtime(job, owner)
    except LeaseLost as error:
        log.warning("%s", error)
        return ""
    except EndpointConfigurationError as error:
        _finish(job, AutoLabelJob.Status.FAILED, str(error))
        return job.status
    except Exception as error:  # recorded on the job for the lead to see, then re-raised for the worker's log
        _finish(job, AutoLabelJob.Status.FAILED, f"{type(error).__name__}: {error}")
        raise
    _finish(job, AutoLabelJob.Status.CANCELLED if stopped else AutoLabelJob.Status.DONE)
    return job.status


def _run_realtime(job: AutoLabelJob, owner: str) -> bool:
    """Returns True if the job was cancelled."""
    config = _job_config(job)
    caller = _caller_for(job)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name=f"autolabel-job-{job.pk}", daemon=True)
    thread.start()
    max_in_flight = max(4, caller.concurrency * 2)
    specs = iter_specs(job)
    pending: set = set()
    buffer: list[TurnOutcome] = []
    exhausted = False
    cancelled = False
    last_flush = time.monotonic()
    try:
        while True:
            while not exhausted and len(pending) < max_in_flight:
                spec = next(specs, None)
                if spec is None:
                    exhausted = True
                    break
                pending.add(asyncio.run_coroutine_threadsafe(process_turn(caller, spec, config), loop))
            if not pending and not buffer:
                break
            if pending:
                done, pending = concurrent.futures.wait(pending, timeout=FLUSH_SECONDS, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in done:
                    buffer.append(future.result())  # EndpointConfigurationError propagates from here
            if len(buffer) >= FLUSH_TURNS or time.monotonic() - last_flush >= FLUSH_SECONDS or not pending:
                state = flush(job, owner, buffer)
                buffer = []
                last_flush = time.monotonic()
                if state.cancel_requested:
                    cancelled = True
                    break
    finally:
        for future in pending:
            future.cancel()
        asyncio.run_coroutine_threadsafe(caller.aclose(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
    return cancelled


# ---------------------------------------------------------------------------
# Batch mode (OpenAI Batch API)
# ---------------------------------------------------------------------------

def _custom_id(turn_id: int, stage: int, indices: list[int]) -> str:
    return f"turn-{turn_id}-stage-{stage}-samples-{indices[0]}-{len(indices)}"


def _parse_custom_id(custom_id: str) -> tuple[int, int, list[int]] | None:
    try:
        _, turn_id, _, stage, _, first, count = custom_id.split("-")
        return int(turn_id), int(stage), list(range(int(first), int(first) + int(count)))
    except (ValueError, AttributeError):
        return None


def _sync_client(job: AutoLabelJob):
    import openai

    profile = job.profile
    return openai.OpenAI(base_url=profile.base_url, api_key=api_key_from_env(profile.api_key_env) or "no-key",
                         timeout=profile.timeout_seconds, max_retries=profile.max_retries)


def _write_batch_file(job: AutoLabelJob, config: JobConfig, caller_body, stage: int, handle) -> tuple[int, dict]:
    """Write the JSONL lines of every request ``stage`` still needs; returns (lines, {custom_id: numbers})."""
    count = 0
    numbers_by_id = {}
    for spec in iter_specs(job):
        for indices, numbers, messages in plan_requests(spec, config, stage):
            custom_id = _custom_id(spec.turn_id, stage, indices)
            body = caller_body(messages, len(indices), indices[0])
            handle.write(json.dumps({"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions",
                                     "body": body}) + "\n")
            numbers_by_id[custom_id] = numbers
            count += 1
    return count, numbers_by_id


def _result_from_body(body: dict) -> CallResult:
    result = CallResult()
    usage = body.get("usage") or {}
    result.prompt_tokens = int(usage.get("prompt_tokens") or 0)
    result.completion_tokens = int(usage.get("completion_tokens") or 0)
    for choice in sorted(body.get("choices") or [], key=lambda c: c.get("index") or 0):
        message = choice.get("message") or {}
        result.choices.append(Choice(message.get("content"), choice.get("finish_reason") == "length"))
    return result


def _save_batch_state(job, owner, **changes) -> FlushState:
    state = dict(job.batch_state)
    state.update(changes)
    return flush(job, owner, [], mark_done=False, extra={"batch_state": state})


def _run_batch(job: AutoLabelJob, owner: str) -> bool:
    """Both stages through the Batch API, then the vote. Returns True if cancelled."""
    config = _job_config(job)
    client = _sync_client(job)
    profile = job.profile

    def caller_body(messages, n, seed):
        return request_body(job.model, messages, n, seed, profile.temperature, profile.max_tokens)

    try:
        for stage in (prompting.STAGE_1, prompting.STAGE_2):
            while True:
                state = job.batch_state
                if state.get("stage") == stage and state.get("batch_id"):
                    batch_id = state["batch_id"]
                    rounds = state.get("round", 1)
                else:
                    rounds = (state.get("round", 0) + 1) if state.get("stage") == stage else 1
                    if rounds > BATCH_ROUNDS:
                        break
                    with tempfile.NamedTemporaryFile("w+", suffix=".jsonl", delete=False, encoding="utf-8") as handle:
                        lines, _ = _write_batch_file(job, config, caller_body, stage, handle)
                        path = handle.name
                    try:
                        if lines == 0:
                            _save_batch_state(job, owner, stage=stage, batch_id="", round=rounds, status="nothing to send")
                            break
                        with open(path, "rb") as upload:
                            uploaded = client.files.create(file=upload, purpose="batch")
                    finally:
                        os.unlink(path)
                    batch = client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                                  completion_window="24h")
                    batch_id = batch.id
                    _save_batch_state(job, owner, stage=stage, batch_id=batch_id, round=rounds, status=batch.status,
                                      requests=lines, counts={})
                batch, cancelled = _poll_batch(job, owner, client, batch_id)
                if cancelled:
                    return True
                failed = _join_batch(job, owner, client, config, batch, stage)
                if _save_batch_state(job, owner, stage=stage, batch_id="", round=rounds, status=batch.status,
                                     failed=failed).cancel_requested:
                    return True
                if failed == 0:
                    break
                if rounds >= BATCH_ROUNDS:
                    _record_batch_faults(job, owner, config, stage, f"failed in {rounds} batch rounds")
                    break
        # The vote, turn by turn, from the stored samples.
        buffer = []
        for spec in iter_specs(job):
            outcome = TurnOutcome(spec)
            outcome_predictions(spec, config, outcome)
            buffer.append(outcome)
            if len(buffer) >= FLUSH_TURNS:
                if flush(job, owner, buffer).cancel_requested:
                    return True
                buffer = []
        return flush(job, owner, buffer).cancel_requested
    finally:
        client.close()


def _poll_batch(job, owner, client, batch_id):
    while True:
        batch = client.batches.retrieve(batch_id)
        counts = batch.request_counts.model_dump() if batch.request_counts else {}
        state = _save_batch_state(job, owner, batch_id=batch_id, status=batch.status, counts=counts)
        if state.cancel_requested:
            client.batches.cancel(batch_id)
            _save_batch_state(job, owner, status="cancelling")
            return batch, True
        if batch.status in ("completed", "failed", "expired", "cancelled"):
            return batch, False
        time.sleep(BATCH_POLL_SECONDS)


def _join_batch(job, owner, client, config: JobConfig, batch, stage: int) -> int:
    """Store the output file's replies by custom_id; return how many requests failed."""
    failed = 0
    if batch.output_file_id:
        outcomes: dict[int, TurnOutcome] = {}
        content = client.files.content(batch.output_file_id)
        for line in content.iter_lines():
            if not line.strip():
                continue
            record = json.loads(line)
            key = _parse_custom_id(record.get("custom_id"))
            response = record.get("response") or {}
            if key is None:
                failed += 1
                continue
            turn_id, line_stage, indices = key
            if line_stage != stage:
                continue
            outcome = outcomes.setdefault(turn_id, TurnOutcome(TurnSpec(0, turn_id, "", "", [])))
            if response.get("status_code") != 200:
                failed += 1
                continue
            result = _result_from_body(response.get("body") or {})
            numbers = _numbers_for(job, turn_id, stage, config)
            outcome.requests += 1
            rows = rows_from_result(stage, indices, numbers, result)
            outcome.rows.extend(rows)
            for row in rows:
                for problem, count in row["problems"].items():
                    outcome.problems[problem] = outcome.problems.get(problem, 0) + count
            if len(outcomes) >= FLUSH_TURNS:
                flush(job, owner, list(outcomes.values()), mark_done=False)
                outcomes = {}
        flush(job, owner, list(outcomes.values()), mark_done=False)
    if batch.error_file_id:
        content = client.files.content(batch.error_file_id)
        failed += sum(1 for line in content.iter_lines() if line.strip())
    if batch.status in ("failed", "expired") and not batch.output_file_id and not batch.error_file_id:
        failed = max(failed, 1)
    if failed:
        # Failed lines are sent again in the next round: count them as retries.
        flush(job, owner, [TurnOutcome(TurnSpec(0, 0, "", "", []), retries=failed)], mark_done=False)
    return failed


def _numbers_for(job, turn_id: int, stage: int, config: JobConfig) -> list[int]:
    """Sentence numbers a stage asked about (stage 2: those a stored stage-1 sample called cognitive)."""
    numbers = [index + 1 for index in Sentence.objects.filter(turn_id=turn_id).order_by("index").values_list("index", flat=True)]
    if stage == prompting.STAGE_1:
        return numbers
    existing = {
        (row["stage"], row["sample_index"]): row
        for row in SampleReply.objects.filter(job=job, turn_id=turn_id, stage=prompting.STAGE_1).values("stage", "sample_index", "votes")
    }
    return _cognitive_numbers(TurnSpec(0, turn_id, "", "", [], existing))


def _record_batch_faults(job, owner, config: JobConfig, stage: int, reason: str):
    """Requests still missing after the last round: stored as failed samples (they abstain) and counted."""
    buffer = []
    for spec in iter_specs(job):
        outcome = TurnOutcome(spec)
        for indices, numbers, _ in plan_requests(spec, config, stage):
            outcome.faults += 1
            outcome.rows.extend(rows_from_result(stage, indices, numbers, CallResult(error=reason)))
        if outcome.rows:
            buffer.append(outcome)
        if len(buffer) >= FLUSH_TURNS:
            flush(job, owner, buffer, mark_done=False)
            buffer = []
    flush(job, owner, buffer, mark_done=False)
