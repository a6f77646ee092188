"""Settings, read from the environment.

Defaults give a machine with nothing else installed a working app: SQLite in
the repository and a filesystem message broker. ``DATABASE_URL`` and
``CELERY_BROKER_URL`` point it at PostgreSQL and Redis/RabbitMQ instead.
Production settings live in ``annotator.settings_production``.
"""

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("VAR_DIR", BASE_DIR / "var"))


def env_bool(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


SECRET_KEY = os.environ.get("SECRET_KEY", "dev-only-insecure-key-do-not-use-in-production")
DEBUG = env_bool("DEBUG", True)
ALLOWED_HOSTS = [h.strip() for h in os.environ.get("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",") if h.strip()]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
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
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "annotator.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
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

WSGI_APPLICATION = "annotator.wsgi.application"
ASGI_APPLICATION = "annotator.asgi.application"


def database_from_env():
    url = os.environ.get("DATABASE_URL", "sqlite:///db.sqlite3")
    config = dj_database_url.parse(url, conn_max_age=int(os.environ.get("CONN_MAX_AGE", "60")))
    if config["ENGINE"] == "django.db.backends.sqlite3":
        name = Path(config["NAME"])
        if not name.is_absolute() and str(name) != ":memory:":
            config["NAME"] = str(BASE_DIR / name)
        # The web server and the Celery worker write the same file: WAL lets
        # readers and one writer work at once, IMMEDIATE transactions take the
        # write lock up front instead of failing half way with "database is locked".
        config["OPTIONS"] = {
            "timeout": 30,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
        # A file (not :memory:) so that a live Celery worker sees the test database.
        config["TEST"] = {"NAME": str(VAR_DIR / f"test-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.sqlite3")}
        config["CONN_MAX_AGE"] = 0
    else:
        config["CONN_HEALTH_CHECKS"] = True
        test_name = os.environ.get("TEST_DATABASE_NAME")
        if test_name:
            config["TEST"] = {"NAME": test_name}
    return config


DATABASES = {"default": database_from_env()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The first logs people in; the second only serves sessions that name it (started before the first
# existed), so that a deploy logs nobody out.
AUTHENTICATION_BACKENDS = ["annotator.auth_backend.SessionUserBackend", "django.contrib.auth.backends.ModelBackend"]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# In development WhiteNoise serves straight from static/ (no collectstatic needed).
WHITENOISE_USE_FINDERS = DEBUG
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", VAR_DIR / "media"))
MEDIA_URL = "media/"
EXPORT_ROOT = VAR_DIR / "exports"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Uploads larger than this go to a temporary file rather than memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

# --- Celery -----------------------------------------------------------------
# Default broker: kombu's filesystem transport. It needs no server process and
# no extra package, and unlike an in-memory broker it works across processes,
# so `make run` can start the web server and a real worker that talk to each
# other on a bare machine. Production uses Redis or RabbitMQ (docs/deploy.md).
BROKER_DIR = Path(os.environ.get("CELERY_BROKER_DIR", VAR_DIR / "broker"))
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    for sub in ("out", "processed", "control"):
        (BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "out"),
        "data_folder_out": str(BROKER_DIR / "out"),
        "data_folder_processed": str(BROKER_DIR / "processed"),
        # Broadcast (pidbox) files; kombu's default is ./control in the working directory.
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
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

# --- Cache ------------------------------------------------------------------
# Shared by the web server and the Celery workers: a job reports its progress
# here while its own transaction is still open (an import is one transaction, so
# progress written to its table would only appear at the end). A folder by
# default; CACHE_URL=redis://... when the processes run on several machines.
CACHE_URL = os.environ.get("CACHE_URL", "")
if CACHE_URL.startswith(("redis://", "rediss://")):
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}}
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            # Each pytest-xdist worker (and the Celery workers its tests start, which inherit the variable)
            # gets a folder of its own: a test clearing the cache must not wipe another worker's throttle state.
            "LOCATION": str(VAR_DIR / ("cache-test-" + os.environ["PYTEST_XDIST_WORKER"]
                                       if "PYTEST_XDIST_WORKER" in os.environ else "cache")),
        }
    }

# Sessions are read on every request: from the cache, the database only when the cache lost them
# (one query less per annotation request; docs/benchmarks.md, load).
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"

# --- LLM endpoint (pre-labeler) ------------------------------------------------
OPENAI_API_KEY = os.environ.get("OPENAI_API_KEY", "")
OPENAI_BASE_URL = os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8765/v1")

# --- REST framework -----------------------------------------------------------
REST_FRAMEWORK = {
    # Token first: an anonymous API client is told 401 with `WWW-Authenticate: Token`.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "api.schema.ApiAutoSchema",
    "DEFAULT_PAGINATION_CLASS": "api.pagination.PagePagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "api.exceptions.api_exception_handler",
    # Scripts with a token share a per-user budget; browser sessions are not throttled.
    "DEFAULT_THROTTLE_CLASSES": ["api.throttles.TokenClientThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "token": os.environ.get("API_TOKEN_RATE", "1200/minute"),
        "login": os.environ.get("API_LOGIN_RATE", "20/minute"),
    },
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Hallucination annotator API",
    "DESCRIPTION": (
        "Sentence-level hallucination annotation (CogniBench protocol), gold export and pre-labelling.\n\n"
        "Authenticate with `Authorization: Token <key>` (create the key on the *API token* page of the "
        "user menu, or `POST /api/v1/auth/token/`). Browser sessions work too. Every error has the same "
        "body: `status`, `code`, `detail` and, for invalid input, `errors` by field. Objects you may not "
        "see answer 404, whether they exist or not."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and its viewers need a login like every other endpoint (session or token).
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # api.urls' "id" converter: an integer of at most 18 digits.
    "PATH_CONVERTER_OVERRIDES": {"id": {"type": "integer", "minimum": 0, "maximum": 999999999999999999}},
    "ENUM_NAME_OVERRIDES": {
        "LabelEnum": "annotator.vocabulary.Label",
        "RoleEnum": "annotator.vocabulary.Role",
        "ImportStatusEnum": "annotator.models.ImportBatch.Status",
        "AssignmentStatusEnum": "annotator.models.Assignment.Status",
        "AdjudicationStatusEnum": "annotator.models.Adjudication.Status",
        "QuestionStatusEnum": "annotator.models.Question.Status",
        "JobStatusEnum": "autolabel.models.AutoLabelJob.Status",
        "StepEnum": "annotator.vocabulary.Step",
        "AnswerEnum": "annotator.vocabulary.Answer",
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
