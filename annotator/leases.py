"""A background job's lease: which worker runs it, that worker still alive, and a job taken up again when not.

The jobs of the core (an import batch, an export) carry ``status``, ``lease_owner``, ``lease_until``,
``attempts``, ``error`` and ``finished_at``; the functions here take the model and work on those fields, as
the pre-labeler's jobs do with theirs (``autolabel.jobs``: lease renewed at each write, a watchdog thread in
every worker re-enqueues a job whose lease lapsed).

- A worker *takes up* a job (``job_take_up``): in one transaction, only if nobody else holds it, and counts
  the attempt. Two workers never run one job: the second finds it held (or finished) and does nothing.
- While it runs, the worker renews its lease every third of ``JOB_LEASE_SECONDS`` (``lease_kept``). An import
  is one database transaction (nothing is ever half-imported), and on SQLite that transaction holds the only
  write lock for its whole length, so the renewal cannot be a database write: it is a key in the cache, which
  every process already reads for the job's progress, with the lease's length as its expiry.
- A worker's watchdog (``annotator.tasks``) looks every half lease, and once when the worker starts, for
  running jobs whose lease lapsed (``jobs_orphaned``): each is released for another worker and sent again,
  or, after ``JOB_MAX_ATTEMPTS`` workers stopped under it, marked failed with the reason. The rolled-back
  transaction of the dead worker left nothing behind; the next one starts from the beginning. A job still
  queued long after it was made, whose message no worker took, is sent again too (``jobs_not_taken_up``; the
  learned judge's training asks for it).
- A worker ends a job only if it still holds it (``job_still_held``, inside the job's last transaction): one
  whose lease another took over (it was presumed dead) rolls its work back with ``LeaseLost``.

A job's model takes its lease fields from ``LeasedJob`` (the learned judge's training does; an import batch and
an export spell the same three fields out, as their migrations made them).

The row locks are ``FOR NO KEY UPDATE`` on PostgreSQL: a running import's rows point at its batch, which holds
a key-share lock on the batch's row until the import commits, and a plain ``FOR UPDATE`` would wait for that.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from contextlib import contextmanager
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import close_old_connections, models, transaction
from django.utils import timezone

logger = logging.getLogger(__name__)

RUNNING, FINISHED = "running", ("done", "failed")


class LeasedJob(models.Model):
    """The lease fields of a job run by a worker: which worker runs it, until when it is presumed alive, and how
    many workers took it up. The job's model has ``status``, ``error``, ``created_at`` and ``finished_at`` too."""

    lease_owner = models.CharField(max_length=200, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(
        default=0, help_text="Workers that took it up (one, unless a worker died under it).")

    class Meta:
        abstract = True


class LeaseLost(RuntimeError):
    """Another worker took the job over (this one was presumed dead); its work is rolled back."""


def lease_seconds() -> float:
    return float(settings.JOB_LEASE_SECONDS)


def lease_owner() -> str:
    """This worker thread, as a job's ``lease_owner`` names it."""
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def _heartbeat_key(job) -> str:
    # The creation time too: a test database (or a restored one) reuses ids, the cache outlives it.
    return f"lease:{job._meta.label_lower}:{job.pk}:{job.created_at.timestamp():.6f}"


def lease_alive(job) -> bool:
    """Whether the worker holding the job renewed its lease within the last lease period."""
    return cache.get(_heartbeat_key(job)) is not None


def job_take_up(model, pk: int, owner: str, *, gave_up: str):
    """The job, now held by ``owner`` and running, or None: finished, held by a live worker, or given up on
    (``gave_up``, the reason recorded, when ``JOB_MAX_ATTEMPTS`` workers already stopped under it)."""
    now = timezone.now()
    with transaction.atomic():
        job = model.objects.select_for_update(no_key=True).filter(pk=pk).first()
        if job is None or job.status in FINISHED:
            return None
        if job.status == RUNNING and job.lease_owner and job.lease_owner != owner:
            if (job.lease_until and job.lease_until > now) or lease_alive(job):
                return None  # its worker lives: never two workers on one job
        if job.attempts >= settings.JOB_MAX_ATTEMPTS:
            _fail(job, gave_up)
            return None
        job.status, job.lease_owner, job.attempts = RUNNING, owner, job.attempts + 1
        job.lease_until = now + timedelta(seconds=lease_seconds())
        job.save(update_fields=["status", "lease_owner", "lease_until", "attempts"])
    cache.set(_heartbeat_key(job), owner, timeout=lease_seconds())
    return job


def _fail(job, reason: str) -> None:
    job.status, job.error, job.finished_at = "failed", reason, timezone.now()
    job.lease_owner, job.lease_until = "", None
    job.save(update_fields=["status", "error", "finished_at", "lease_owner", "lease_until"])
    logger.warning("%s %s failed: %s", job._meta.verbose_name, job.pk, reason)


@contextmanager
def lease_kept(job, owner: str):
    """Renew ``owner``'s lease on ``job`` while the block runs (a thread of its own: a long database statement
    or a slow file does not stop it); a worker killed stops renewing it, and its lease lapses."""
    stop = threading.Event()
    key, seconds = _heartbeat_key(job), lease_seconds()

    def renew():
        while not stop.wait(seconds / 3):
            try:
                cache.set(key, owner, timeout=seconds)
            except Exception:  # a cache hiccup must not end the job; the next renewal may pass
                logger.exception("renewing the lease of %s %s", job._meta.verbose_name, job.pk)

    thread = threading.Thread(target=renew, name=f"lease-{job._meta.model_name}-{job.pk}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        cache.delete(key)


def job_still_held(model, pk: int, owner: str) -> None:
    """Inside the job's last transaction: raise ``LeaseLost`` if another worker took it over meanwhile (the
    row stays locked until the transaction ends, so nobody takes it over between this and the commit)."""
    holder = model.objects.select_for_update(no_key=True).filter(pk=pk).values_list("lease_owner", flat=True).first()
    if holder != owner:
        raise LeaseLost(f"{model._meta.verbose_name} {pk} is now run by {holder or 'nobody'}")


def job_release(model, pk: int, owner: str, **fields) -> bool:
    """End the job with ``fields`` (status, error, ...) if ``owner`` still holds it; False if it does not."""
    return bool(model.objects.filter(pk=pk, lease_owner=owner).update(lease_owner="", lease_until=None, **fields))


def jobs_orphaned(model, *, gave_up: str) -> list[int]:
    """Running jobs whose worker stopped renewing its lease: each is released for another worker (the ids
    returned, to send again; "adoption pending" for two lease periods, so that the watchdogs of several
    workers do not send it twice) or, after ``JOB_MAX_ATTEMPTS`` attempts, marked failed with ``gave_up``.

    Reads first, and writes only for a job found orphaned: on SQLite a running import holds the write lock.
    """
    now = timezone.now()
    lapsed = [job for job in model.objects.filter(status=RUNNING, lease_until__lt=now) if not lease_alive(job)]
    resend = []
    for seen in lapsed:
        with transaction.atomic():
            job = model.objects.select_for_update(no_key=True).filter(
                pk=seen.pk, status=RUNNING, lease_owner=seen.lease_owner, lease_until__lt=now).first()
            if job is None or lease_alive(job):
                continue  # taken up or renewed meanwhile
            if job.attempts >= settings.JOB_MAX_ATTEMPTS:
                _fail(job, gave_up)
                continue
            if job.lease_owner:
                logger.warning("%s %s lost its worker (%s); sending it again", model._meta.verbose_name, job.pk,
                               job.lease_owner)
            job.lease_owner, job.lease_until = "", now + timedelta(seconds=2 * lease_seconds())
            job.save(update_fields=["lease_owner", "lease_until"])
            resend.append(job.pk)
    return resend


def jobs_not_taken_up(model, *, queued: str) -> list[int]:
    """Jobs still ``queued`` two lease periods after they were made, whose message no worker took up (lost with a
    broker's restart, or with a worker killed between receiving it and taking the job up): each is marked "sent
    again" for two lease periods (as ``jobs_orphaned`` does) and returned, to send again. A message still waiting
    behind other work is then received twice: the second finds the job held or finished and does nothing.

    Reads first, and writes only for a job found: on SQLite a running import holds the write lock."""
    now = timezone.now()
    waited = now - timedelta(seconds=2 * lease_seconds())
    not_sent_again = models.Q(lease_until__isnull=True) | models.Q(lease_until__lt=now)
    found = model.objects.filter(not_sent_again, status=queued, created_at__lt=waited).values_list("pk", flat=True)
    pending = now + timedelta(seconds=2 * lease_seconds())
    return [pk for pk in list(found)
            if model.objects.filter(not_sent_again, pk=pk, status=queued).update(lease_until=pending)]


def job_lease_lapsed(job, now=None) -> bool:
    """A running job whose worker stopped (its lease lapsed, or a watchdog released it for another worker):
    what its page says while no worker has taken it up again."""
    if job.status != RUNNING:
        return False
    if not job.lease_owner:
        return True
    return job.lease_until is not None and job.lease_until < (now or timezone.now()) and not lease_alive(job)


class Watchdog:
    """A thread of a worker that runs ``check`` once at once and then every ``interval`` seconds until stopped;
    an error is logged and the next round runs (a database restart must not end it)."""

    def __init__(self, name: str, check):
        self.name, self.check = name, check
        self._stop = threading.Event()

    def start(self, interval: float) -> None:
        self._stop.clear()
        threading.Thread(target=self._run, args=(interval,), name=self.name, daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self, interval: float) -> None:
        while True:
            try:
                close_old_connections()
                self.check()
            except Exception:
                logger.exception("%s", self.name)
            finally:
                close_old_connections()
            if self._stop.wait(interval):
                return
