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
"""

import os
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(os.environ.get("VAR_DIR", BASE_DIR / "var"))


def env_bool(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


ALLOWED_HOSTS = [h.strip() for h in os.environ.get("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",") if h.strip()]

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

WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"


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
        # Connections are kept (CONN_MAX_AGE, as for PostgreSQL): opening one and closing it on every request
        # was a tenth of a Start's time (issue 49), the close the dearest part, since the last connection to
        # close checkpoints the WAL into the file. Each thread has its own connection, so this is as
        # thread-safe as before; the development server closes its request thread's connections after
        # each request anyway (Django's ThreadedWSGIServer), gunicorn's sync workers keep theirs.
    else:
        config["CONN_HEALTH_CHECKS"] = True
    # The test database's name is the test settings' (config.settings.test).
    return config


DATABASES = {"default": database_from_env()}
# The hot paths' statements written once (annotator.fastsql) are prepared on the PostgreSQL server at their first
# use in a connection: PostgreSQL then skips parsing and planning them. Set 0 behind a pooler in transaction mode,
# where a connection's next transaction may reach another server session.
DATABASE_PREPARED_STATEMENTS = env_bool("DATABASE_PREPARED_STATEMENTS", True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Axes first: it refuses a locked-out account or address before any password is checked (every sign-in
# route goes through authenticate(): the login page, the admin's, the API token exchange). The second logs
# people in; the third only serves sessions that name it (started before the second existed), so that a
# deploy logs nobody out.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "annotator.auth_backend.SessionUserBackend",
    "django.contrib.auth.backends.ModelBackend",
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- Sign-in lock-out (django-axes) ----------------------------------------------
# The client's address: REMOTE_ADDR, or, behind TRUSTED_PROXY_COUNT reverse proxies that each append to
# X-Forwarded-For, the address the outermost of them saw. Anything further left in that header is written
# by the client and never trusted (annotator.auth_backend.client_address; DRF's NUM_PROXIES, below).
TRUSTED_PROXY_COUNT = int(os.environ.get("TRUSTED_PROXY_COUNT", "0"))
# After LOGIN_FAILURE_LIMIT failed sign-ins for one username, or from one address, within
# LOGIN_COOLOFF_MINUTES, further attempts are refused (even with the right password) until that many
# minutes after the last failure. Failures while locked out are not counted, so the time shown holds.
AXES_FAILURE_LIMIT = int(os.environ.get("LOGIN_FAILURE_LIMIT", "10"))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("LOGIN_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
# Not reset by a success: a success deletes every attempt from its address, so anyone with an account
# could sign in between guesses at someone else's password and never reach the limit.
AXES_RESET_ON_SUCCESS = False
AXES_CLIENT_IP_CALLABLE = "annotator.auth_backend.client_address"
AXES_LOCKOUT_CALLABLE = "annotator.auth_backend.lockout_response"
# Failed attempts are kept (admin: Axes → Access attempts); successful sign-ins are not logged a second time.
AXES_DISABLE_ACCESS_LOG = True
AXES_HANDLER = "axes.handlers.database.AxesDatabaseHandler"
AXES_VERBOSE = False

# --- Accounts made through an invite link ---------------------------------------------
# A signed-out person who opens a lead's invite link may create an account there and join at once (README,
# "People"). INVITE_SIGNUP=false turns that off: accounts are then made by the site administrator only, and
# the invite page offers sign-in alone. Sign-up attempts are throttled per client address like failed
# sign-ins: SIGNUP_ATTEMPT_LIMIT attempts (default LOGIN_FAILURE_LIMIT) within LOGIN_COOLOFF_MINUTES.
INVITE_SIGNUP = env_bool("INVITE_SIGNUP", True)
SIGNUP_ATTEMPT_LIMIT = int(os.environ.get("SIGNUP_ATTEMPT_LIMIT", str(AXES_FAILURE_LIMIT)))
# The browser sends a page's address (Referer) to this site only, never to another; the invite pages send it
# to no one (annotator/projects/join_views.py).
SECURE_REFERRER_POLICY = "same-origin"

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

# Uploads larger than this go to a temporary file rather than memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
# How deep objects and lists may nest in a JSON body or field (annotator/json_input.py): no body of the app nests
# past a dozen levels; deeper is a 400 on every JSON route (Python's parser itself stops near 1,000 with a
# RecursionError, which was a 500).
JSON_MAX_DEPTH = int(os.environ.get("JSON_MAX_DEPTH", 32))
# Imports (README, "Configuration"): an uploaded file larger than this is refused before it is
# stored; a sentence or a reference longer than these refuses the import, naming it. The real
# CogniBench and RefChecker samples peak at 806 characters per sentence and 6,270 per reference.
IMPORT_MAX_UPLOAD_BYTES = int(os.environ.get("IMPORT_MAX_UPLOAD_BYTES", 200 * 1000 * 1000))
IMPORT_MAX_SENTENCE_CHARS = int(os.environ.get("IMPORT_MAX_SENTENCE_CHARS", 5_000))
IMPORT_MAX_REFERENCE_CHARS = int(os.environ.get("IMPORT_MAX_REFERENCE_CHARS", 200_000))
# A response longer than this is refused before it is cut into units (Punkt takes ~2 s on 70,000 characters of
# one-word sentences, and stops with a time-out on 700,000); the real samples' longest response is 2,024.
IMPORT_MAX_RESPONSE_CHARS = int(os.environ.get("IMPORT_MAX_RESPONSE_CHARS", 50_000))
# A protocol document (README, "Configuration"; docs/protocols.md, "Limits"), on every route that takes one (the
# protocol page, the API, protocol_set, a JSONL header): at most this many characters (its text, and written as
# compact JSON: every annotation screen embeds it) and this deep a nesting. The shipped ones: under 10,000, 6 deep.
PROTOCOL_MAX_CHARS = int(os.environ.get("PROTOCOL_MAX_CHARS", 500_000))
PROTOCOL_MAX_DEPTH = int(os.environ.get("PROTOCOL_MAX_DEPTH", 12))

# --- Celery -----------------------------------------------------------------
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
            # Made by the cache on its first write. The test settings give each pytest-xdist worker its own.
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }

# Sessions are read on every request: from the cache, the database only when the cache lost them
# (one query less per annotation request; docs/benchmarks.md, load).
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"

# --- LLM endpoint (pre-labeler) ------------------------------------------------
OPENAI_API_KEY = os.environ.get("OPENAI_API_KEY", "")
OPENAI_BASE_URL = os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8765/v1")
# The environment variables an LLM profile may name as its API key (sent as a Bearer token to the
# profile's base URL): these, and any name ending in _API_KEY. Never SECRET_KEY, DATABASE_URL...
LLM_API_KEY_ENV_ALLOWED = [
    name.strip() for name in os.environ.get("LLM_API_KEY_ENV_ALLOWED", "").split(",") if name.strip()
]
# A project's leads add their own endpoints (autolabel/endpoints/): the server then sends requests, and keys,
# where a lead says. The hosts a lead's endpoint may name ("host" for any port, "host:port" for one), and which
# key variable may go to which hosts ("VAR=host,host;VAR2=host"). Default: the offline baseline's loopback
# host and OPENAI_BASE_URL's host; OPENAI_API_KEY to OPENAI_BASE_URL's host only. docs/deploy.md.
_openai_host = (urlsplit(OPENAI_BASE_URL).hostname or "").lower()
LLM_ENDPOINT_HOSTS = [
    host.strip().lower() for host in os.environ.get("LLM_ENDPOINT_HOSTS", "").split(",") if host.strip()
] or sorted({"127.0.0.1", _openai_host} - {""})
LLM_API_KEY_HOSTS = {
    variable.strip(): [host.strip().lower() for host in hosts.split(",") if host.strip()]
    for variable, _, hosts in (
        pair.partition("=") for pair in os.environ.get("LLM_API_KEY_HOSTS", "").split(";") if "=" in pair
    )
} or {"OPENAI_API_KEY": [_openai_host]}
# The Test button's probe (a worker runs it) waits at most this long for each of its two requests.
LLM_ENDPOINT_TEST_TIMEOUT_SECONDS = float(os.environ.get("LLM_ENDPOINT_TEST_TIMEOUT_SECONDS", "15"))

# --- REST framework -----------------------------------------------------------
REST_FRAMEWORK = {
    # Token first: an anonymous API client is told 401 with `WWW-Authenticate: Token`.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    # JSON within limits (depth, size, Python's integer digits): a 400 in the API's error body, never a 500.
    "DEFAULT_PARSER_CLASSES": ["api.parsers.LimitedJSONParser", "rest_framework.parsers.FormParser",
                               "rest_framework.parsers.MultiPartParser"],
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
    # The throttles' client address: the same trusted-proxy count as the sign-in lock-out. With None
    # (DRF's default) the whole X-Forwarded-For header, which any client writes, was the key.
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
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
        "LabelEnum": "annotator.domain.vocabulary.Label",
        "RoleEnum": "annotator.domain.vocabulary.Role",
        "ImportStatusEnum": "annotator.models.ImportBatch.Status",
        "AssignmentStatusEnum": "annotator.models.Assignment.Status",
        "AdjudicationStatusEnum": "annotator.models.Adjudication.Status",
        "QuestionStatusEnum": "annotator.models.Question.Status",
        "JobStatusEnum": "autolabel.models.AutoLabelJob.Status",
        "StepEnum": "annotator.domain.vocabulary.Step",
        "AnswerEnum": "annotator.domain.vocabulary.Answer",
        "KindEnum": "annotator.models.ImportBatch.Kind",  # the name it had before another "kind" came
        "UnitFlagKindEnum": "annotator.domain.vocabulary.UnitFlagKind",
        "UnitFlagStatusEnum": "annotator.models.UnitFlag.Status",
    },
}

# --- Content-Security-Policy (django-csp) -------------------------------------------
# Scripts only from our own static files: no inline script, no event-handler attribute, no eval (htmx
# runs with allowEval off: the htmx-config meta tag of templates/base.html). Inline styles stay allowed:
# htmx injects its indicator style and the pages set widths (progress bars) in style attributes.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "worker-src": ["'self'", "blob:"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

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
