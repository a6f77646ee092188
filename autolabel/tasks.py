"""Celery tasks: thin, take ids, call services.

Each worker also runs a small watchdog thread (started when the worker is
ready) that re-enqueues jobs whose worker stopped renewing its lease, so a job
whose worker was killed is adopted by a live worker and finished.
"""

import logging
import threading

from celery import shared_task
from celery.signals import worker_process_shutdown, worker_ready, worker_shutdown
from django.db import close_old_connections

from autolabel.endpoints.probe_threads import endpoint_test_hand_off, endpoint_tests_stop
from autolabel.extraction.services import extraction_job_run
from autolabel.jobs import services
from autolabel.learned.training import judge_train_run

log = logging.getLogger(__name__)
_stop = threading.Event()


# Acknowledged on receipt, not at the end: a job's progress and ownership live in the database
# (lease + the watchdog below re-enqueue a job whose worker died, or that nobody picked up), so
# the broker need not hold the message for minutes. Holding it made a broker crash fatal to the
# worker: on reconnection kombu tries to put unacknowledged messages back into the dead Redis and
# the worker stops with "Unrecoverable error" (found by bench/broker_restart.py).
@shared_task(name="autolabel.run_job", ignore_result=True, acks_late=False)
def autolabel_run_job(job_id: int):
    status = services.job_run(job_id)
    log.info("auto-label job %s: %s", job_id, status or "held by another worker")


def adopt_orphaned_jobs():
    for job_id in services.jobs_orphaned_claim():
        log.warning("auto-label job %s lost its worker; re-enqueueing it", job_id)
        autolabel_run_job.delay(job_id)


def _watchdog():
    interval = max(1.0, services.LEASE_SECONDS / 2)
    while not _stop.wait(interval):
        try:
            close_old_connections()
            adopt_orphaned_jobs()
        except Exception:  # the watchdog must outlive a database hiccup; the error is logged
            log.exception("auto-label watchdog")
        finally:
            close_old_connections()


@worker_ready.connect
def start_watchdog(**kwargs):
    _stop.clear()
    threading.Thread(target=_watchdog, name="autolabel-watchdog", daemon=True).start()


@worker_shutdown.connect
def stop_watchdog(**kwargs):
    _stop.set()


@shared_task(name="autolabel.extract_triplets", ignore_result=True, acks_late=True)
def extract_triplets(job_id: int):
    status = extraction_job_run(job_id)
    log.info("triplet extraction job %s: %s", job_id, status)


# A test of an endpoint (the endpoints page's Test button): one bounded probe, its result polled by the page.
# Run on the Test threads beside the pool (probe_threads.py): the task returns at once, its thread stays free
# for imports, exports and jobs.
@shared_task(name="autolabel.test_endpoint", ignore_result=True, acks_late=False)
def test_endpoint(test_id: int):
    endpoint_test_hand_off(test_id)


@worker_shutdown.connect
@worker_process_shutdown.connect
def stop_endpoint_tests(**kwargs):
    endpoint_tests_stop()


@shared_task(name="autolabel.train_judge", ignore_result=True, acks_late=True)
def train_judge(judge_id: int):
    judge = judge_train_run(judge_id)
    log.info("learned judge %s: %s", judge_id, judge.status)
