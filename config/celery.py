"""The Celery app: `celery -A config worker`; config/__init__.py loads it with Django, so that tasks use it."""

import os
from pathlib import Path

from celery import Celery

# A worker started with `celery -A config` is production: production settings unless told otherwise
# (they refuse to start without a SECRET_KEY). manage.py sets the development settings before this runs,
# and `manage.py devserver` passes them explicitly to the worker it starts.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

app = Celery("annotator")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The folders of kombu's filesystem transport (the default broker, config.settings.base).
BROKER_FOLDER_OPTIONS = ("data_folder_in", "data_folder_out", "data_folder_processed", "control_folder")


@app.on_after_configure.connect
def make_broker_folders(sender, source, **kwargs):
    """Make the filesystem broker's folders when the app reads its configuration, before it first connects.

    Every process that sends or receives a task (the web server, a worker, a management command) reads the
    configuration first; the transport itself would fail to write a message into a missing folder.
    """
    options = source.broker_transport_options or {}
    for name in BROKER_FOLDER_OPTIONS:
        if options.get(name):
            Path(options[name]).mkdir(parents=True, exist_ok=True)
