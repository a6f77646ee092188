import os

from celery import Celery

# A worker started with `celery -A annotator` is production: production settings unless told otherwise
# (they refuse to start without a SECRET_KEY). manage.py sets the development settings before this runs,
# and `manage.py devserver` passes them explicitly to the worker it starts.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings_production")

app = Celery("annotator")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
