"""Production settings: DEBUG off, a real SECRET_KEY required, HTTPS only, secure cookies.

The default of config.wsgi, config.asgi and the Celery app (`celery -A config`); set
DJANGO_SETTINGS_MODULE=config.settings.production for manage.py too. `manage.py check --deploy`
passes with exactly the environment docs/deploy.md gives (tests/test_security_deploy.py).
"""

import os

from django.core.checks.security.base import (
    SECRET_KEY_INSECURE_PREFIX,
    SECRET_KEY_MIN_LENGTH,
    SECRET_KEY_MIN_UNIQUE_CHARACTERS,
)
from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403

DEBUG = False
WHITENOISE_USE_FINDERS = False
WHITENOISE_AUTOREFRESH = False



def secret_key_weakness(key: str) -> str | None:
    """Why Django's `check --deploy` would flag this key as weak (security.W009, the same constants), or None.

    Nothing runs `check --deploy` when a server starts, so production settings refuse such a key themselves.
    """
    if not key:
        return "it is not set"
    if len(key) < SECRET_KEY_MIN_LENGTH:
        return f"it has {len(key)} characters, fewer than {SECRET_KEY_MIN_LENGTH}"
    if len(set(key)) < SECRET_KEY_MIN_UNIQUE_CHARACTERS:
        return f"it has {len(set(key))} distinct characters, fewer than {SECRET_KEY_MIN_UNIQUE_CHARACTERS}"
    if key.startswith(SECRET_KEY_INSECURE_PREFIX):
        return f"it starts with {SECRET_KEY_INSECURE_PREFIX!r} (a key Django generated for development)"
    if key.startswith("dev-only"):
        return "it starts with 'dev-only' (the repository's public development key)"
    return None


SECRET_KEY = os.environ.get("SECRET_KEY", "")
if (_weakness := secret_key_weakness(SECRET_KEY)) is not None:
    raise ImproperlyConfigured(
        f"SECRET_KEY must be set to a random string of at least {SECRET_KEY_MIN_LENGTH} characters in production: "
        f"{_weakness} (Django's security.W009 rule)"
    )

STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "config.static_storage.ModuleAwareStaticFilesStorage"},
}

SESSION_COOKIE_SECURE = True
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SECURE = True
CSRF_COOKIE_SAMESITE = "Lax"
SECURE_SSL_REDIRECT = os.environ.get("SECURE_SSL_REDIRECT", "true").lower() == "true"
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", str(60 * 60 * 24 * 365)))
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

REST_FRAMEWORK = {
    **REST_FRAMEWORK,  # noqa: F405
    "DEFAULT_RENDERER_CLASSES": ["api.renderers.ReadableJSONRenderer"],
}
