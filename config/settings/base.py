"""Settings shared by every environment, read from the environment.

Defaults give a machine with nothing else installed a working app: SQLite in
the repository and a filesystem message broker. ``DATABASE_URL`` and
``CELERY_BROKER_URL`` point it at PostgreSQL and Redis/RabbitMQ instead.

Not used alone: ``config.settings.development`` (`make run`, manage.py's default),
``config.settings.test`` (pytest) and ``config.settings.production`` (the default of
config.wsgi, config.asgi and `celery -A config`) each add what is theirs, the
SECRET_KEY and DEBUG first.

Importing settings writes nothing: the folders named here are made where they are
used (annotator.apps, the Celery app in config.celery); only the development
settings write the machine's secret key file, on first start.

Here: the apps, the middleware, the templates, the static files and the log. The
rest, one module per concern, is in ``config.settings.shared`` (the database, the
security, the limits, the workers' broker, the cache, the LLM endpoints, the API),
gathered below under the same names.
"""

import os
from pathlib import Path

from .shared.api import *  # noqa: F403
from .shared.cache import *  # noqa: F403
from .shared.database import *  # noqa: F403
from .shared.environment import BASE_DIR, VAR_DIR, env_bool  # noqa: F401 (env_bool: read by the development settings)
from .shared.limits import *  # noqa: F403
from .shared.llm import *  # noqa: F403
from .shared.security import *  # noqa: F403
from .shared.workers import *  # noqa: F403

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "axes",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "annotator",
    "api",
    "autolabel",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "annotator.middleware.RefuseNulInQueryMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    # The user the login check loaded, put on the request itself (no lazy proxy on every read of it).
    "annotator.middleware.UnwrapEvaluatedUserMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # django-csp's, with the header built once per policy (annotator/middleware.py).
    "annotator.middleware.StaticPolicyCSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # A job the broker refused: 503 with the reason, not a 500 (annotator.queue, annotator/middleware.py).
    "annotator.middleware.BrokerUnavailableMiddleware",
    # Last: it turns a locked-out sign-in into the lock-out answer (annotator.auth_backend.lockout_response).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        # Django's, writing a stored lone surrogate as U+FFFD: a page is always UTF-8 (annotator/readable_templates.py).
        "BACKEND": "annotator.readable_templates.ReadableTemplates",
        "NAME": "django",  # the name Django's own backend has, which libraries ask for (drf-spectacular's pages)
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Made at start-up (annotator.apps), not here: WhiteNoise warns about a missing folder.
STATIC_ROOT = VAR_DIR / "staticfiles"
# Uploads and exports (annotator.storage): private, never served by URL; no route serves MEDIA_ROOT.
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", VAR_DIR / "media"))
EXPORT_ROOT = VAR_DIR / "exports"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # The pre-labeler's HTTP client (autolabel.jobs.llm): one INFO line per request would drown a worker's
        # log during a 10,000-turn job.
        "httpx": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},
    },
}
