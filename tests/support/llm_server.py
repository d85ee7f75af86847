"""A loopback OpenAI-compatible chat server whose replies each test scripts, for offline model-call tests.

    from llm_server import llm_server, ok, garbled, status    # the fixture and the behaviours

    def test_something(llm_server):
        llm_server.script(status(429, retry_after=0), ok('{"grade": 2}'))
        ...  # litellm model "openai/judge", api_base=llm_server.base_url, api_key="test"
        assert len(llm_server.requests) == 2

Each POST to `/v1/chat/completions` (or `/chat/completions`) takes the next scripted behaviour; once the
script is used up the `then=` behaviour answers, or a 500 saying the script ran out. A plain function
given to `script` answers every request instead: it receives the request body and returns a behaviour
or a reply text. Every request body is recorded (`.requests`, `.messages(i)`) at arrival, and the server
tracks how many requests are in flight at once (`.max_in_flight`).

It also serves OpenAI's batch interface: `POST /v1/files` (multipart upload), `POST /v1/batches`, `GET
/v1/batches` (list), `GET /v1/batches/{id}` and `GET /v1/files/{id}/content`. A batch is `in_progress`
while `.hold_batches` is set; otherwise the first look at it answers every line (each takes the next
scripted behaviour, as a live request would: a non-200 behaviour becomes a failed line) and completes it.
`.batches` holds every created batch, `.batch_delay` delays the reply to a create (after creating it);
with `.batch_key` set, the files and batches endpoints answer 401 to any other bearer key.

And Anthropic's, at `.anthropic_url` (the server root, as litellm's `anthropic/...` models take it): the
live `POST /v1/messages`, and the message batches `POST /v1/messages/batches`, `GET /v1/messages/batches`
(list, newest first, `limit` and `after_id`), `GET /v1/messages/batches/{id}` and the results at its
`results_url`. Every Anthropic request must carry `x-api-key: .anthropic_key` (else 401) and an
`anthropic-version`. A request reaches scripted behaviours and handlers in the chat shape (a system
message, then text messages), so one grader answers both APIs; the bodies as they came are in
`.anthropic_bodies` (live) and `.anthropic_batches[id]["requests"]`. `.hold_batches` and `.batch_delay`
work as for OpenAI's batches; `expired()`, `canceled()` and `result_line(text)` script a batch line.
"""
from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator, Union

import pytest

__all__ = [
    "Behaviour", "LLMServer", "llm_server", "ok", "garbled", "truncated", "slow", "status", "hang", "reasoning",
    "raw_body", "out_of_quota", "expired", "canceled", "result_line",
]


@dataclass(frozen=True)
class Behaviour:
    """How the server answers one request: wait `delay` seconds, then send `code` with a reply or an error."""

    code: int = 200
    text: str | None = None
    finish_reason: str = "stop"
    delay: float = 0.0
    hang: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None  # raw body sent as it is (any code); for errors a JSON error object is made when None
    reasoning: str | None = None  # the message's `reasoning_content`, as reasoning servers send it
    error_code: str | None = None  # the error object's `code` (e.g. insufficient_quota)
    usage: bool = True  # False: the completion has no `usage` (some local servers), the client counts
    result: str | None = None  # an Anthropic batch line's result type instead of a reply (expired, canceled)
    line: str | None = None  # the batch results line sent as it is, for this request


def ok(text: str, *, prompt_tokens: int | None = None, completion_tokens: int | None = None) -> Behaviour:
    """A normal reply with `text` as the message content."""
    return Behaviour(text=text, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)


def garbled(text: str = "Sure! Here is my assessment: it seems fairly relevant, I would say.") -> Behaviour:
    """A reply that is well-formed HTTP but whose content no JSON parser can read."""
    return Behaviour(text=text)


def truncated(text: str = '{"grade": 2, "reason": "the passage states the ans') -> Behaviour:
    """A reply cut off at the token limit: JSON that never closes, finish_reason `length`."""
    return Behaviour(text=text, finish_reason="length")


def slow(seconds: float, text: str) -> Behaviour:
    """A normal reply sent after `seconds`."""
    return Behaviour(text=text, delay=seconds)


def status(code: int, *, retry_after: float | None = None, retry_after_ms: int | None = None,
           message: str | None = None) -> Behaviour:
    """An HTTP error `code` with an OpenAI-style error body, optionally with Retry-After headers."""
    headers = {}
    if retry_after is not None:
        headers["Retry-After"] = f"{retry_after:g}"
    if retry_after_ms is not None:
        headers["retry-after-ms"] = str(retry_after_ms)
    return Behaviour(code=code, text=message, headers=headers)


def reasoning(text: str, thoughts: str) -> Behaviour:
    """A reply from a reasoning model: `thoughts` in `reasoning_content`, the answer in `content`."""
    return Behaviour(text=text, reasoning=thoughts)


def raw_body(body: str, code: int = 200) -> Behaviour:
    """Exactly `body` as the HTTP body (an empty or broken "200 OK", a proxy's HTML page)."""
    return Behaviour(code=code, body=body)


def out_of_quota() -> Behaviour:
    """OpenAI's 429 for an account without credit: code `insufficient_quota`, a message that does not say so."""
    return Behaviour(code=429, text="You exceeded your current quota, please check your plan and billing details.",
                     error_code="insufficient_quota")


def expired() -> Behaviour:
    """An Anthropic batch line whose request expired before it was processed."""
    return Behaviour(result="expired")


def canceled() -> Behaviour:
    """An Anthropic batch line whose request was canceled before it was processed."""
    return Behaviour(result="canceled")


def result_line(text: str) -> Behaviour:
    """Exactly `text` as this request's line of a batch's results (a garbled line)."""
    return Behaviour(line=text)


def hang(seconds: float = 30.0) -> Behaviour:
    """Accept the request and never answer (until `seconds` pass or the server stops)."""
    return Behaviour(hang=True, delay=seconds)


Handler = Callable[[dict], Union[Behaviour, str]]
_DEFAULTABLE = (garbled, truncated, hang)

_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 429: "rate_limit_error"}


def _words(value: Any) -> int:
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):
        return sum(_words(v) for v in value)
    if isinstance(value, dict):
        return _words(value.get("content") or value.get("text") or "")
    return 0


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # the default 5 drops SYNs when 16+ clients connect at once (1 s+ stalls)
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out and hung up is part of the tests, not a server failure worth a traceback.
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class LLMServer:
    """The running server: `.base_url`, `.script(...)`, `.requests`, `.max_in_flight`, `.close()`."""

    def __init__(self, port: int = 0) -> None:  # a port of a server that stopped: it is back
        self._lock = threading.Lock()
        self._queue: deque[Behaviour] = deque()
        self._then: Behaviour | None = None
        self._handler: Handler | None = None
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self.requests: list[dict] = []
        self.paths: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict] = {}
        self.hold_batches = False
        self.batch_delay = 0.0
        self.batch_key: str | None = None  # set: OpenAI's files and batches endpoints take only this key
        self.anthropic_key = "test"
        self.anthropic_bodies: list[dict] = []
        self.anthropic_batches: dict[str, dict] = {}
        self._httpd = _Server(("127.0.0.1", port), self._handler_class())
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.anthropic_url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01},
                                        name="llm-server", daemon=True)
        self._thread.start()

    # -- scripting ----------------------------------------------------------------------------------
    def script(self, *behaviours: Behaviour | Handler, then: Behaviour | str | None = None) -> "LLMServer":
        """Queue behaviours for the next requests (or give one function answering all); returns self.

        The argument-free behaviours may be passed uncalled: `script(garbled, hang)`.
        """
        behaviours = tuple(b() if b in _DEFAULTABLE else b for b in behaviours)  # type: ignore[operator]
        then = then() if then in _DEFAULTABLE else then  # type: ignore[operator]
        with self._lock:
            if len(behaviours) == 1 and not isinstance(behaviours[0], Behaviour) and callable(behaviours[0]):
                self._handler = behaviours[0]
                self._queue.clear()
            else:
                self._handler = None
                self._queue.extend(behaviours)  # type: ignore[arg-type]
            self._then = ok(then) if isinstance(then, str) else then
        return self

    def reset(self) -> None:
        """Forget the script, the recorded requests and the in-flight peak."""
        with self._lock:
            self._queue.clear()
            self._then = None
            self._handler = None
            self.requests.clear()
            self.paths.clear()
            self.max_in_flight = 0

    def messages(self, i: int = -1) -> list[dict]:
        """The `messages` of the i-th recorded request."""
        return self.requests[i]["messages"]

    @property
    def remaining(self) -> int:
        """Scripted behaviours not used yet."""
        return len(self._queue)

    def close(self) -> None:
        """Stop serving; hanging requests are released."""
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> "LLMServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- serving ------------------------------------------------------------------------------------
    def _next(self, body: dict) -> Behaviour:
        with self._lock:
            self.requests.append(body)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            handler = self._handler
            if handler is None:
                if self._queue:
                    return self._queue.popleft()
                if self._then is not None:
                    return self._then
                return Behaviour(code=500, text="llm_server: no scripted reply left")
        answer = handler(body)
        return ok(answer) if isinstance(answer, str) else answer

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _completion(self, body: dict, b: Behaviour) -> dict:
        prompt = b.prompt_tokens if b.prompt_tokens is not None else 3 + _words(body.get("messages", []))
        completion = b.completion_tokens if b.completion_tokens is not None else max(1, _words(b.text or ""))
        return {
            "id": f"chatcmpl-test{next(self._ids):06d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "unknown"),
            "system_fingerprint": "fp_llm_server",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": b.text, "refusal": None,
                            **({"reasoning_content": b.reasoning} if b.reasoning is not None else {})},
                "logprobs": None,
                "finish_reason": b.finish_reason,
            }],
            **({"usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                          "total_tokens": prompt + completion}} if b.usage else {}),
        }

    # -- the batch interface -------------------------------------------------------------------------
    def _upload(self, content_type: str, raw: bytes) -> dict:
        import email

        message = email.message_from_bytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw)
        data = next(p.get_payload(decode=True) for p in message.get_payload()
                    if p.get_param("name", header="content-disposition") == "file")
        with self._lock:
            file_id = f"file-{next(self._ids):06d}"
            self.files[file_id] = data
        return {"id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                "filename": "input.jsonl", "purpose": "batch", "status": "processed"}

    def _create_batch(self, body: dict) -> dict:
        with self._lock:
            batch_id = f"batch_{next(self._ids):06d}"
            lines = self.files[body["input_file_id"]].decode("utf-8").splitlines()
            self.batches[batch_id] = {
                "id": batch_id, "object": "batch", "endpoint": body["endpoint"], "errors": None,
                "input_file_id": body["input_file_id"], "completion_window": body["completion_window"],
                "status": "in_progress", "output_file_id": None, "error_file_id": None,
                "created_at": int(time.time()), "metadata": body.get("metadata"),
                "request_counts": {"total": len(lines), "completed": 0, "failed": 0}}
            return dict(self.batches[batch_id])

    def _batch(self, batch_id: str) -> dict | None:
        with self._lock:
            batch = self.batches.get(batch_id)
            if batch is None or batch["status"] != "in_progress" or self.hold_batches:
                return None if batch is None else dict(batch)
            lines = [json.loads(x) for x in self.files[batch["input_file_id"]].decode("utf-8").splitlines() if x]
        answers, errors = [], []
        for line in lines:
            b = self._next(line["body"])
            self._done()
            response = ({"status_code": 200, "request_id": f"req_{next(self._ids)}",
                         "body": self._completion(line["body"], b)} if b.code == 200 else
                        {"status_code": b.code, "request_id": f"req_{next(self._ids)}",
                         "body": {"error": {"message": b.text or f"scripted error {b.code}"}}})
            (answers if b.code == 200 else errors).append(json.dumps(
                {"id": f"batch_req_{next(self._ids)}", "custom_id": line["custom_id"], "response": response,
                 "error": None}))
        with self._lock:
            for name, rows in (("output_file_id", answers), ("error_file_id", errors)):
                if rows:
                    file_id = f"file-{next(self._ids):06d}"
                    self.files[file_id] = ("\n".join(rows) + "\n").encode("utf-8")
                    batch[name] = file_id
            batch["status"] = "completed"
            batch["request_counts"] = {"total": len(lines), "completed": len(answers), "failed": len(errors)}
            return dict(batch)

    # -- Anthropic's messages and message batches -------------------------------------------------------
    @staticmethod
    def _as_chat(params: dict) -> dict:
        """An Anthropic request in the chat shape handlers read: the system prompt, then text messages."""
        def text(content: Any) -> str:
            if isinstance(content, str):
                return content
            return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))

        messages = [{"role": "system", "content": text(params["system"])}] if params.get("system") else []
        messages += [{"role": m["role"], "content": text(m.get("content"))} for m in params.get("messages", [])]
        return {**{k: v for k, v in params.items() if k not in ("system", "messages")}, "messages": messages}

    def _message(self, chat: dict, b: Behaviour) -> dict:
        c = self._completion(chat, b)
        usage = c.get("usage") or {}
        return {"id": f"msg_test{next(self._ids):06d}", "type": "message", "role": "assistant",
                "model": chat.get("model", "unknown"), "content": [{"type": "text", "text": b.text or ""}],
                "stop_reason": "max_tokens" if b.finish_reason == "length" else "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": usage.get("prompt_tokens", 0),
                          "output_tokens": usage.get("completion_tokens", 0)}}

    @staticmethod
    def _anthropic_error(code: int, message: str) -> str:
        return json.dumps({"type": "error", "error": {"type": _ERROR_TYPES.get(code, "api_error"),
                                                      "message": message}})

    @staticmethod
    def _stamp(seconds: float = 0.0) -> str:
        from datetime import datetime, timezone

        return datetime.fromtimestamp(time.time() + seconds, timezone.utc).isoformat().replace("+00:00", "Z")

    def _create_message_batch(self, body: dict, headers: dict) -> dict:
        with self._lock:
            batch_id = f"msgbatch_{next(self._ids):06d}"
            requests = body["requests"]
            self.anthropic_batches[batch_id] = {
                "batch": {"id": batch_id, "type": "message_batch", "processing_status": "in_progress",
                          "request_counts": {"processing": len(requests), "succeeded": 0, "errored": 0,
                                             "canceled": 0, "expired": 0},
                          "ended_at": None, "created_at": self._stamp(), "expires_at": self._stamp(86400),
                          "archived_at": None, "cancel_initiated_at": None, "results_url": None},
                "requests": requests, "headers": headers, "results": b""}
            return dict(self.anthropic_batches[batch_id]["batch"])

    def _message_batch(self, batch_id: str) -> dict | None:
        with self._lock:
            entry = self.anthropic_batches.get(batch_id)
            if entry is None or entry["batch"]["processing_status"] != "in_progress" or self.hold_batches:
                return None if entry is None else dict(entry["batch"])
            requests = list(entry["requests"])
        lines, counts = [], {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for request in requests:
            chat = self._as_chat(request["params"])
            b = self._next(chat)
            self._done()
            if b.result is not None:
                kind, result = b.result, {"type": b.result}
            elif b.code != 200:
                kind, result = "errored", {"type": "errored", "error": json.loads(
                    self._anthropic_error(b.code, b.text or f"scripted error {b.code}"))}
            else:
                kind, result = "succeeded", {"type": "succeeded", "message": self._message(chat, b)}
            counts[kind] += 1
            lines.append(b.line if b.line is not None else json.dumps({"custom_id": request["custom_id"],
                                                                       "result": result}))
        with self._lock:
            entry["results"] = ("\n".join(lines) + "\n").encode("utf-8")
            entry["batch"].update(processing_status="ended", request_counts=counts, ended_at=self._stamp(),
                                  results_url=f"{self.anthropic_url}/v1/messages/batches/{batch_id}/results")
            return dict(entry["batch"])

    def _list_message_batches(self, query: dict[str, list[str]]) -> dict:
        with self._lock:
            newest = [dict(e["batch"]) for e in reversed(self.anthropic_batches.values())]
        after = (query.get("after_id") or [None])[0]
        if after is not None:
            ids = [b["id"] for b in newest]
            newest = newest[ids.index(after) + 1:] if after in ids else []
        limit = int((query.get("limit") or ["20"])[0])
        page = newest[:limit]
        return {"data": page, "has_more": len(newest) > limit, "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None}

    def _anthropic(self, method: str, path: str, query: dict[str, list[str]], headers: Any,
                   raw: bytes) -> tuple[int, str, bool]:
        """(status, body, whether the body is JSONL) of an Anthropic request."""
        if headers.get("x-api-key") != self.anthropic_key:
            return 401, self._anthropic_error(401, "invalid x-api-key"), False
        if not headers.get("anthropic-version"):
            return 400, self._anthropic_error(400, "anthropic-version: header is required"), False
        parts = path.split("/")
        if method == "POST" and path == "/v1/messages/batches":
            created = self._create_message_batch(json.loads(raw), {k.lower(): v for k, v in headers.items()})
            self._stopping.wait(self.batch_delay)
            return 200, json.dumps(created), False
        if method == "GET" and path == "/v1/messages/batches":
            return 200, json.dumps(self._list_message_batches(query)), False
        if method == "GET" and len(parts) == 5 and path.startswith("/v1/messages/batches/"):
            found = self._message_batch(parts[-1])
            if found is not None:
                return 200, json.dumps(found), False
        if method == "GET" and len(parts) == 6 and parts[-1] == "results" and parts[-2] in self.anthropic_batches:
            entry = self.anthropic_batches[parts[-2]]
            if entry["batch"]["processing_status"] == "ended":
                return 200, entry["results"].decode("utf-8"), True
        return 404, self._anthropic_error(404, f"no route {method} {path}"), False

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real APIs do
            disable_nagle_algorithm = True  # headers and body are separate writes: no 40 ms delayed-ACK stall

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, code: int, payload: str, headers: dict[str, str] | None = None) -> None:
                data = payload.encode("utf-8")
                headers = dict(headers or {})
                self.send_response(code)
                self.send_header("Content-Type", headers.pop("Content-Type", "application/json"))
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _send_anthropic(self, method: str, raw: bytes = b"") -> None:
                from urllib.parse import parse_qs, urlsplit

                url = urlsplit(self.path)
                code, payload, jsonl = server._anthropic(method, url.path.rstrip("/"), parse_qs(url.query),
                                                         self.headers, raw)
                self._send(code, payload, {"Content-Type": "application/x-jsonl"} if jsonl else None)

            def do_GET(self) -> None:
                path = self.path.split("?")[0].rstrip("/")
                parts = path.split("/")
                found: Any = None
                if path.startswith("/v1/messages"):
                    self._send_anthropic("GET")
                    return
                if self._refused():
                    return
                if path == "/v1/batches":
                    with server._lock:
                        found = {"object": "list", "data": [dict(b) for b in server.batches.values()],
                                 "has_more": False}
                elif path.startswith("/v1/batches/"):
                    found = server._batch(parts[-1])
                elif path.startswith("/v1/files/") and parts[-1] == "content" and parts[-2] in server.files:
                    data = server.files[parts[-2]]
                    self.send_response(200)
                    self.send_header("Content-Type", "application/octet-stream")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if found is None:
                    self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
                else:
                    self._send(200, json.dumps(found))

            def _live_message(self, raw: bytes) -> None:
                if self.headers.get("x-api-key") != server.anthropic_key:
                    self._send(401, server._anthropic_error(401, "invalid x-api-key"))
                    return
                body = json.loads(raw or b"{}")
                server.anthropic_bodies.append(body)
                server.paths.append(self.path)
                chat = server._as_chat(body)
                b = server._next(chat)
                try:
                    if b.delay:
                        server._stopping.wait(b.delay)
                    if b.code != 200:
                        self._send(b.code, server._anthropic_error(b.code, b.text or f"scripted error {b.code}"),
                                   b.headers)
                    else:
                        self._send(200, json.dumps(server._message(chat, b)), b.headers)
                finally:
                    server._done()

            def _refused(self) -> bool:
                """OpenAI's 401 for a files or batches request without `.batch_key` (when it is set)."""
                path = self.path.split("?")[0]
                if server.batch_key is None or not path.startswith(("/v1/files", "/v1/batches")):
                    return False
                if self.headers.get("Authorization") == f"Bearer {server.batch_key}":
                    return False
                self._send(401, json.dumps({"error": {"message": "Incorrect API key provided.",
                                                      "type": "invalid_request_error", "code": "invalid_api_key"}}))
                return True

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self._refused():
                    return
                if self.path.rstrip("/") == "/v1/files":
                    self._send(200, json.dumps(server._upload(self.headers.get("Content-Type", ""), raw)))
                    return
                if self.path.rstrip("/") == "/v1/messages/batches":
                    self._send_anthropic("POST", raw)
                    return
                if self.path.rstrip("/") == "/v1/messages":
                    self._live_message(raw)
                    return
                if self.path.rstrip("/") == "/v1/batches":
                    created = server._create_batch(json.loads(raw))
                    server._stopping.wait(server.batch_delay)
                    self._send(200, json.dumps(created))
                    return
                if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                    self._send(404, json.dumps({"error": {"message": f"no route {self.path}",
                                                          "type": "not_found_error"}}))
                    return
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._send(400, json.dumps({"error": {"message": "body is not JSON"}}))
                    return
                server.paths.append(self.path)
                b = server._next(body)
                try:
                    if b.hang:
                        server._stopping.wait(b.delay)
                        self.close_connection = True
                        return
                    if b.delay:
                        server._stopping.wait(b.delay)
                    if b.body is not None:
                        self._send(b.code, b.body, b.headers)
                    elif b.code != 200:
                        payload = json.dumps({"error": {
                            "message": b.text or f"scripted error {b.code}",
                            "type": b.error_code or _ERROR_TYPES.get(b.code, "server_error"),
                            "param": None, "code": b.error_code}})
                        self._send(b.code, payload, b.headers)
                    else:
                        self._send(200, json.dumps(server._completion(body, b)), b.headers)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client gave up (timeout): nothing to answer
                finally:
                    server._done()

        return Handler


@pytest.fixture
def llm_server() -> Iterator[LLMServer]:
    """A fresh loopback chat server for one test."""
    server = LLMServer()
    try:
        yield server
    finally:
        server.close()
