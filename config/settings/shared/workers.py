"""The background work: the Celery broker (a folder by default, Redis or RabbitMQ in production) and the
leases of the jobs the workers run."""

import os
from pathlib import Path

from .environment import VAR_DIR

# Default broker: kombu's filesystem transport. It needs no server process and
# no extra package, and unlike an in-memory broker it works across processes,
# so `make run` can start the web server and a real worker that talk to each
# other on a bare machine. Production uses Redis or RabbitMQ (docs/deploy.md).
BROKER_DIR = Path(os.environ.get("CELERY_BROKER_DIR", VAR_DIR / "broker"))
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://")


def filesystem_broker_options(folder: Path) -> dict:
    """kombu's filesystem transport in ``folder``; the Celery app makes the folders when it reads this
    configuration (config.celery)."""
    return {
        "data_folder_in": str(folder / "out"),
        "data_folder_out": str(folder / "out"),
        "data_folder_processed": str(folder / "processed"),
        # Broadcast (pidbox) files; kombu's default is ./control in the working directory.
        "control_folder": str(folder / "control"),
        "store_processed": False,
    }


if CELERY_BROKER_URL.startswith("filesystem://"):
    CELERY_BROKER_TRANSPORT_OPTIONS = filesystem_broker_options(BROKER_DIR)
    # kombu's transport, but a message file appears only once written whole (kombu's can lose a message: config/broker.py).
    CELERY_BROKER_TRANSPORT = "config.broker:Transport"
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
# Job state lives in our own tables (ImportBatch, AutoLabelJob), so no result backend.
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_QUEUE", "annotator")
# A task is acknowledged only when it finished, so a killed worker's task is redelivered.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# An import's or export's worker renews its lease this often (a third of it); a job whose lease lapsed is taken
# up by another worker's watchdog within half a lease more, or failed once JOB_MAX_ATTEMPTS workers stopped
# under it (annotator/leases.py). The tests shorten the lease through the environment.
JOB_LEASE_SECONDS = float(os.environ.get("JOB_LEASE_SECONDS", "30"))
JOB_MAX_ATTEMPTS = int(os.environ.get("JOB_MAX_ATTEMPTS", "3"))
