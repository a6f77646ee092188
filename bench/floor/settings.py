"""The app's settings with one extra URL: the floor view (bench/load_floor.py)."""

from config.settings.development import *  # noqa: F403

ROOT_URLCONF = "bench.floor.urls"
