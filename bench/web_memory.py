"""Memory of a web worker that has served the annotation screen, and the heavy libraries it has loaded (issue 49).

    .venv/bin/python bench/web_memory.py [--screens 20] [--cwd PATH]

A fresh SQLite database (migrated) with a 50-turn synthetic project and one annotator; gunicorn as deployed
(Procfile: ``config.wsgi``, sync workers), one worker, DEBUG off. The annotator signs in, opens the project's
queue, presses Start and loads the annotation screen ``--screens`` times. After each request the worker writes
its RSS (``VmRSS``) and which of NumPy, SciPy, scikit-learn, NLTK and krippendorff it has imported
(``bench/web_memory_hooks.py``, gunicorn's ``post_request`` hook); the figures of the last request are printed.
``--cwd`` serves another copy of the application (an old checkout, for a before/after).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.infra import PYTHON, ROOT, app_env, empty_database, free_port, manage, terminate, wait_for_port  # noqa: E402
from bench.lean_http import LeanClient  # noqa: E402
from bench.screen_page import SCREEN_URL_RE, csrf_token  # noqa: E402

SLUG = "memory"
PASSWORD = "bench-memory-password"
OUT = ROOT / "bench" / "out"


def setup() -> None:
    """The project and its annotator (runs in a child with the app's environment)."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from annotator.domain.vocabulary import Role
    from annotator.models import Membership
    from bench.synthetic import create_synthetic_project

    project, _ = create_synthetic_project(SLUG, turns=50, sentences_per_turn=10, reference_words=250,
                                          labelled=False, name="Memory")
    user = get_user_model().objects.create_user("annotator", password=PASSWORD)
    Membership.objects.create(project=project, user=user, role=Role.ANNOTATOR)


async def browse(base_url: str, screens: int) -> None:
    async with LeanClient(base_url) as client:
        page = await client.request("GET", "/accounts/login/")
        signed_in = await client.request("POST", "/accounts/login/", data={
            "username": "annotator", "password": PASSWORD, "csrfmiddlewaretoken": csrf_token(page.text)})
        assert signed_in.status_code == 302, signed_in.status_code
        headers = {"X-CSRFToken": client.cookies["csrftoken"]}
        assert (await client.request("GET", f"/p/{SLUG}/work/")).status_code == 200
        started = await client.request("POST", f"/p/{SLUG}/work/next/", headers=headers)
        screen = SCREEN_URL_RE.match(started.headers.get("location", ""))
        assert screen, (started.status_code, started.headers)
        for _ in range(screens):
            assert (await client.request("GET", f"/a/{screen.group(1)}/")).status_code == 200


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--screens", type=int, default=20)
    parser.add_argument("--cwd", type=Path, default=ROOT, help="the copy of the application to serve")
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    database = f"sqlite:///{OUT / 'web-memory.sqlite3'}"
    report = OUT / "web-memory-worker.json"
    report.unlink(missing_ok=True)
    empty_database(database)
    env = app_env(database, WEB_MEMORY_REPORT=report)
    manage(env, "migrate", "-v0")
    subprocess.run([PYTHON, "-c", "from bench.web_memory import setup; setup()"], cwd=ROOT, env=env, check=True)
    port = free_port(8700)
    server = subprocess.Popen(
        [PYTHON, "-m", "gunicorn", "config.wsgi", "-b", f"127.0.0.1:{port}", "-w", "1", "--log-level", "warning",
         "-c", str(ROOT / "bench" / "web_memory_hooks.py")],
        cwd=args.cwd, env=env, start_new_session=True)
    try:
        wait_for_port(port, timeout=60, proc=server)
        asyncio.run(browse(f"http://127.0.0.1:{port}", args.screens))
    finally:
        terminate(server)
    worker = json.loads(report.read_text())
    print(f"served from {args.cwd}: {args.screens} annotation screens")
    print(f"worker RSS after the last request: {worker['rss_kib'] / 1024:.1f} MiB "
          f"({worker['rss_kib'] * 1024 / 1e6:.1f} MB); peak {worker['peak_kib'] / 1024:.1f} MiB")
    print(f"heavy libraries loaded: {', '.join(worker['heavy']) or 'none'}")


if __name__ == "__main__":
    main()
