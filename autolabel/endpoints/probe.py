"""The Test button's probe: one minimal chat request and the model list, bounded in time and size.

Run by a worker (tasks.py, ``autolabel.test_endpoint``), never inside a web request. Redirects are not
followed (the address the policy checked is the one reached, and a key never follows a redirect elsewhere);
a body past ``llm.MAX_RESPONSE_BYTES`` is cut off and reported, and each of the two requests ends by its
deadline, ``LLM_ENDPOINT_TEST_TIMEOUT_SECONDS`` from its start to its last byte. The HTTP library's timeouts
count per read: an endpoint that sent a byte every 5 s kept one test going 142 s against 15. So the requests
run in an event loop under ``asyncio.timeout``, which cancels whatever step is under way (llm.py likewise).
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field

import httpx

from autolabel.jobs.llm import (MAX_RESPONSE_BYTES, connection_problem, deadline_problem, endpoint_name,
                                status_problem)


MAX_MODELS = 50


@dataclass
class ProbeResult:
    reply: str = ""
    models: list[str] = field(default_factory=list)
    latency_seconds: float | None = None
    error: str = ""


class _TooLarge(Exception):
    pass


async def _read(client: httpx.AsyncClient, method: str, url: str, endpoint: str, deadline: float, **kwargs) -> dict:
    """The JSON body of one request, whole within ``deadline`` seconds; raises RuntimeError with the reason."""
    body = bytearray()
    try:
        async with asyncio.timeout(deadline):
            async with client.stream(method, url, **kwargs) as response:
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_RESPONSE_BYTES:
                        raise _TooLarge
                if response.status_code >= 300:
                    message = bytes(body[:300]).decode(errors="replace")
                    raise RuntimeError(status_problem(response.status_code, message, endpoint, response))
    except _TooLarge:
        raise RuntimeError(f"response too large from {endpoint}: more than {MAX_RESPONSE_BYTES} bytes") from None
    except (TimeoutError, httpx.TimeoutException):
        raise RuntimeError(deadline_problem(endpoint, deadline)) from None
    except httpx.TransportError as error:
        raise RuntimeError(connection_problem(error, endpoint)) from None
    try:
        return json.loads(bytes(body))
    except ValueError:
        raise RuntimeError(f"unreadable response from {endpoint}: not JSON") from None


def probe(base_url: str, api_key: str, model: str, messages: list[dict], timeout: float,
          max_tokens: int = 64) -> ProbeResult:
    """Ask ``base_url`` for its models and one short completion of ``model``; the answer or the exact error.

    Each of the two requests ends within ``timeout`` seconds, whatever the endpoint sends."""
    return asyncio.run(_probe(base_url, api_key, model, messages, timeout, max_tokens))


async def _probe(base_url, api_key, model, messages, timeout, max_tokens) -> ProbeResult:
    endpoint = endpoint_name(base_url)
    root = base_url.rstrip("/")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    result = ProbeResult()
    async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, headers=headers) as client:
        try:
            listed = await _read(client, "GET", f"{root}/models", endpoint, timeout)
            data = listed.get("data") if isinstance(listed, dict) else None
            result.models = [str(item.get("id")) for item in (data or []) if isinstance(item, dict)][:MAX_MODELS]
        except RuntimeError as error:  # many servers list no models: say so, and still try the completion
            result.models = []
            result.error = f"models: {error}"
        body = {"model": model, "messages": messages, "max_tokens": max_tokens, "temperature": 0}
        started = time.monotonic()
        try:
            answer = await _read(client, "POST", f"{root}/chat/completions", endpoint, timeout, json=body)
        except RuntimeError as error:
            result.error = f"chat: {error}" + (f"; {result.error}" if result.error else "")
            return result
        result.latency_seconds = round(time.monotonic() - started, 3)
        try:
            result.reply = str(answer["choices"][0]["message"]["content"] or "")[:500]
        except (KeyError, IndexError, TypeError):
            result.error = f"chat: unreadable response from {endpoint}: no choices"
            result.latency_seconds = None
    return result
