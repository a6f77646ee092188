from pathlib import Path

from django.apps import AppConfig
from django.conf import settings


class AnnotatorConfig(AppConfig):
    name = "annotator"
    verbose_name = "Annotation"

    def ready(self):
        # The folders the settings name, made at start-up rather than when the settings are imported:
        # VAR_DIR holds the test database and the logs of `manage.py devserver`, STATIC_ROOT is where
        # WhiteNoise looks for collected files (it warns at start-up when the folder is missing).
        # The cache, the private files (MEDIA_ROOT) and the secret key make their own; the filesystem
        # broker's folders are made by the Celery app (config.celery).
        for folder in (settings.VAR_DIR, settings.STATIC_ROOT):
            Path(folder).mkdir(parents=True, exist_ok=True)
