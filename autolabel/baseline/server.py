"""An offline, OpenAI-compatible HTTP server that answers with the baseline judge.

Endpoints (the subset the pre-labeler uses):

- ``POST /v1/chat/completions`` (``n``, ``seed``, ``usage``; sample i of a request is judged with seed ``seed + i``)
- ``GET  /v1/models``
- ``POST /v1/files`` (multipart, purpose=batch), ``GET /v1/files/{id}``, ``GET /v1/files/{id}/content``
- ``POST /v1/batches``, ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``

and, for tests and benchmarks, ``GET /_control/stats`` (requests counted by kind)
and ``POST /_control/config`` (change the delay and the faults of a running server).

Faults are injected on a deterministic schedule so a test knows what happens:
``{"429": {"every": 3}}`` answers every third chat request with 429 and a
``Retry-After`` header; ``{"first": N}`` hits the first N requests. Kinds:
``429``, ``500``, ``timeout`` (answers only after ``timeout_delay`` seconds),
``garbage`` (a 200 whose body is not JSON), ``truncated`` (the reply is cut in the middle of a marker, finish_reason=length),
``malformed`` (chatter, a missing marker and an unknown tag), ``language`` (the
tags written with accented vowels, as a model replying in another language might: no tag of any protocol). In a batch, 429/500/timeout faults put the line
into the batch's error file.

Token counts are estimates (words × 4/3), enough to exercise the accounting.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from autolabel.extraction import triplets as extraction
from . import judge

FAULT_KINDS = ("429", "500", "timeout", "garbage", "truncated", "malformed", "language")
MODEL_NAME = "baseline-lexical"
_ACCENTED = str.maketrans("aeiou", "àéìòù")
_MARKER_CONTENT = re.compile(r"(<s\d+>)(.*?)(</s\d+>)")


def estimate_tokens(text: str) -> int:
    return max(1, round(len(text.split()) * 4 / 3))


def parse_fault(spec: str) -> tuple[str, dict]:
    """``429=every:3`` -> ("429", {"every": 3})."""
    try:
        kind, rule = spec.split("=", 1)
        mode, count = rule.split(":", 1)
        if kind not in FAULT_KINDS or mode not in ("every", "first") or int(count) < 1:
            raise ValueError
    except ValueError:
        raise ValueError(f"fault {spec!r}: expected KIND=every:N or KIND=first:N, KIND one of {', '.join(FAULT_KINDS)}") from None
    return kind, {mode: int(count)}


class BaselineState:
    def __init__(self, delay=0.0, faults=None, retry_after=1.0, timeout_delay=30.0, batch_delay=0.2):
        self.lock = threading.Lock()
        self.delay = delay
        self.faults = dict(faults or {})
        self.retry_after = retry_after
        self.timeout_delay = timeout_delay
        self.batch_delay = batch_delay
        self.counter = 0
        self.stats = {"chat_requests": 0, "choices": 0, "faults": {}, "batch_lines": 0, "batches": 0, "files": 0,
                      "in_flight": 0, "max_in_flight": 0}
        self.files: dict[str, dict] = {}
        self.batches: dict[str, dict] = {}

    def configure(self, config: dict):
        with self.lock:
            if "delay" in config:
                self.delay = float(config["delay"])
            if "faults" in config:
                faults = {}
                for kind, rule in (config["faults"] or {}).items():
                    if kind not in FAULT_KINDS:
                        raise ValueError(f"unknown fault {kind!r}")
                    faults[kind] = {k: int(v) for k, v in rule.items()}
                self.faults = faults
                self.counter = 0
            if "retry_after" in config:
                self.retry_after = float(config["retry_after"])
            if "timeout_delay" in config:
                self.timeout_delay = float(config["timeout_delay"])
            if config.get("reset_stats"):
                self.stats = {"chat_requests": 0, "choices": 0, "faults": {}, "batch_lines": 0, "batches": 0, "files": 0,
                              "in_flight": 0, "max_in_flight": 0}

    def next_fault(self) -> str | None:
        with self.lock:
            self.counter += 1
            number = self.counter
            for kind in FAULT_KINDS:
                rule = self.faults.get(kind)
                if not rule:
                    continue
                if ("every" in rule and number % rule["every"] == 0) or ("first" in rule and number <= rule["first"]):
                    self.stats["faults"][kind] = self.stats["faults"].get(kind, 0) + 1
                    return kind
        return None

    # -- chat completions --------------------------------------------------
    def completion(self, body: dict, fault: str | None) -> dict:
        messages = body.get("messages") or []
        prompt = "\n".join(str(m.get("content") or "") for m in messages if isinstance(m, dict))
        n = int(body.get("n") or 1)
        seed = int(body.get("seed") or 0)
        choices, completion_tokens = [], 0
        for index in range(n):
            # Triplet extraction and severity prompts get the transparent rules of autolabel/extraction/triplets.py.
            if extraction.is_extraction_prompt(prompt):
                text = extraction.baseline_answer(prompt)
            elif extraction.is_severity_prompt(prompt):
                text = extraction.baseline_severity_answer(prompt)
            else:
                text = judge.answer(prompt, seed + index)
            finish = "stop"
            if fault == "truncated":
                text, finish = text[: max(1, len(text) // 2 + 3)], "length"
            elif fault == "malformed":
                lines = text.splitlines()
                if lines:
                    lines[0] = re.sub(r">[^<]*<", ">definitely-true<", lines[0], count=1)
                    lines = lines[:-1] if len(lines) > 1 else lines
                text = "Sure! Here is my analysis of each sentence:\n" + "\n".join(lines) + "\nHope this helps."
            elif fault == "language":
                text = _MARKER_CONTENT.sub(lambda m: m.group(1) + m.group(2).translate(_ACCENTED) + m.group(3), text)
            completion_tokens += estimate_tokens(text)
            choices.append({"index": index, "message": {"role": "assistant", "content": text}, "finish_reason": finish,
                            "logprobs": None})
        with self.lock:
            self.stats["choices"] += n
        prompt_tokens = estimate_tokens(prompt)
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:20]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or MODEL_NAME,
            "choices": choices,
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }

    # -- files and batches ---------------------------------------------------
    def add_file(self, content: bytes, filename: str, purpose: str) -> dict:
        file_id = f"file-{uuid.uuid4().hex[:24]}"
        record = {"id": file_id, "object": "file", "bytes": len(content), "created_at": int(time.time()),
                  "filename": filename, "purpose": purpose, "status": "processed"}
        with self.lock:
            self.files[file_id] = {"meta": record, "content": content}
            self.stats["files"] += 1
        return record

    def create_batch(self, body: dict) -> dict:
        input_id = body.get("input_file_id")
        if input_id not in self.files:
            raise KeyError(input_id)
        batch_id = f"batch_{uuid.uuid4().hex[:24]}"
        batch = {
            "id": batch_id, "object": "batch", "endpoint": body.get("endpoint", "/v1/chat/completions"),
            "errors": None, "input_file_id": input_id, "completion_window": body.get("completion_window", "24h"),
            "status": "validating", "output_file_id": None, "error_file_id": None,
            "created_at": int(time.time()), "in_progress_at": None, "expires_at": None, "finalizing_at": None,
            "completed_at": None, "failed_at": None, "expired_at": None, "cancelling_at": None, "cancelled_at": None,
            "request_counts": {"total": 0, "completed": 0, "failed": 0}, "metadata": body.get("metadata"),
        }
        with self.lock:
            self.batches[batch_id] = batch
            self.stats["batches"] += 1
        threading.Thread(target=self._run_batch, args=(batch_id,), daemon=True).start()
        return dict(batch)

    def _run_batch(self, batch_id: str):
        batch = self.batches[batch_id]
        lines = self.files[batch["input_file_id"]]["content"].decode("utf-8").splitlines()
        lines = [line for line in lines if line.strip()]
        time.sleep(self.batch_delay)
        with self.lock:
            batch.update(status="in_progress", in_progress_at=int(time.time()))
            batch["request_counts"]["total"] = len(lines)
        out, err = [], []
        for line in lines:
            if batch["status"] == "cancelling":
                break
            try:
                request = json.loads(line)
                custom_id = request["custom_id"]
                body = request["body"]
            except (ValueError, KeyError, TypeError) as error:
                err.append(json.dumps({"id": f"batch_req_{uuid.uuid4().hex[:16]}", "custom_id": None, "response": None,
                                       "error": {"code": "invalid_request", "message": str(error)}}))
                with self.lock:
                    batch["request_counts"]["failed"] += 1
                continue
            fault = self.next_fault()
            with self.lock:
                self.stats["batch_lines"] += 1
            if fault in ("429", "500", "timeout"):
                status = 429 if fault == "429" else 500
                err.append(json.dumps({"id": f"batch_req_{uuid.uuid4().hex[:16]}", "custom_id": custom_id,
                                       "response": {"status_code": status, "request_id": uuid.uuid4().hex,
                                                    "body": {"error": {"message": f"injected {fault}", "type": "server_error"}}},
                                       "error": None}))
                with self.lock:
                    batch["request_counts"]["failed"] += 1
                continue
            completion = self.completion(body, fault)
            out.append(json.dumps({"id": f"batch_req_{uuid.uuid4().hex[:16]}", "custom_id": custom_id,
                                   "response": {"status_code": 200, "request_id": uuid.uuid4().hex, "body": completion},
                                   "error": None}))
            with self.lock:
                batch["request_counts"]["completed"] += 1
        with self.lock:
            batch.update(status="finalizing", finalizing_at=int(time.time()))
        output = self.add_file(("\n".join(out) + "\n").encode() if out else b"", f"{batch_id}_output.jsonl", "batch_output")
        errors = self.add_file(("\n".join(err) + "\n").encode() if err else b"", f"{batch_id}_error.jsonl", "batch_output")
        with self.lock:
            batch["output_file_id"] = output["id"] if out else None
            batch["error_file_id"] = errors["id"] if err else None
            if batch["status"] == "cancelling":
                batch.update(status="cancelled", cancelled_at=int(time.time()))
            else:
                batch.update(status="completed", completed_at=int(time.time()))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "BaselineLLM/1.0"
    state: BaselineState  # set on the subclass made by make_server

    def log_message(self, format, *args):  # quiet: tests and benchmarks send thousands of requests
        pass

    def _send(self, status: int, payload, headers=None, raw: bytes | None = None, content_type="application/json"):
        data = raw if raw is not None else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, headers=None):
        self._send(status, {"error": {"message": message, "type": "invalid_request_error" if status < 500 else "server_error",
                                      "code": str(status)}}, headers)

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self):
        path = self.path.split("?", 1)[0].rstrip("/")
        state = self.state
        if path == "/v1/models":
            return self._send(200, {"object": "list", "data": [{"id": MODEL_NAME, "object": "model", "owned_by": "baseline"}]})
        if path == "/_control/stats":
            with state.lock:
                return self._send(200, json.loads(json.dumps(state.stats)))
        match = re.fullmatch(r"/v1/files/([\w-]+)(/content)?", path)
        if match:
            record = state.files.get(match.group(1))
            if record is None:
                return self._error(404, "No such file")
            if match.group(2):
                return self._send(200, None, raw=record["content"], content_type="application/octet-stream")
            return self._send(200, record["meta"])
        match = re.fullmatch(r"/v1/batches/([\w-]+)", path)
        if match:
            batch = state.batches.get(match.group(1))
            if batch is None:
                return self._error(404, "No such batch")
            with state.lock:
                return self._send(200, json.loads(json.dumps(batch)))
        return self._error(404, f"Unknown path {path}")

    def _chat(self, state, raw):
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return self._error(400, "The body is not JSON")
        if not isinstance(body.get("messages"), list):
            return self._error(400, "messages is required")
        fault = state.next_fault()
        with state.lock:
            state.stats["chat_requests"] += 1
            delay = state.delay
        if fault == "timeout":
            time.sleep(state.timeout_delay)
        elif delay:
            time.sleep(delay)
        if fault == "429":
            return self._error(429, "Rate limit reached (injected)", {"Retry-After": f"{state.retry_after:g}"})
        if fault == "500":
            return self._error(500, "Internal error (injected)")
        if fault == "garbage":
            return self._send(200, None, raw=b"<html>upstream proxy error</html>", content_type="application/json")
        return self._send(200, state.completion(body, fault))

    def do_POST(self):
        path = self.path.split("?", 1)[0].rstrip("/")
        state = self.state
        raw = self._body()
        if path == "/v1/chat/completions":
            with state.lock:
                state.stats["in_flight"] += 1
                state.stats["max_in_flight"] = max(state.stats["max_in_flight"], state.stats["in_flight"])
            try:
                return self._chat(state, raw)
            finally:
                with state.lock:
                    state.stats["in_flight"] -= 1
        if path == "/v1/files":
            content_type = self.headers.get("Content-Type", "")
            message = BytesParser(policy=HTTP).parsebytes(
                f"Content-Type: {content_type}\r\n\r\n".encode() + raw
            )
            fields, upload, filename = {}, None, "upload.jsonl"
            for part in message.iter_parts():
                name = part.get_param("name", header="content-disposition")
                if part.get_filename() or name == "file":
                    upload = part.get_payload(decode=True) or b""
                    filename = part.get_filename() or filename
                else:
                    fields[name] = (part.get_payload(decode=True) or b"").decode()
            if upload is None:
                return self._error(400, "file is required")
            return self._send(200, state.add_file(upload, filename, fields.get("purpose", "batch")))
        if path == "/v1/batches":
            try:
                return self._send(200, state.create_batch(json.loads(raw or b"{}")))
            except KeyError:
                return self._error(404, "No such input file")
            except ValueError:
                return self._error(400, "The body is not JSON")
        match = re.fullmatch(r"/v1/batches/([\w-]+)/cancel", path)
        if match:
            batch = state.batches.get(match.group(1))
            if batch is None:
                return self._error(404, "No such batch")
            with state.lock:
                if batch["status"] in ("validating", "in_progress"):
                    batch.update(status="cancelling", cancelling_at=int(time.time()))
                return self._send(200, json.loads(json.dumps(batch)))
        if path == "/_control/config":
            try:
                state.configure(json.loads(raw or b"{}"))
            except (ValueError, TypeError, AttributeError) as error:
                return self._error(400, str(error))
            return self._send(200, {"ok": True})
        return self._error(404, f"Unknown path {path}")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024
    allow_reuse_address = True


def make_server(host="127.0.0.1", port=8765, **state_options) -> Server:
    state = BaselineState(**state_options)
    handler = type("BoundHandler", (Handler,), {"state": state})
    server = Server((host, port), handler)
    server.state = state
    return server
