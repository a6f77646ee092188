"""Celery tasks: thin, take ids, call services.

Each worker also runs watchdog threads (``annotator.leases.Watchdog``, started when the worker is ready, looking
at once) that re-enqueue the jobs and the judges' trainings whose worker stopped renewing its lease, so that one
whose worker was killed is adopted by a live worker and finished (or, a judge, failed with the reason).
"""

import logging

from celery import shared_task
from celery.signals import worker_process_shutdown, worker_ready, worker_shutdown

from annotator.leases import Watchdog, lease_seconds
from autolabel.endpoints.probe_threads import endpoint_test_hand_off, endpoint_tests_stop
from autolabel.extraction.services import extraction_job_run
from autolabel.jobs import services
from autolabel.learned.training import judge_train_run, judges_orphaned

log = logging.getLogger(__name__)


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


def adopt_orphaned_judges():
    for judge_id in judges_orphaned():
        train_judge.delay(judge_id)


# The learned judge's training is leased as imports and exports are (annotator/leases.py); a job's lease is the
# pre-labeler's own (autolabel/jobs/progress.py, renewed at each write). One watchdog thread each, of one kind.
job_watchdog = Watchdog("autolabel-watchdog", adopt_orphaned_jobs)
judge_watchdog = Watchdog("learned-judge-watchdog", adopt_orphaned_judges)


@worker_ready.connect
def start_watchdog(**kwargs):
    job_watchdog.start(interval=max(1.0, services.LEASE_SECONDS / 2))
    judge_watchdog.start(interval=max(1.0, lease_seconds() / 2))


@worker_shutdown.connect
def stop_watchdog(**kwargs):
    job_watchdog.stop()
    judge_watchdog.stop()


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
    log.info("learned judge %s: %s", judge_id, judge.status if judge else "gone")
