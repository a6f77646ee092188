"""Send a Celery task by its registered name: the services enqueue through here, never importing a tasks module.

The tasks import the services (a task is a thin wrapper that takes ids and calls one); a service that
imported its task back made an import cycle, broken by imports inside functions. A task's name is its
contract (``@shared_task(name=...)``), so enqueuing by name keeps one direction: tasks → services → here.

A broker that cannot take the message (the filesystem broker's folder unwritable, Redis down) raises
``BrokerUnavailable``: the job's row, when the caller names it, is marked failed with the reason first, so that
no page says "pending, it will start once a worker runs" about a job no worker will ever be sent. The send
happens inside the request (after its commit), so the exception reaches the view layer, which answers 503
with the message (``annotator.middleware.BrokerUnavailableMiddleware``, the API's ``api.exceptions``).
"""

import logging

from celery import current_app
from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError

logger = logging.getLogger(__name__)

# What a broker that cannot take a message raises: an OSError from the filesystem broker (a folder missing or
# unwritable, a full disk), kombu's OperationalError once its connection retries to Redis or RabbitMQ gave up.
SEND_FAILURES = (OSError, OperationalError)

NOT_QUEUED = ("The job queue (the Celery broker) cannot take the job right now, so it was not started: "
              "nothing will run it. Try again in a moment; if it keeps failing, the broker needs looking at "
              "(docs/deploy.md)")


class BrokerUnavailable(RuntimeError):
    """The broker refused a task's message; ``str()`` says so in words a lead can act on, with the cause."""


def task_send(name: str, *args, job=None) -> None:
    """Queue the task now. Through the registered task when this process knows it (its options apply,
    and so does eager mode), else by name to the broker.

    ``job``: the job's row as a queryset (``ImportBatch.objects.filter(pk=...)``), whose ``status``, ``error``
    and ``finished_at`` record a refusal: marked failed with the reason before ``BrokerUnavailable`` is raised.
    """
    try:
        current_app.signature(name, args=args).delay()
    except SEND_FAILURES as error:
        reason = f"{NOT_QUEUED} ({type(error).__name__}: {error})."
        logger.error("task %s%s not queued: the broker refused it: %r", name, args, error)
        if job is not None:
            job.update(status="failed", error=reason, finished_at=timezone.now())
        raise BrokerUnavailable(reason) from error


def task_send_after_commit(name: str, *args, job=None) -> None:
    """Queue the task once the current transaction commits (a worker must find what it is asked to run).

    Outside a transaction that is at once; inside one, when the outermost block commits, and a refusal is
    raised there (Django runs the callback at the commit and lets its exception through)."""
    transaction.on_commit(lambda: task_send(name, *args, job=job))
