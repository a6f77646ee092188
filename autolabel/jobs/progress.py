"""A running job's progress in the database: its turns read page by page, finished turns written.

The runners (realtime.py, batch.py) write finished turns in small transactions: the sample
replies, the predictions and the turn's ``done`` mark together, with the job's counters
(requests, retries, faults, abstentions, problems, tokens, cost). Each write renews the job's
lease; a worker killed mid-job loses only the turns in flight, and the worker that adopts the
job carries on from the turns not marked done. Unique constraints on (job, turn, stage, sample)
and (job, sentence) make a replayed write harmless.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta

from django.db import reset_queries, transaction
from django.utils import timezone

from annotator.domain.languages import language_name, text_language
from annotator.models import Sentence

from autolabel.jobs.llm import cost_of
from autolabel.models import AutoLabelJob, JobTurn, Prediction, SampleReply
from autolabel.labelling.pipeline import TurnOutcome, TurnSpec

LEASE_SECONDS = float(os.environ.get("AUTOLABEL_LEASE_SECONDS", "30"))
FLUSH_TURNS = 50
PAGE_TURNS = 200


class LeaseLost(RuntimeError):
    """Another worker adopted the job (this one was presumed dead)."""


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
        default_language = job.project.default_language
        for jt in job_turns:
            yield TurnSpec(
                job_turn_id=jt.pk, turn_id=jt.turn_id, reference=jt.turn.dialogue.reference,
                question=jt.turn.user_message, sentences=sentences.get(jt.turn_id, []),
                existing=existing.get(jt.turn_id, {}),
                language=language_name(text_language(jt.turn.dialogue.language, default_language)),
            )


@dataclass
class FlushState:
    cancel_requested: bool


def lease_deadline():
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
                if row["error"] and not locked.first_fault:
                    locked.first_fault = row["error"][:2000]
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
        locked.lease_until = lease_deadline()
        locked.save()
    # With DEBUG on, Django keeps every query of the connection (up to 9,000, bulk inserts included):
    # a job is one long "request", so drop them or a worker's memory grows with the job.
    reset_queries()
    # Keep the caller's copy current (the job page and the command read these).
    for name in ("done_turns", "requests", "retries", "faults", "abstentions", "problems", "prompt_tokens",
                 "completion_tokens", "cost", "cancel_requested", "batch_state", "first_fault"):
        setattr(job, name, getattr(locked, name))
    return FlushState(cancel_requested=locked.cancel_requested)
