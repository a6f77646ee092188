"""Send a Celery task by its registered name: the services enqueue through here, never importing a tasks module.

The tasks import the services (a task is a thin wrapper that takes ids and calls one); a service that
imported its task back made an import cycle, broken by imports inside functions. A task's name is its
contract (``@shared_task(name=...)``), so enqueuing by name keeps one direction: tasks → services → here.
"""

from celery import current_app
from django.db import transaction


def task_send(name: str, *args) -> None:
    """Queue the task now. Through the registered task when this process knows it (its options apply,
    and so does eager mode), else by name to the broker."""
    current_app.signature(name, args=args).delay()


def task_send_after_commit(name: str, *args) -> None:
    """Queue the task once the current transaction commits (a worker must find what it is asked to run)."""
    transaction.on_commit(lambda: task_send(name, *args))
