"""The Batch API runner (OpenAI's files and batches endpoints): half the price, slower.

Each stage goes out as one JSONL file of every request it still needs; the replies are stored
by ``custom_id`` as they are read back, and lines that failed are sent again, up to
``BATCH_ROUNDS`` rounds. The vote is taken at the end, turn by turn, from the stored samples.
The batch's id, status and counts live on the job (``batch_state``), so a worker that adopts
the job polls the batch already submitted rather than sending it again.
"""

from __future__ import annotations

import json
import os
import tempfile
import time

from annotator.models import Sentence

from autolabel.labelling import prompting
from autolabel.endpoints.policy import connection_for
from autolabel.jobs.llm import CallResult, Choice, ResponseTooLarge, bounded_sync_transport, endpoint_name, request_body
from autolabel.models import AutoLabelJob, SampleReply
from autolabel.labelling.pipeline import (
    JobConfig,
    TurnOutcome,
    TurnSpec,
    second_stage_numbers,
    outcome_predictions,
    plan_requests,
    rows_from_result,
)
from autolabel.jobs.progress import FLUSH_TURNS, FlushState, flush, iter_specs

BATCH_POLL_SECONDS = float(os.environ.get("AUTOLABEL_BATCH_POLL_SECONDS", "2"))
BATCH_ROUNDS = 3
# The most a batch's output or error file may weigh when read back. The API takes input files of up to 200 MB,
# and a pre-label reply is far shorter than its prompt (which carries the reference), so a larger output file
# is not an answer; the file is read whole, so this bounds the worker's memory too.
BATCH_MAX_FILE_BYTES = 256 * 1024 * 1024


class BatchFileTooLarge(RuntimeError):
    """A batch's output or error file past BATCH_MAX_FILE_BYTES: the job fails with this reason."""


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
    base_url, api_key = connection_for(profile)
    return openai.OpenAI(base_url=base_url, api_key=api_key or "no-key", timeout=profile.timeout_seconds,
                         max_retries=profile.max_retries,
                         http_client=openai.DefaultHttpxClient(follow_redirects=False,
                                                               transport=bounded_sync_transport(BATCH_MAX_FILE_BYTES)))


def _file_lines(client, file_id: str, endpoint: str) -> list[str]:
    """The lines of a batch's file, or BatchFileTooLarge naming the file, the endpoint and the limit."""
    import openai

    try:
        return list(client.files.content(file_id).iter_lines())
    except (ResponseTooLarge, openai.APIConnectionError) as error:
        if isinstance(error, ResponseTooLarge) or isinstance(error.__cause__, ResponseTooLarge):
            raise BatchFileTooLarge(f"batch file {file_id} from {endpoint} is larger than {BATCH_MAX_FILE_BYTES} "
                                    "bytes: not read") from None
        raise


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


def run_batch(job: AutoLabelJob, owner: str, config: JobConfig) -> bool:
    """Both stages through the Batch API, then the vote. Returns True if cancelled."""
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
                    _record_batch_faults(job, owner, config, stage,
                                         f"failed in {rounds} batch rounds at {endpoint_name(job.profile.endpoint_url())}")
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
        for line in _file_lines(client, batch.output_file_id, endpoint_name(job.profile.endpoint_url())):
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
            rows = rows_from_result(stage, indices, numbers, result, config.protocol)
            outcome.rows.extend(rows)
            for row in rows:
                for problem, count in row["problems"].items():
                    outcome.problems[problem] = outcome.problems.get(problem, 0) + count
            if len(outcomes) >= FLUSH_TURNS:
                flush(job, owner, list(outcomes.values()), mark_done=False)
                outcomes = {}
        flush(job, owner, list(outcomes.values()), mark_done=False)
    if batch.error_file_id:
        error_lines = _file_lines(client, batch.error_file_id, endpoint_name(job.profile.endpoint_url()))
        failed += sum(1 for line in error_lines if line.strip())
    if batch.status in ("failed", "expired") and not batch.output_file_id and not batch.error_file_id:
        failed = max(failed, 1)
    if failed:
        # Failed lines are sent again in the next round: count them as retries.
        flush(job, owner, [TurnOutcome(TurnSpec(0, 0, "", "", []), retries=failed)], mark_done=False)
    return failed


def _numbers_for(job, turn_id: int, stage: int, config: JobConfig) -> list[int]:
    """Sentence numbers a stage asked about (stage 2: those a stored stage-1 sample sent there)."""
    numbers = [index + 1 for index in Sentence.objects.filter(turn_id=turn_id).order_by("index").values_list("index", flat=True)]
    if stage == prompting.STAGE_1:
        return numbers
    existing = {
        (row["stage"], row["sample_index"]): row
        for row in SampleReply.objects.filter(job=job, turn_id=turn_id, stage=prompting.STAGE_1).values("stage", "sample_index", "votes")
    }
    return second_stage_numbers(TurnSpec(0, turn_id, "", "", [], existing), config.protocol)


def _record_batch_faults(job, owner, config: JobConfig, stage: int, reason: str):
    """Requests still missing after the last round: stored as failed samples (they abstain) and counted."""
    buffer = []
    for spec in iter_specs(job):
        outcome = TurnOutcome(spec)
        for indices, numbers, _ in plan_requests(spec, config, stage):
            outcome.faults += 1
            outcome.rows.extend(rows_from_result(stage, indices, numbers, CallResult(error=reason), config.protocol))
        if outcome.rows:
            buffer.append(outcome)
        if len(buffer) >= FLUSH_TURNS:
            flush(job, owner, buffer, mark_done=False)
            buffer = []
    flush(job, owner, buffer, mark_done=False)
