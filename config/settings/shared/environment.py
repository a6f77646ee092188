"""Where the app keeps its files (``BASE_DIR``, the repository; ``VAR_DIR``, what it writes) and how a yes/no
environment variable reads (``env_bool``)."""

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent.parent.parent
VAR_DIR = Path(os.environ.get("VAR_DIR", BASE_DIR / "var"))


def env_bool(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}
