"""Who may reach the app and sign in: the hosts it answers, the sign-in backends and passwords, the lock-out
after failed sign-ins (django-axes), accounts made through an invite link, and the Content-Security-Policy."""

import os
from datetime import timedelta

from .environment import env_bool

ALLOWED_HOSTS = [h.strip() for h in os.environ.get("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",") if h.strip()]

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
