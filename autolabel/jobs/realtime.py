"""The realtime runner: a job's turns sent to the endpoint as they are read.

A job runs in one Celery task. The task's thread reads turns from the database page by page
and hands each turn to an asyncio event loop running in a helper thread, which makes the LLM
calls (at most ``profile.concurrency`` in flight). Finished turns come back to the task's
thread, which writes them (progress.flush) every ``FLUSH_TURNS`` turns or ``FLUSH_SECONDS``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
import time

from autolabel.labelling import prompting
from autolabel.endpoints.policy import connection_for
from autolabel.jobs.llm import Caller, CallResult, Choice, EndpointConfigurationError
from autolabel.models import AutoLabelJob
from autolabel.labelling.pipeline import JobConfig, TurnOutcome, TurnSpec, outcome_predictions, plan_requests, rows_from_result
from autolabel.jobs.progress import FLUSH_TURNS, flush, iter_specs
from autolabel.jobs.states import failure_reason, should_stop_early

FLUSH_SECONDS = 1.0


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
            rows = rows_from_result(stage, indices, numbers, result, config.protocol)
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


def _caller_for(job: AutoLabelJob) -> Caller:
    profile = job.profile
    base_url, api_key = connection_for(profile)
    return Caller(
        base_url=base_url, api_key=api_key, model=job.model,
        concurrency=profile.concurrency, timeout=profile.timeout_seconds, max_retries=profile.max_retries,
        temperature=profile.temperature, max_tokens=profile.max_tokens,
        backoff_base=float(os.environ.get("AUTOLABEL_BACKOFF_BASE", "0.5")),
    )


def run_realtime(job: AutoLabelJob, owner: str, config: JobConfig) -> bool:
    """Run the job's turns through the endpoint as they come. Returns True if the job was cancelled."""
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
                if should_stop_early(job.requests, job.faults):
                    raise EndpointConfigurationError(failure_reason(job.requests, job.faults, job.first_fault))
    finally:
        for future in pending:
            future.cancel()
        asyncio.run_coroutine_threadsafe(caller.aclose(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
    return cancelled
