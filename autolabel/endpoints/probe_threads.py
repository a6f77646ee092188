"""Endpoint Tests run on threads of their own in the worker process, never on the threads of its pool.

A Test waits on a server someone else runs, each of its two requests up to ``LLM_ENDPOINT_TEST_TIMEOUT_SECONDS``.
Run on the pool (two threads under ``make run``), two Tests at once held every thread, and a 9-turn export
waited 139 s behind them. The task ``autolabel.test_endpoint`` now only hands the test to these threads and
returns: the pool's threads stay free for imports, exports and jobs, and at most ``TEST_THREADS`` Tests run
at once in a worker process (more wait their turn here).

A worker that stops warmly (``endpoint_tests_stop``, on the worker's shutdown) lets the Tests under way end,
each by its deadline, and records those that had not started as failed with the reason, so that no page
polls one for ever. Needs no queue or process of its own: a deploy runs its workers as before.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor

from django.db import connection

from autolabel.endpoints.services import endpoint_test_abandon, endpoint_test_run

log = logging.getLogger(__name__)

TEST_THREADS = 2

_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_waiting: set[int] = set()


def endpoint_test_hand_off(test_id: int) -> None:
    """Have one of the Test threads run the recorded test ``test_id``; returns at once."""
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(TEST_THREADS, thread_name_prefix="endpoint-test")
        _waiting.add(test_id)
        _executor.submit(_run, test_id)


def _run(test_id: int) -> None:
    with _lock:
        _waiting.discard(test_id)
    try:
        log.info("endpoint test %s: %s", test_id, endpoint_test_run(test_id))
    except Exception:  # the thread serves the next test; the reason is logged
        log.exception("endpoint test %s", test_id)
    finally:
        connection.close()  # this thread's own database connection


def endpoint_tests_stop() -> None:
    """Let the Tests under way end; record those not started as failed (the worker is stopping)."""
    global _executor
    with _lock:
        executor, _executor = _executor, None
    if executor is None:
        return
    executor.shutdown(wait=False, cancel_futures=True)  # a test not started now never starts
    with _lock:
        abandoned = sorted(_waiting)
        _waiting.clear()
    for test_id in abandoned:
        endpoint_test_abandon(test_id)
    executor.shutdown(wait=True)
