"""How a job ended, and what its page, the API and the command call its state. Pure: plain values in and out.

A job whose runner reached the end is not "done" by that alone: when every request it sent failed, nothing
was labelled and it ends Failed with the first request's reason (the endpoint and the error). A job that
labelled but lost some requests is done *with problems*: the counts and the first reason are shown. A queued
job no worker has taken after a few seconds is *waiting for a worker*.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

# A runner stops a job early once this many requests have failed with none answered: the endpoint is down or
# refuses, and the other turns would only add minutes of retries to the same answer.
FAIL_FAST_REQUESTS = 8
# A queued job older than this that no worker has leased is shown as waiting for a worker.
WORKER_WAIT = timedelta(seconds=5)


@dataclass(frozen=True)
class JobState:
    key: str  # done, done_with_problems, failed, waiting_for_worker, queued, running, cancelled
    title: str  # what a person reads: "Done", "Done with problems", "Failed", "Waiting for a worker"...
    reason: str = ""  # failed: why; done with problems: the first failed request's reason


def all_requests_failed(requests: int, faults: int) -> bool:
    return requests > 0 and faults >= requests


def should_stop_early(requests: int, faults: int) -> bool:
    """True once enough requests have failed, and none answered, to call the endpoint unusable."""
    return requests >= FAIL_FAST_REQUESTS and all_requests_failed(requests, faults)


def failure_reason(requests: int, faults: int, first_fault: str) -> str:
    return f"every request failed ({faults} of {requests}): {first_fault or 'no reason recorded'}"


def end_of_run(requests: int, faults: int, labelled: int, first_fault: str) -> tuple[str, str]:
    """(status, error) of a job whose runner reached the end: "failed" with the reason when nothing was
    labelled because the requests failed, else "done" (the page then tells done from done with problems)."""
    if all_requests_failed(requests, faults) or (labelled == 0 and faults):
        return "failed", failure_reason(requests, faults, first_fault)
    return "done", ""


def job_state(*, status: str, faults: int, first_fault: str, error: str, leased: bool, created_at: datetime,
              now: datetime, cancel_requested: bool = False) -> JobState:
    if status == "done":
        if faults:
            return JobState("done_with_problems", "Done with problems",
                            f"{faults} failed request{'s' if faults != 1 else ''}; the first: {first_fault}")
        return JobState("done", "Done")
    if status == "failed":
        return JobState("failed", "Failed", error)
    if status == "cancelled":
        return JobState("cancelled", "Cancelled")
    if status == "queued" and not leased and not cancel_requested and now - created_at > WORKER_WAIT:
        return JobState("waiting_for_worker", "Waiting for a worker",
                        "No worker has taken the job yet: is a Celery worker running (make run starts one)?")
    if status == "running":
        return JobState("running", "Running")
    return JobState("queued", "Queued")
