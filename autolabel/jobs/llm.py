"""Calling an OpenAI-compatible endpoint: timeouts, retries with backoff, usage and cost.

The ``openai`` client is used with its own retries switched off, so that every
retry is ours: counted, with backoff and jitter, honouring ``Retry-After`` on a
429. Retried: 429, 5xx, timeouts, connection errors. Not retried: other 4xx
(a bad request will not get better); 401/403/404 stop the whole job because
every request would fail the same way (wrong key, URL or model).

``Caller.chat`` is a coroutine: a job runs many of them at once, at most
``concurrency`` in flight (an asyncio semaphore).

A request's timeout is one deadline, from its start to its last byte: the HTTP library's timeouts count per
read, and an endpoint sending a byte every few seconds held a request (and the worker thread waiting on it)
for minutes. ``asyncio.timeout`` around the whole request cancels it wherever it is; retried as a timeout.
"""

from __future__ import annotations

import asyncio
import email.utils
import itertools
import os
import random
import time
from decimal import Decimal
from urllib.parse import urlsplit

from autolabel.labelling.replies import CallResult, Choice  # the shape of a reply, read by the labelling rules

# openai and its HTTP library are imported where a Caller is built or used: importing openai takes half a
# second, which every management command and web worker would otherwise pay at start-up.

FATAL_STATUSES = frozenset({301, 302, 303, 307, 308, 401, 403, 404})
# A chat completion of a few thousand tokens is tens of kilobytes; a reply past this is not an answer.
MAX_RESPONSE_BYTES = 4 * 1024 * 1024
MAX_RETRY_AFTER = 120.0
POOL_SIZE = 16


class EndpointConfigurationError(RuntimeError):
    """The endpoint refuses every request (wrong key, base URL or model, a redirect elsewhere)."""


class ResponseTooLarge(Exception):
    """The endpoint sent more than MAX_RESPONSE_BYTES."""


def bounded_transport(connections: int):
    """An HTTP transport whose responses stop with ResponseTooLarge past MAX_RESPONSE_BYTES."""
    import httpx2

    class BoundedStream(httpx2.AsyncByteStream):
        def __init__(self, stream):
            self.stream = stream

        async def __aiter__(self):
            received = 0
            async for chunk in self.stream:
                received += len(chunk)
                if received > MAX_RESPONSE_BYTES:
                    raise ResponseTooLarge(f"response too large: more than {MAX_RESPONSE_BYTES} bytes")
                yield chunk

        async def aclose(self):
            await self.stream.aclose()

    class BoundedTransport(httpx2.AsyncHTTPTransport):
        async def handle_async_request(self, request):
            response = await super().handle_async_request(request)
            response.stream = BoundedStream(response.stream)
            return response

    return BoundedTransport(limits=httpx2.Limits(max_connections=connections, max_keepalive_connections=connections))


def bounded_sync_transport(limit: int):
    """The synchronous client's transport (the Batch API's files): a response stops with ResponseTooLarge past
    ``limit`` bytes, so a hostile or broken endpoint cannot fill the worker's memory."""
    import httpx2

    class BoundedStream(httpx2.SyncByteStream):
        def __init__(self, stream):
            self.stream = stream

        def __iter__(self):
            received = 0
            for chunk in self.stream:
                received += len(chunk)
                if received > limit:
                    raise ResponseTooLarge(f"response too large: more than {limit} bytes")
                yield chunk

        def close(self):
            self.stream.close()

    class BoundedTransport(httpx2.HTTPTransport):
        def handle_request(self, request):
            response = super().handle_request(request)
            response.stream = BoundedStream(response.stream)
            return response

    return BoundedTransport()


def api_key_env_refusal(variable: str) -> str:
    """Why a profile may not name ``variable`` as its API key, or "" when it may.

    The key is sent as a Bearer token to the profile's base URL, which anyone who edits profiles chooses:
    naming SECRET_KEY or DATABASE_URL there would send that secret to any server. Only variables meant as
    API keys qualify: a name ending in ``_API_KEY``, or one listed in ``LLM_API_KEY_ENV_ALLOWED``.
    """
    from django.conf import settings

    if not variable or variable.endswith("_API_KEY") or variable in settings.LLM_API_KEY_ENV_ALLOWED:
        return ""
    return (f"The environment variable {variable!r} is not an API-key variable: use a name ending in _API_KEY, "
            f"or add it to LLM_API_KEY_ENV_ALLOWED (comma-separated) in the server's environment.")


def api_key_from_env(variable: str) -> str:
    """The key named by a profile; local servers accept any non-empty key.

    Refused (the job fails with the reason) for a variable that is not meant as an API key, whatever the
    profile's form let through: the rule is enforced where the key is read.
    """
    refusal = api_key_env_refusal(variable)
    if refusal:
        raise EndpointConfigurationError(refusal)
    return os.environ.get(variable, "") if variable else ""


def retry_after_seconds(headers) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``Retry-After`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return min(float(value) / 1000, MAX_RETRY_AFTER)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return min(max(float(value), 0.0), MAX_RETRY_AFTER)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return min(max(parsed.timestamp() - time.time(), 0.0), MAX_RETRY_AFTER)


def backoff_seconds(attempt: int, base: float = 0.5, cap: float = 30.0) -> float:
    """Exponential backoff with full jitter: uniform in [base, base * 2**attempt], capped."""
    return random.uniform(base, min(cap, base * (2 ** attempt)))


def cost_of(prompt_tokens: int, completion_tokens: int, input_price: Decimal, output_price: Decimal, batch=False) -> Decimal:
    """Estimated cost from prices per million tokens; the Batch API costs half."""
    cost = (Decimal(prompt_tokens) * Decimal(input_price) + Decimal(completion_tokens) * Decimal(output_price)) / Decimal(1_000_000)
    return cost / 2 if batch else cost


def request_body(model, messages, n=1, seed=None, temperature=1.0, max_tokens=1024) -> dict:
    """The chat-completions request; sample i of a turn is always asked with seed i."""
    body = {"model": model, "messages": messages, "temperature": temperature, "max_tokens": max_tokens}
    if n > 1:
        body["n"] = n
    if seed is not None:
        body["seed"] = seed
    return body


def endpoint_name(base_url: str) -> str:
    """``host:port`` of a base URL: what a person recognises in an error ("connection refused: 127.0.0.1:9")."""
    parts = urlsplit(base_url or "")
    if not parts.hostname:
        return base_url or "(no address)"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{host}:{port}"


def connection_problem(error: BaseException, endpoint: str) -> str:
    """The cause of a failed connection, from the chain of exceptions under the client's "Connection error."."""
    causes, refused = [], False
    current = error
    while current is not None and len(causes) < 8:
        causes.append(str(current))
        refused = refused or isinstance(current, ConnectionRefusedError)
        current = current.__cause__ or current.__context__
    text = " ".join(causes).lower()
    if refused or "refused" in text:
        return f"connection refused: {endpoint}"
    if "name or service not known" in text or "nodename nor servname" in text or "name resolution" in text:
        return f"host not found: {endpoint}"
    if "response too large" in text:
        return f"response too large from {endpoint}: more than {MAX_RESPONSE_BYTES} bytes"
    detail = next((cause for cause in reversed(causes) if cause and cause != "Connection error."), "")
    return f"connection failed: {endpoint}" + (f": {detail}" if detail else "")


def deadline_problem(endpoint: str, deadline: float) -> str:
    """A request that did not end by its deadline, in words (the probe's and a job's)."""
    return f"timed out: {endpoint}: no whole answer within {deadline:g} s (the deadline of one request)"


def status_problem(status_code: int, message: str, endpoint: str, response=None) -> str:
    """A refused request in words; a redirect says where it pointed (it is never followed)."""
    if 300 <= status_code < 400:
        location = response.headers.get("location", "") if response is not None else ""
        return f"{status_code} redirect from {endpoint} to {location or '(no location)'}: not followed"
    return f"{status_code} from {endpoint}: {message}"


class Caller:
    def __init__(self, *, base_url, api_key, model, concurrency=16, timeout=60.0, max_retries=5,
                 temperature=1.0, max_tokens=1024, backoff_base=0.5, backoff_cap=30.0):
        self.model = model
        self.endpoint = endpoint_name(base_url)
        self.max_retries = max_retries
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.concurrency = max(1, concurrency)
        self.deadline = timeout
        self._semaphore = None
        # Several small connection pools rather than one large one: httpx scans its whole pool for every
        # request, which costs more CPU than the request itself once a pool holds a hundred connections.
        import httpx2  # the HTTP library of the openai client
        import openai

        shards = max(1, -(-self.concurrency // POOL_SIZE))
        per_shard = -(-self.concurrency // shards)
        self.clients = [
            openai.AsyncOpenAI(
                base_url=base_url, api_key=api_key or "no-key", timeout=timeout, max_retries=0,
                http_client=openai.DefaultAsyncHttpxClient(
                    limits=httpx2.Limits(max_connections=per_shard, max_keepalive_connections=per_shard),
                    # Never to another address than the profile's (a key must not follow a redirect), and
                    # never more than MAX_RESPONSE_BYTES of a reply held in memory.
                    follow_redirects=False, transport=bounded_transport(per_shard),
                ),
            )
            for _ in range(shards)
        ]
        self.client = self.clients[0]
        self._next = itertools.count()

    @property
    def semaphore(self):
        # Created lazily, inside the event loop that uses it.
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.concurrency)
        return self._semaphore

    def request_body(self, messages, n=1, seed=None) -> dict:
        return request_body(self.model, messages, n, seed, self.temperature, self.max_tokens)

    async def chat(self, messages, n=1, seed=None) -> CallResult:
        import httpx2
        import openai

        result = CallResult()
        body = self.request_body(messages, n, seed)
        attempt = 0
        while True:
            wait = None
            try:
                client = self.clients[next(self._next) % len(self.clients)]
                async with self.semaphore, asyncio.timeout(self.deadline):
                    # The client's generic POST: same auth, timeouts and error classes as
                    # chat.completions.create, without its per-request typing and model building,
                    # which cost more CPU than the rest of a request once thousands are in flight.
                    response = await client.post("/chat/completions", cast_to=httpx2.Response, body=body)
                return self._read(response.json(), result)
            except openai.RateLimitError as error:
                wait = retry_after_seconds(error.response.headers) if error.response is not None else None
                problem = f"429 rate limited by {self.endpoint}: {error.message}"
            except openai.APIStatusError as error:
                problem = status_problem(error.status_code, error.message, self.endpoint, error.response)
                if error.status_code in FATAL_STATUSES:
                    raise EndpointConfigurationError(problem) from error
                if error.status_code < 500:
                    result.error = problem
                    return result
            except ResponseTooLarge:
                problem = f"response too large from {self.endpoint}: more than {MAX_RESPONSE_BYTES} bytes"
            except (openai.APITimeoutError, TimeoutError):
                problem = deadline_problem(self.endpoint, self.deadline)
            except openai.APIConnectionError as error:
                problem = connection_problem(error, self.endpoint)
            except openai.APIResponseValidationError as error:
                problem = f"unreadable response from {self.endpoint}: {error.message}"
            except (ValueError, TypeError, AttributeError) as error:
                problem = f"unreadable response from {self.endpoint}: {type(error).__name__}: {error}"
            if attempt >= self.max_retries:
                result.error = f"{problem} (after {attempt} retries)"
                return result
            if wait is None:
                wait = backoff_seconds(attempt, self.backoff_base, self.backoff_cap)
            attempt += 1
            result.retries += 1
            await asyncio.sleep(wait)

    @staticmethod
    def _read(data: dict, result: CallResult) -> CallResult:
        """Read a chat-completion JSON body (malformed bodies raise ValueError/TypeError, retried)."""
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
            raise ValueError("the body has no choices")
        usage = data.get("usage") or {}
        result.prompt_tokens = int(usage.get("prompt_tokens") or 0)
        result.completion_tokens = int(usage.get("completion_tokens") or 0)
        for choice in sorted(data["choices"], key=lambda c: c.get("index") or 0):
            message = choice.get("message") or {}
            text = message.get("content")
            result.choices.append(Choice(text=text if isinstance(text, str) else None,
                                         truncated=choice.get("finish_reason") == "length"))
        return result

    async def aclose(self):
        for client in self.clients:
            await client.close()
