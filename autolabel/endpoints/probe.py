"""The Test button's probe: one minimal chat request and the model list, bounded in time and size.

Run by a worker (tasks.py, ``autolabel.test_endpoint``), never inside a web request. Redirects are not
followed (the address the policy checked is the one reached, and a key never follows a redirect elsewhere);
a body past ``llm.MAX_RESPONSE_BYTES`` is cut off and reported, and each of the two requests waits at most
``LLM_ENDPOINT_TEST_TIMEOUT_SECONDS``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

import httpx

from autolabel.jobs.llm import MAX_RESPONSE_BYTES, connection_problem, endpoint_name, status_problem


MAX_MODELS = 50


@dataclass
class ProbeResult:
    reply: str = ""
    models: list[str] = field(default_factory=list)
    latency_seconds: float | None = None
    error: str = ""


class _TooLarge(Exception):
    pass


def _read(client: httpx.Client, method: str, url: str, endpoint: str, **kwargs) -> dict:
    """The JSON body of one request; raises RuntimeError with the reason in words."""
    try:
        with client.stream(method, url, **kwargs) as response:
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_RESPONSE_BYTES:
                    raise _TooLarge
            if response.status_code >= 300:
                message = bytes(body[:300]).decode(errors="replace")
                raise RuntimeError(status_problem(response.status_code, message, endpoint, response))
    except _TooLarge:
        raise RuntimeError(f"response too large from {endpoint}: more than {MAX_RESPONSE_BYTES} bytes") from None
    except httpx.TimeoutException:
        raise RuntimeError(f"timed out: {endpoint}") from None
    except httpx.TransportError as error:
        raise RuntimeError(connection_problem(error, endpoint)) from None
    try:
        return json.loads(bytes(body))
    except ValueError:
        raise RuntimeError(f"unreadable response from {endpoint}: not JSON") from None


def probe(base_url: str, api_key: str, model: str, messages: list[dict], timeout: float,
          max_tokens: int = 64) -> ProbeResult:
    """Ask ``base_url`` for its models and one short completion of ``model``; the answer or the exact error."""
    endpoint = endpoint_name(base_url)
    root = base_url.rstrip("/")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    result = ProbeResult()
    with httpx.Client(timeout=timeout, follow_redirects=False, headers=headers) as client:
        try:
            listed = _read(client, "GET", f"{root}/models", endpoint)
            data = listed.get("data") if isinstance(listed, dict) else None
            result.models = [str(item.get("id")) for item in (data or []) if isinstance(item, dict)][:MAX_MODELS]
        except RuntimeError as error:  # many servers list no models: say so, and still try the completion
            result.models = []
            result.error = f"models: {error}"
        body = {"model": model, "messages": messages, "max_tokens": max_tokens, "temperature": 0}
        started = time.monotonic()
        try:
            answer = _read(client, "POST", f"{root}/chat/completions", endpoint, json=body)
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
