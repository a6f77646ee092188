"""A small HTTP/1.1 client on asyncio streams, for the load generator.

The load test runs on the same two cores as the server it measures, so the
CPU its client spends per request is CPU the server does not get. httpx took
3.9 ms of CPU per decision there (docs/benchmarks.md); this client, which only
does what the simulated annotators need, takes a fraction of that. It keeps one
connection alive (reconnecting when the server closes it), keeps cookies like a
browser would for one host, sends forms, and reads Content-Length and chunked
bodies. Nothing else: no redirects followed, no TLS, no compression.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from http.cookies import SimpleCookie
from urllib.parse import urlencode, urlsplit


class Headers(dict):
    """Header names are case-insensitive (stored lower-case)."""

    def get(self, name, default=None):
        return super().get(name.lower(), default)

    def __getitem__(self, name):
        return super().__getitem__(name.lower())

    def __contains__(self, name):
        return super().__contains__(name.lower())


@dataclass
class Response:
    status_code: int
    headers: Headers
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


class ConnectionLost(Exception):
    """The server closed the connection before a whole response arrived."""


class LeanClient:
    def __init__(self, base_url: str, timeout: float = 30.0):
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname, parts.port or 80
        self.host_header = parts.netloc
        self.timeout = timeout
        self.cookies: dict[str, str] = {}
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()

    async def close(self):
        if self._writer is not None:
            self._writer.close()
            self._reader = self._writer = None

    async def request(self, method: str, path: str, *, data: dict | None = None, headers: dict | None = None,
                      json_body=None) -> Response:
        """``data``: a form (urlencoded); ``json_body``: any JSON value, sent as application/json."""
        body = urlencode(data).encode() if data is not None else b""
        if json_body is not None:
            body = json.dumps(json_body).encode()
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host_header}"]
        if self.cookies:
            lines.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        if data is not None:
            lines.append("Content-Type: application/x-www-form-urlencoded")
        elif json_body is not None:
            lines.append("Content-Type: application/json")
        if method != "GET":
            lines.append(f"Content-Length: {len(body)}")
        for name, value in (headers or {}).items():
            lines.append(f"{name}: {value}")
        raw = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
        # A kept-alive connection the server has closed meanwhile fails on first use: one fresh try.
        for fresh in (self._writer is None, True):
            if fresh:
                await self.close()
                self._reader, self._writer = await asyncio.wait_for(
                    asyncio.open_connection(self.host, self.port), self.timeout)
            try:
                self._writer.write(raw)
                response, keep_alive = await asyncio.wait_for(self._read_response(), self.timeout)
            except (ConnectionLost, ConnectionResetError, BrokenPipeError, asyncio.IncompleteReadError) as error:
                await self.close()
                if fresh:
                    raise ConnectionLost(str(error)) from error
                continue
            except BaseException:
                await self.close()
                raise
            if not keep_alive:
                await self.close()
            return response
        raise AssertionError("unreachable")

    async def _read_response(self) -> tuple[Response, bool]:
        reader = self._reader
        head = await reader.readuntil(b"\r\n\r\n") if not reader.at_eof() else b""
        if not head:
            raise ConnectionLost("no response")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        status = int(status_line.split(" ", 2)[1])
        headers = Headers()
        for line in header_lines:
            if not line:
                continue
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip()
            if name == "set-cookie":
                self._keep_cookie(value)
            headers[name] = value
        if headers.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                chunk = await reader.readexactly(size + 2)
                if size == 0:
                    break
                chunks.append(chunk[:-2])
            content = b"".join(chunks)
        elif "content-length" in headers:
            content = await reader.readexactly(int(headers["content-length"]))
        else:
            content = await reader.read()
            headers["connection"] = "close"
        keep_alive = headers.get("connection", "").lower() != "close" and status_line.startswith("HTTP/1.1")
        return Response(status, headers, content), keep_alive

    def _keep_cookie(self, header: str) -> None:
        cookie = SimpleCookie()
        cookie.load(header)
        for name, morsel in cookie.items():
            if morsel["max-age"] == "0" or (morsel["expires"] and "1970" in morsel["expires"]):
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = morsel.value
