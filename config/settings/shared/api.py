"""The REST API: the REST framework's settings (authentication, parsing within limits, throttles) and the OpenAPI
schema's (drf-spectacular)."""

import os

from .security import TRUSTED_PROXY_COUNT

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
    # A stored lone surrogate (kept before such text was refused) is written as U+FFFD, never a 500.
    "DEFAULT_RENDERER_CLASSES": ["api.renderers.ReadableJSONRenderer", "rest_framework.renderers.BrowsableAPIRenderer"],
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
