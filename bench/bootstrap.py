"""The start of the benchmarks that build a synthetic project in a database of their own, then time it.

``django_for_bench(name, turns=..., repeat=..., description=...)`` parses the options they share (where the
database is, how large the project, whether to rebuild it, how many timed repetitions), points Django at that
database with the development settings (DEBUG off, as a server runs), sets Django up and returns the options.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def django_for_bench(name: str, *, turns: int, repeat: int, description: str) -> argparse.Namespace:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--database-url", default=f"sqlite:///{ROOT / 'var' / f'bench-{name}.sqlite3'}")
    parser.add_argument("--turns", type=int, default=turns)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--repeat", type=int, default=repeat)
    args = parser.parse_args()
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.development")
    os.environ.setdefault("DEBUG", "false")
    os.environ.setdefault("ALLOWED_HOSTS", "testserver,localhost")
    import django

    django.setup()
    return args
