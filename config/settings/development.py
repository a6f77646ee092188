"""Development settings: what `make run` and manage.py use unless DJANGO_SETTINGS_MODULE says otherwise.

The shared settings (config.settings.base) plus a SECRET_KEY that needs no configuration, DEBUG from the
environment (off unless asked for), and WhiteNoise serving straight from static/.
"""

import os
import secrets

from .base import *  # noqa: F403
from .base import VAR_DIR, env_bool


def machine_secret_key():
    """SECRET_KEY from the environment, else a random key made once for this machine in VAR_DIR/secret_key.

    Never a key written in the repository: `make run` is what many teams put on a server first, and a
    public key lets anyone sign what the server trusts. The file keeps sessions valid across restarts and
    is shared by the web server and the worker that `make run` starts. (config.settings.production
    reads the environment only and refuses to start without it.)

    The one thing settings write when imported: Django cannot start without a SECRET_KEY, and every
    process of `make run` must agree on it before any of them has started, so the key file (and VAR_DIR,
    to hold it) is made here, on the first start of a machine that has none.
    """
    if os.environ.get("SECRET_KEY"):
        return os.environ["SECRET_KEY"]
    path = VAR_DIR / "secret_key"
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        # Written whole under a name of our own, then linked into place: a process starting at the same
        # moment either makes the link first (and everyone reads its key) or reads a complete file.
        draft = path.with_name(f"secret_key.{os.getpid()}")
        with os.fdopen(os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as handle:
            handle.write(secrets.token_urlsafe(64) + "\n")
        try:
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return path.read_text().strip()


SECRET_KEY = machine_secret_key()
# Off unless asked for (DEBUG=true): `make run` is what many teams put on a server first, and a debug page
# lists every URL and shows tracebacks with settings to anyone who reaches it. Static files are served
# either way (WhiteNoise, below).
DEBUG = env_bool("DEBUG", False)

# Outside production WhiteNoise serves straight from static/ (no collectstatic needed), DEBUG on or off,
# and picks up edited files (config.settings.production turns both off and serves the collected files).
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
