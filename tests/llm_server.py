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
`.batches` holds every created batch, `.batch_delay` delays the reply to a create (after creating it).
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
    "raw_body", "out_of_quota",
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
        self._httpd = _Server(("127.0.0.1", port), self._handler_class())
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
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

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real APIs do
            disable_nagle_algorithm = True  # headers and body are separate writes: no 40 ms delayed-ACK stall

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, code: int, payload: str, headers: dict[str, str] | None = None) -> None:
                data = payload.encode("utf-8")
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                path = self.path.split("?")[0].rstrip("/")
                parts = path.split("/")
                found: Any = None
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

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path.rstrip("/") == "/v1/files":
                    self._send(200, json.dumps(server._upload(self.headers.get("Content-Type", ""), raw)))
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
