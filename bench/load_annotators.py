"""The simulated annotators of bench/load.py: each one an HTTP session doing what the annotation page does.

``Annotator`` sends the per-step requests (``POST /a/<id>/answer/``), ``SyncAnnotator`` what the page sends now
(one ``POST /a/<id>/sync/`` per labelled sentence), ``FloorAnnotator`` the floor's requests (bench/floor/urls.py);
``run_annotators`` runs them together and returns what they saw (``Stats``), which bench/load_checks.py compares
with the database.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field

from bench.lean_http import LeanClient
from bench.screen_page import SCREEN_URL_RE, csrf_token, screen_sentences, screen_version

SLUG = "load"
PASSWORD = "load-test-password-4711"


# --- the simulated annotators ------------------------------------------------------------------------

@dataclass
class Stats:
    latencies: list = field(default_factory=list)  # seconds, answer requests (decisions)
    other_latencies: list = field(default_factory=list)  # screen loads, next, submit
    decisions: int = 0
    decision_times: list = field(default_factory=list)  # monotonic time of each acknowledgement
    errors: Counter = field(default_factory=Counter)  # final failures, by kind
    retried_attempts: Counter = field(default_factory=Counter)  # failed attempts that were retried
    acked: dict = field(default_factory=dict)  # request_id -> (assignment_id, sentence_id, step, value)
    chosen: dict = field(default_factory=dict)  # (assignment_id, sentence_id) -> label, when every step was acked
    submitted: list = field(default_factory=list)  # assignment ids
    first_failure: float | None = None
    last_failure: float | None = None
    recovered_at: float | None = None
    error_samples: list = field(default_factory=list)
    requests: Counter = field(default_factory=Counter)  # attempts sent to the server in the window, by kind


class Annotator:
    labels_sentences = True  # False for the floor, whose decisions label nothing

    def __init__(self, number: int, base_url: str, stats: Stats, deadline: float, rate: float, seed: int):
        self.username = f"annotator{number:03d}"
        self.base_url = base_url
        self.stats = stats
        self.deadline = deadline
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self.rng = random.Random(seed)
        self.csrf = ""
        self.client = None
        self.all_logged_in: asyncio.Event | None = None
        self.login_turns: asyncio.Semaphore | None = None
        self.next_slot = 0.0
        self.opened_by_submit: int | None = None  # the next turn's assignment, when the last submit opened it

    async def start_pacing(self):
        """A random offset, so that the annotators' decisions do not arrive in lockstep."""
        await asyncio.sleep(self.rng.random() * max(self.interval, 0.05))
        self.next_slot = time.monotonic()

    async def wait_for_slot(self):
        """Keep the pace of ``--rate``; a slot missed by over a second is not made up with a burst."""
        if self.interval:
            self.next_slot = max(self.next_slot + self.interval, time.monotonic() - 1.0)
            delay = self.next_slot - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)

    def acknowledged(self, request_id: str, elapsed: float, what: tuple):
        self.stats.decisions += 1
        self.stats.decision_times.append(time.monotonic())
        self.stats.latencies.append(elapsed)
        self.stats.acked[request_id] = what

    async def request(self, method: str, path: str, *, data=None, json_body=None, htmx=False, kind="other",
                      give_up=None):
        """One logical request, retried like the page does until it gets an answer (or the run is over)."""
        headers = {"X-CSRFToken": self.csrf} if method == "POST" else {}
        if htmx:
            headers["HX-Request"] = "true"
        started = time.monotonic()
        attempt = 0
        give_up = give_up or (self.deadline + 30)
        while True:
            self.stats.requests[kind] += 1
            try:
                response = await self.client.request(method, path, data=data, headers=headers, json_body=json_body)
            except Exception as error:  # noqa: BLE001 - any network failure: retry with the same request id
                failure = f"network: {type(error).__name__}"
            else:
                if response.status_code < 500 and response.status_code != 429:
                    elapsed = time.monotonic() - started
                    if attempt and self.stats.recovered_at is None and self.stats.first_failure is not None:
                        self.stats.recovered_at = time.monotonic()
                    return response, elapsed
                failure = f"HTTP {response.status_code}"
                if len(self.stats.error_samples) < 5:
                    self.stats.error_samples.append(f"{method} {path}: {response.status_code} {response.text[:300]!r}")
            now = time.monotonic()
            self.stats.retried_attempts[f"{kind}: {failure}"] += 1
            self.stats.first_failure = self.stats.first_failure or now
            self.stats.last_failure = now
            if now > give_up:
                self.stats.errors[f"{kind}: gave up after {failure}"] += 1
                return None, now - started
            await asyncio.sleep(min(0.5 * 2 ** attempt, 8.0))
            attempt += 1

    async def login(self):
        try:
            async with self.login_turns:
                await self._login()
        finally:
            self.logged_in.set()

    async def _login(self):
        response, _ = await self.request("GET", "/accounts/login/")
        self.csrf = csrf_token(response.text)
        response, _ = await self.request(
            "POST", "/accounts/login/",
            data={"username": self.username, "password": PASSWORD, "csrfmiddlewaretoken": self.csrf},
        )
        if response is None or response.status_code != 302:
            raise RuntimeError(f"{self.username} could not log in: {response and response.status_code}")
        self.csrf = self.client.cookies.get("csrftoken") or self.csrf

    async def run(self):
        async with LeanClient(self.base_url, timeout=30.0) as self.client:
            await self.login()
            await self.all_logged_in.wait()
            await self.start_pacing()
            while time.monotonic() < self.deadline:
                if not await self.annotate_turn():
                    return

    async def annotate_turn(self) -> bool:
        """Start, the screen, every sentence walked through the protocol, submit; False to stop."""
        from annotator.domain import protocol
        from annotator.domain.vocabulary import Label

        opened = await self.open_turn()
        if opened is None:
            return False
        assignment_id, sentence_ids, version = opened
        for sentence_id in sentence_ids:
            label = self.rng.choice(list(Label))
            for step, value in protocol.path_for_label(label).items():
                await self.wait_for_slot()
                if time.monotonic() >= self.deadline:
                    return False
                version = await self.decide(assignment_id, sentence_id, str(step), str(value), version)
                if version is None:
                    return False
            if self.labels_sentences:
                self.stats.chosen[(assignment_id, sentence_id)] = label.value
        return await self.submit(assignment_id, version)

    async def open_turn(self) -> tuple[int, list[int], int] | None:
        """Start and the screen: the assignment, its sentences and the version shown, or None to stop."""
        assignment_id = await self.start()
        if assignment_id is None:
            return None
        response, elapsed = await self.request("GET", f"/a/{assignment_id}/", kind="screen")
        if response is None:
            return None
        self.stats.other_latencies.append(elapsed)
        sentence_ids = screen_sentences(response.text)
        if not sentence_ids:
            self.stats.errors["screen: no sentences found"] += 1
            return None
        return assignment_id, sentence_ids, screen_version(response.text)

    async def start(self) -> int | None:
        """Start / Continue: the id of the assignment the server hands out, or None to stop. After a submit that
        opened the next turn (as the page's Submit does), that turn: the page goes straight to its screen."""
        if self.opened_by_submit is not None:
            assignment_id, self.opened_by_submit = self.opened_by_submit, None
            return assignment_id
        response, elapsed = await self.request("POST", f"/p/{SLUG}/work/next/", kind="next")
        if response is None:
            return None
        self.stats.other_latencies.append(elapsed)
        location = response.headers.get("location", "")
        match = SCREEN_URL_RE.match(location)
        if not match:
            self.stats.errors[f"next: no assignment ({response.status_code} {location})"] += 1
            return None
        return int(match.group(1))

    async def decide(self, assignment_id: int, sentence_id: int, step: str, value: str, version: int) -> int | None:
        """One protocol decision, as the panel sends it; the version the answer shows, or None to stop."""
        request_id = uuid.uuid4().hex
        data = {"sentence": sentence_id, "step": step, "value": value, "version": version,
                "request_id": request_id, "seconds": f"{self.rng.uniform(1, 9):.2f}"}
        response, elapsed = await self.request("POST", f"/a/{assignment_id}/answer/", data=data, htmx=True,
                                               kind="answer")
        if response is None:
            return None
        if response.status_code != 200:
            self.stats.errors[f"answer: HTTP {response.status_code}"] += 1
            if len(self.stats.error_samples) < 5:
                self.stats.error_samples.append(f"answer {response.status_code}: {response.text[:300]!r}")
            return None
        self.acknowledged(request_id, elapsed, (assignment_id, sentence_id, step, value))
        return screen_version(response.text)

    async def submit(self, assignment_id: int, version: int) -> bool:
        data = {"version": version, "request_id": uuid.uuid4().hex}
        response, elapsed = await self.request("POST", f"/a/{assignment_id}/submit/", data=data, htmx=True,
                                               kind="submit")
        if response is None:
            return False
        self.stats.other_latencies.append(elapsed)
        if response.status_code == 200 and response.headers.get("HX-Redirect"):
            self.stats.submitted.append(assignment_id)
            opened = SCREEN_URL_RE.match(response.headers["HX-Redirect"])
            # Submit opens the next turn; back at the queue means none is left for this annotator: stop.
            self.opened_by_submit = int(opened.group(1)) if opened else None
            return opened is not None
        self.stats.errors[f"submit: HTTP {response.status_code}"] += 1
        return False


class SyncAnnotator(Annotator):
    """``--sync``: what the annotation page sends now (static/js/annotation_outbox.js), one request per sentence.

    The decisions keep the same pace (the annotator's keys); the page keeps them and
    sends the sentence's walk when it has its label, one change per request, with the
    version the last answer gave. The request ids of the steps (``<id>:<n>``) are the
    ones the audit history stores, so the database checks see every decision.
    """

    async def annotate_turn(self) -> bool:
        from annotator.domain import protocol
        from annotator.domain.vocabulary import Label

        opened = await self.open_turn()
        if opened is None:
            return False
        assignment_id, sentence_ids, version = opened
        for sentence_id in sentence_ids:
            label = self.rng.choice(list(Label))
            path = {str(step): str(value) for step, value in protocol.path_for_label(label).items()}
            steps, seconds = [], 0.0
            for step, value in path.items():
                await self.wait_for_slot()
                if time.monotonic() >= self.deadline:
                    return False
                steps.append({"action": "answer", "step": step, "value": value, "at": int(time.time() * 1000)})
                seconds += self.rng.uniform(1, 9)
            version = await self.save_sentence(assignment_id, sentence_id, steps, path, seconds, version)
            if version is None:
                return False
            self.stats.chosen[(assignment_id, sentence_id)] = label.value
        return await self.submit(assignment_id, version)

    async def save_sentence(self, assignment_id, sentence_id, steps, path, seconds, version) -> int | None:
        request_id = uuid.uuid4().hex
        body = {"version": version, "changes": [{"request_id": request_id, "sentence": sentence_id, "steps": steps,
                                                 "path": path, "seconds": round(seconds, 2)}]}
        response, elapsed = await self.request("POST", f"/a/{assignment_id}/sync/", json_body=body, kind="sync")
        if response is None:
            return None
        if response.status_code != 200:
            self.stats.errors[f"sync: HTTP {response.status_code}"] += 1
            if len(self.stats.error_samples) < 5:
                self.stats.error_samples.append(f"sync {response.status_code}: {response.text[:300]!r}")
            return None
        self.stats.latencies.append(elapsed)
        for number, step in enumerate(steps, start=1):
            self.stats.decisions += 1
            self.stats.decision_times.append(time.monotonic())
            self.stats.acked[f"{request_id}:{number}"] = (assignment_id, sentence_id, step["step"], step["value"])
        return json.loads(response.text)["version"]


class FloorAnnotator(Annotator):
    """``--floor``: decisions sent to ``POST /floor/<id>/`` (bench/floor/urls.py), at the same pace.

    Alone, after one Start; with ``--with-screens``, inside each turn's real Start,
    screen and submit requests, as many as the protocol walk would send. That
    submit is refused (the floor labels nothing), so Start hands back the same turn.
    """

    labels_sentences = False
    with_screens = False

    async def run(self):
        if self.with_screens:
            return await super().run()
        async with LeanClient(self.base_url, timeout=30.0) as self.client:
            await self.login()
            await self.all_logged_in.wait()
            assignment_id = await self.start()
            if assignment_id is None:
                return
            await self.start_pacing()
            while time.monotonic() < self.deadline:
                await self.wait_for_slot()
                if await self.decide(assignment_id, None, "", "", 0) is None:
                    return

    async def decide(self, assignment_id, sentence_id, step, value, version):
        request_id = uuid.uuid4().hex
        response, elapsed = await self.request(
            "POST", f"/floor/{assignment_id}/", data={"n": "1", "request_id": request_id}, htmx=True, kind="floor")
        if response is None or response.status_code != 200:
            self.stats.errors[f"floor: {response and response.status_code}"] += 1
            return None
        self.acknowledged(request_id, elapsed, (assignment_id, None, "", ""))
        return version

    async def submit(self, assignment_id, version):
        response, elapsed = await self.request("POST", f"/a/{assignment_id}/submit/", htmx=True, kind="submit",
                                               data={"version": version, "request_id": uuid.uuid4().hex})
        # Refused: nothing is labelled (422), or the floor's writes moved the version on (409).
        if response is None or response.status_code not in (409, 422):
            self.stats.errors[f"submit at the floor: {response and response.status_code}"] += 1
            return False
        self.stats.other_latencies.append(elapsed)
        return True


async def run_annotators(base_url: str, count: int, duration: float, rate: float, seed: int,
                         on_start=None, floor: bool = False, with_screens: bool = False,
                         sync: bool = False) -> tuple[Stats, float, float]:
    stats = Stats()
    kind = FloorAnnotator if floor else SyncAnnotator if sync else Annotator
    annotators = [kind(n, base_url, stats, float("inf"), rate, seed + n) for n in range(count)]
    all_logged_in = asyncio.Event()
    # PBKDF2 makes a login cost about a second of server CPU on a slow day: fifty at once time out
    # and retry (a fresh hash each time). A few at a time, as many as the server has workers.
    login_turns = asyncio.Semaphore(4)
    for annotator in annotators:
        if floor:
            annotator.with_screens = with_screens
        annotator.logged_in = asyncio.Event()
        annotator.all_logged_in = all_logged_in
        annotator.login_turns = login_turns

    async def start_clock():
        # Logging in (PBKDF2 on the server) is not part of the measured window.
        await asyncio.gather(*(a.logged_in.wait() for a in annotators))
        # Failures while logging in are not part of the fault figures of the measured window.
        stats.first_failure = stats.last_failure = stats.recovered_at = None
        stats.requests.clear()
        if on_start is not None:
            on_start()
        deadline = time.monotonic() + duration
        for annotator in annotators:
            annotator.deadline = deadline
        all_logged_in.set()
        return time.monotonic()

    clock = asyncio.create_task(start_clock())
    results = await asyncio.gather(*(a.run() for a in annotators), return_exceptions=True)
    started = await clock
    for result in results:
        if isinstance(result, Exception):
            stats.errors[f"annotator crashed: {type(result).__name__}: {result}"] += 1
    return stats, started, time.monotonic()
