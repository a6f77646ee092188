"""Shared fixtures: factories, a real Celery worker process, headless Chromium."""

import os
import re
import shutil
import subprocess
import sys
import threading
import time
import uuid
import warnings
from pathlib import Path

import pytest

from tests import database_template

# Playwright's sync API runs an event loop in this thread; Django's ORM calls in
# the test body are still synchronous, so allow them.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

ROOT = Path(__file__).resolve().parent.parent
# The shared sample data sits beside the repository (../shared/data); from a
# worktree one level deeper (e.g. /work/wt/<name>) it is ../../shared/data.
SHARED_DATA = Path(
    os.environ.get("SHARED_DATA")
    or next((p for p in (ROOT.parent / "shared" / "data", ROOT.parent.parent / "shared" / "data") if p.exists()),
            ROOT.parent / "shared" / "data")
)
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    # Chromium 156 gives every window (a Playwright context is one) an omnibox popup drawn as a web page: two
    # pages in a renderer of their own, started and scripted for each context although a headless browser
    # never shows them. That renderer was half of what a context costs: 20 contexts, each opening one page,
    # took 21.4-22.9 s of Chromium's CPU with it and 11.5-11.9 s without (docs/benchmarks.md, "Test suite").
    # RenderDocument gives every navigation, same-site too, a new frame in the renderer; the spare renderer is
    # started ahead for a next site that never comes; the rest are services a test never uses. With
    # --disable-threaded-animation (the one transition, a progress bar's width, runs on the main thread): 20
    # contexts of five navigations each took 10.7-11.1 s of Chromium's CPU, 12.6-12.8 s without these
    # (docs/benchmarks.md, "Test suite").
    "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup,RenderDocument,SpareRendererForSitePerProcess,"
    "Translate,MediaRouter,DialMediaRouteProvider,AutofillServerCommunication,LensOverlay,OptimizationHints",
    "--disable-threaded-animation",
]


LONG_TEST_MARKS = ("slow", "browser", "worker")


def pytest_configure(config):
    database_template.name_the_run(config)


def pytest_report_header(config):
    # A clone away from the shared folder fails some 40 tests on a missing file: say why before they run.
    if SHARED_DATA.exists():
        return f"shared sample data: {SHARED_DATA}"
    return (f"shared sample data: MISSING at {SHARED_DATA}: the tests that import the CogniBench and RefChecker "
            "samples will fail; put shared/data beside the repository or set SHARED_DATA")


def pytest_sessionfinish(session):
    database_template.drop_the_template(session.config)


@pytest.fixture(scope="session")
def django_db_setup(request, django_test_environment, django_db_blocker, django_db_modify_db_settings):
    """pytest-django's, except that a pytest-xdist worker works on a copy of the run's migrated template
    (tests/database_template.py) instead of migrating a database of its own."""
    from django.test.utils import setup_databases, teardown_databases
    from pytest_django.fixtures import _get_databases_for_setup

    aliases, serialized_aliases = _get_databases_for_setup(request.session.items)

    def setup():
        return setup_databases(verbosity=request.config.option.verbose, interactive=False, aliases=aliases,
                               serialized_aliases=serialized_aliases)

    copied = database_template.in_use(request.config)
    with django_db_blocker.unblock():
        if copied:
            database_template.take_a_copy(request.config, setup)
            if serialized_aliases:
                from django.db import connection

                connection._test_serialized_contents = connection.creation.serialize_db_to_string()
        else:
            databases = setup()
    yield
    with django_db_blocker.unblock():
        if copied:
            database_template.drop_the_copy(request.config)
        else:
            teardown_databases(databases, verbosity=request.config.option.verbose)


def pytest_collection_modifyitems(config, items):
    """The modules holding long tests (whole-route walks, browser and worker tests) run first, each module
    kept together and in its own order.

    In name order most of them came last (test_security_*, test_workspace_*): with `make test`'s two
    processes the suite's end waited on one walk of up to two minutes while the other core had nothing
    left to do. Started first, the short tests fill in around them (pytest-xdist's worksteal).
    """
    module_of = {item: item.nodeid.split("::", 1)[0] for item in items}
    first_seen, long_modules = {}, set()
    for item in items:
        first_seen.setdefault(module_of[item], len(first_seen))
        if any(item.get_closest_marker(mark) for mark in LONG_TEST_MARKS):
            long_modules.add(module_of[item])
    items.sort(key=lambda item: (module_of[item] not in long_modules, first_seen[module_of[item]]))


@pytest.fixture(autouse=True)
def empty_cache():
    """Every test starts with an empty cache: its keys (reports by data version, throttles, sessions) would
    otherwise carry over from an earlier test or an earlier run of the suite."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture(autouse=True)
def fresh_protocols():
    """Loaded protocol versions are cached by row id, and a rolled-back test reuses ids."""
    from annotator.projects.protocols import forget_loaded_protocols

    forget_loaded_protocols()
    yield


@pytest.fixture(scope="session", autouse=True)
def isolated_celery_queue():
    """Each test session sends its tasks to a queue of its own, so concurrent runs never share work.

    On the filesystem broker the session starts with its process's folders empty (config/settings/test.py):
    what an earlier run left there, unread, would be listed by every worker at every poll."""
    from django.conf import settings

    from config.celery import BROKER_FOLDER_OPTIONS, app

    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        for name in BROKER_FOLDER_OPTIONS:
            for leftover in Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS[name]).glob("*"):
                leftover.unlink(missing_ok=True)
    for old_log in (ROOT / "var").glob("worker-test-*.log"):  # start_celery_worker's logs of past days
        try:
            if time.time() - old_log.stat().st_mtime > 24 * 3600:
                old_log.unlink()
        except FileNotFoundError:  # another test process of this run removed it first
            pass
    queue = f"test-{uuid.uuid4().hex[:12]}"
    settings.CELERY_TASK_DEFAULT_QUEUE = queue
    app.conf.task_default_queue = queue
    yield queue


def database_url_for_worker():
    """The URL of the *test* database, for a worker process started from a test."""
    from django.db import connection

    s = connection.settings_dict
    if s["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{s['NAME']}"
    auth = s["USER"] or ""
    if s.get("PASSWORD"):
        auth += f":{s['PASSWORD']}"
    host = s.get("HOST") or "127.0.0.1"
    port = s.get("PORT") or "5432"
    return f"postgres://{auth}@{host}:{port}/{s['NAME']}"


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """A failed test that started workers shows the end of each worker's log (CI keeps no files)."""
    report = yield
    if report.failed:
        for log in getattr(item, "worker_logs", []):
            report.sections.append((f"celery worker log {log.name}", log.read_text(errors="replace")[-6000:]))
    return report


@pytest.fixture
def start_celery_worker(isolated_celery_queue, transactional_db, request):
    """Start a real ``celery worker`` process on the test database; shut down at teardown (stop_workers).

    Returns a function; call it (again) to start a worker, e.g. after killing one. Each worker logs to a file of
    its own in var/; a failing test's report ends with those logs.
    """
    processes = {}  # node name -> process
    request.node.worker_logs = []

    def start(concurrency=2, extra_env=None):
        env = dict(os.environ)
        env["DATABASE_URL"] = database_url_for_worker()
        env["CELERY_QUEUE"] = isolated_celery_queue
        env["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
        env.pop("TEST_DATABASE_NAME", None)
        env.update(extra_env or {})
        # A node name of its own, so that the shutdown at teardown reaches this worker only (the broker, and
        # Redis in CI, may be shared with other test sessions).
        nodename = f"{isolated_celery_queue}-{uuid.uuid4().hex[:6]}@pytest"
        log = open(ROOT / "var" / f"worker-{nodename.split('@')[0]}.log", "w")
        request.node.worker_logs.append(Path(log.name))
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", isolated_celery_queue,
             "--hostname", nodename,
             "--concurrency", str(concurrency), "--pool", "threads", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "-l", "INFO"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
        processes[nodename] = proc
        # Wait until it is ready to consume (it logs "ready").
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"celery worker exited with {proc.returncode}: {Path(log.name).read_text()[-2000:]}")
            if "ready." in Path(log.name).read_text():
                return proc
            time.sleep(0.2)
        raise RuntimeError("celery worker did not become ready within 60 s")

    yield start
    stop_workers(processes)


def stop_workers(processes):
    """Shut the running workers down by remote control, all at once, and wait for them to exit.

    A warm shutdown like SIGTERM's (the worker stops consuming and finishes a task it is running), without
    SIGTERM's idle wait: on a signal the worker's loop first waits out its broker poll (2 s, twice), where
    the shutdown command arrives with the next message (config/settings/test.py polls every 0.1 s).
    """
    from config.celery import app

    running = {name: proc for name, proc in processes.items() if proc.poll() is None}
    if running:
        app.control.shutdown(destination=list(running))
    for proc in running.values():
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:  # the command did not arrive: a signal then, and a kill
            warnings.warn(f"a celery worker ignored the shutdown command for 30 s (pid {proc.pid})", stacklevel=1)
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


def wait_until(predicate, timeout=60, interval=0.2, message="condition"):
    """Poll ``predicate`` until it is truthy; fail the test with ``message`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {message}")


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium from Debian's package, driven by Playwright."""
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium package")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class LiveServerRequests:
    """Counts the requests being handled by the live server's threads (the test's own Client runs in this one),
    and once ``close`` is called refuses any new one before it reaches a view or the database."""

    def __init__(self):
        self.count = 0
        self.closed = False
        self.lock = threading.Lock()
        self.test_thread = threading.current_thread()

    def _add(self, delta):
        if threading.current_thread() is not self.test_thread:
            with self.lock:
                self.count += delta

    def close(self):
        self.closed = True

    def started(self, **kwargs):
        if threading.current_thread() is self.test_thread:
            return
        with self.lock:
            if self.closed:
                # Raised inside Django's handler before the request is built: the live server answers 500 and
                # nothing is written. A page's closing beacon is a keepalive request the browser sends after the
                # page is gone, late by any latency the test emulated, so no wait can be sure it has arrived.
                raise LiveServerClosed("the test is over; the database is being emptied")
            self.count += 1

    def finished(self, **kwargs):
        self._add(-1)

    def wait_until_none(self, timeout=15):
        wait_until(lambda: self.count <= 0, timeout=timeout, interval=0.05, message="the live server's requests to end")


class LiveServerClosed(RuntimeError):
    """A request that reached the live server after its test ended."""


def keys_ready(page):
    """Wait until the annotation screen's keys apply (static/js/workspace.js marks <html data-keys="ready">).

    The screen's text is the server's and shows at once; the page's modules load after it, and a key pressed
    before their handler is attached does nothing. On a loaded machine that gap was long enough to lose the
    test's first key."""
    from playwright.sync_api import expect

    expect(page.locator("html[data-keys=ready]")).to_have_count(1, timeout=30_000)


def submit_with_keys(page):
    """On the annotation screen: ``s`` opens the decision panel's "Submit this turn?" (its Submit button focused),
    Enter there submits. A single ``s`` no longer submits (issue 46 item 1, static/js/workspace.js)."""
    from playwright.sync_api import expect

    page.keyboard.press("s")
    expect(page.locator("#submit-confirm")).to_be_focused()
    page.keyboard.press("Enter")


def press_start(page, says=""):
    """On the annotator's queue: Enter on the Start button once it has the focus (and ``says`` so) opens the
    annotation screen, whose keys apply once this returns. An Enter before the autofocus lands does nothing, and
    a key pressed on the screen before its scripts have run is lost: both made browser tests fail at random."""
    from playwright.sync_api import expect

    expect(page.locator("#start-button")).to_be_focused()
    expect(page.locator("#start-button")).to_contain_text(says)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/a/\d+/"))
    keys_ready(page)


def start_from_queue(page, project, says=""):
    """The annotator's queue opened, then ``press_start``."""
    page.goto(f"/p/{project.slug}/work/")
    press_start(page, says)


@pytest.fixture
def page_for(browser, live_server):
    """``page_for(user)`` opens a browser page logged in as ``user`` (session cookie, no login form)."""
    from django.conf import settings
    from django.core.signals import request_finished, request_started
    from django.test import Client

    contexts = []
    requests = LiveServerRequests()
    request_started.connect(requests.started, weak=False)
    request_finished.connect(requests.finished, weak=False)

    def open_page(user, width=1280, height=800):
        client = Client()
        client.force_login(user)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME]
        context = browser.new_context(viewport={"width": width, "height": height}, base_url=live_server.url)
        context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie.value, "url": live_server.url}])
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15000)
        return page

    yield open_page
    # Closing a page hides it, and the workspace then sends the time spent as a beacon. A request
    # still running when pytest-django empties the database commits rows into tables being
    # truncated (a deadlock or a foreign-key error on PostgreSQL). Refuse new requests from here on,
    # take the pages offline (a route that aborts requests does not catch that beacon), close them,
    # then let the requests already running end.
    requests.close()
    for context in contexts:
        # A failed test leaves its route handlers in place; one called while its page closes would raise into
        # the next test of this process ("Request context disposed").
        for page in context.pages:
            page.unroute_all(behavior="ignoreErrors")
        context.unroute_all(behavior="ignoreErrors")
        context.set_offline(True)
        context.close()
    try:
        requests.wait_until_none()
    finally:
        request_started.disconnect(requests.started)
        request_finished.disconnect(requests.finished)


@pytest.fixture
def private_files(tmp_path, settings):
    """A private files folder of the test's own (uploads, exports), for this process and any worker it starts.

    The private storage follows MEDIA_ROOT (Django resets a FileSystemStorage when the setting changes).
    Pass ``{"MEDIA_ROOT": str(private_files)}`` in a worker's environment.
    """
    root = tmp_path / "private"
    root.mkdir()
    settings.MEDIA_ROOT = root
    return root
