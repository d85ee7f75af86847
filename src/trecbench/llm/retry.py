"""When to retry a failed model request, how long to wait, and how fast requests may start.

Written here, not taken from a library (reviewed for issue 23); `LLM._send` in llm/client.py runs the loop:
- litellm's retries (`num_retries`, the Router's) and the openai SDK's (`max_retries`, which reads
  Retry-After too) happen inside one call: the caller sees one attempt, while the call log and the tests
  count every one (tests/llm/test_llm.py: `attempts == 3`, "gave up after attempt 2"); the SDK retries
  OpenAI's out-of-credit 429 (`insufficient_quota`), which `classify` makes fatal; litellm's do not cover
  the openai transport, and the Router's cool-downs bench deployments by rules other than the Breaker's
  (see llm/transport.py).
- tenacity would drive only the loop: its wait strategies read no Retry-After and its predicates know no
  HTTP status, so `classify`, `retry_after` and `backoff_delay` would stay, plugged into it, beside the
  429 pause shared by every task (`_hold_until`) and the retry on another endpoint (`retry_elsewhere`).
- aiolimiter's `AsyncLimiter(1, 60 / rpm)` starts requests as `RateLimiter` does (measured: 8 waiting
  tasks at rpm 600 start 0.1 s apart with either, aiolimiter up to 7 ms later by the eighth as wake-ups
  add up); `RateLimiter` is ten lines on a fixed grid at 1.3 us a turn (aiolimiter 4.4 us), so the models
  extra carries no distribution for it.
"""
from __future__ import annotations

import asyncio
import random
import socket
import time
from email.utils import parsedate_to_datetime
from typing import Any, Literal

Verdict = Literal["retry", "item", "fatal"]

# Exception class names (litellm's and openai's) looked up along the MRO, so nothing here imports litellm.
_RETRY_NAMES = {"Timeout", "APITimeoutError", "APIConnectionError", "RateLimitError", "InternalServerError",
                "ServiceUnavailableError", "BadGatewayError", "TimeoutError", "ConnectionError",
                # an HTTP 200 whose body is not the JSON of a completion (empty, cut, a proxy's HTML page)
                "JSONDecodeError", "APIResponseValidationError"}
_ITEM_NAMES = {"ContextWindowExceededError", "ContentPolicyViolationError"}
_FATAL_NAMES = {"AuthenticationError", "PermissionDeniedError", "NotFoundError", "UnsupportedParamsError",
                "LiteLLMUnknownProvider"}
_FATAL_STATUS = {401, 402, 403, 404}
MAX_RETRY_AFTER = 300.0  # seconds; a longer Retry-After is treated as this long


def _names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def status_of(exc: BaseException) -> int | None:
    """The HTTP status an exception carries, if any."""
    code = getattr(exc, "status_code", None)
    if code is None:
        code = getattr(getattr(exc, "response", None), "status_code", None)
    try:
        return int(code) if code is not None else None
    except (TypeError, ValueError):
        return None


def out_of_quota(exc: BaseException) -> bool:
    """True for OpenAI's "out of credit" 429 (`insufficient_quota`), read from the error's code and body.

    The openai SDK's message does not name the code; it is in `.code`, `.type` or the JSON `.body`.
    """
    parts = [getattr(exc, "code", None), getattr(exc, "type", None), getattr(exc, "body", None), str(exc)]
    response = getattr(exc, "response", None)
    try:
        parts.append(getattr(response, "text", None))
    except Exception:  # a streamed or closed response may refuse to give its text
        pass
    return any("insufficient_quota" in (p if isinstance(p, str) else repr(p)) for p in parts if p is not None)


def missing_credentials(exc: BaseException) -> bool:
    """True when the request carried no API key: the openai SDK's "Missing credentials" (litellm passes it on as
    a 500), its "api_key client option must be set", or a server's 401 that says so."""
    text = str(exc)
    return "Missing credentials" in text or "api_key client option must be set" in text


def unreachable(exc: BaseException) -> str | None:
    """`connection refused` or `unknown host` when the request reached no server, read along the exception's
    causes (the SDKs wrap the socket's error twice or three times); None otherwise (a timeout, a reset
    connection or an HTTP error says a server may be there)."""
    seen: set[int] = set()
    error: BaseException | None = exc
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, ConnectionRefusedError):
            return "connection refused"
        if isinstance(error, socket.gaierror):
            return "unknown host"
        error = error.__cause__ or error.__context__
    return None


class FirstContact:
    """The rule that stops a run whose first calls all fail for a reason no retry fixes (nothing listens at
    the server's address, its host name does not resolve): until some server has answered, an unreachable
    server costs no request a failure row; once every deployment has failed `STRIKES` times that way and
    none has answered, the run stops. After the first answer a refused connection is a passing fault
    (a server restarting) and is retried as any other.

    `places` is the number of deployments; a failure whose deployment is unknown (litellm's Router) counts
    towards all of them together.
    """

    STRIKES = 3

    def __init__(self, places: int = 1):
        self.places = max(1, places)
        self.answered = False
        self._strikes: dict[int, int] = {}

    def answer(self) -> None:
        """A server answered (a reply, or any HTTP status): the address works."""
        self.answered = True

    def strike(self, place: int | None) -> bool:
        """An unreachable failure at deployment `place`; True when the run should stop now."""
        if self.answered:
            return False
        key = -1 if place is None else place
        self._strikes[key] = self._strikes.get(key, 0) + 1
        if all(self._strikes.get(i, 0) >= self.STRIKES for i in range(self.places)):
            return True
        return -1 in self._strikes and sum(self._strikes.values()) >= self.STRIKES * self.places


def classify(exc: BaseException) -> Verdict:
    """`retry` for rate limits, server errors, timeouts and lost connections; `item` for a problem with this
    one request (prompt too long, content refused, other 4xx); `fatal` when every call would fail alike
    (bad key, no permission, unknown model, unsupported parameter, or an unexpected error)."""
    names = _names(exc)
    if names & _ITEM_NAMES:
        return "item"
    if missing_credentials(exc):
        return "fatal"  # litellm reports the SDK's missing key as a 500; no retry brings a key
    if names & _FATAL_NAMES:
        return "fatal"
    status = status_of(exc)
    if status == 429 and out_of_quota(exc):
        return "fatal"  # OpenAI's "out of credit" is a 429 that no amount of waiting fixes
    if status is not None:
        if status in (408, 409, 425, 429) or status >= 500:
            return "retry"
        if status in _FATAL_STATUS:
            return "fatal"
        if 400 <= status < 500:
            return "item"
    if names & _RETRY_NAMES or isinstance(exc, (asyncio.TimeoutError, ConnectionError, TimeoutError)):
        return "retry"
    return "fatal"


def _header(headers: Any, name: str) -> str | None:
    if headers is None:
        return None
    try:
        value = headers.get(name)
    except AttributeError:
        return None
    return None if value is None else str(value)


def retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms`, or `Retry-After` as seconds or an HTTP date)."""
    for headers in (getattr(getattr(exc, "response", None), "headers", None),
                    getattr(exc, "litellm_response_headers", None), getattr(exc, "headers", None)):
        ms = _header(headers, "retry-after-ms")
        if ms is not None:
            try:
                return max(0.0, float(ms) / 1000.0)
            except ValueError:
                pass
        value = _header(headers, "retry-after")
        if value is None:
            continue
        try:
            return max(0.0, float(value))
        except ValueError:
            try:
                return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
            except (TypeError, ValueError, IndexError):
                continue
    return None


def backoff_delay(attempt: int, base: float, cap: float, server_wait: float | None = None,
                  rng: random.Random | None = None) -> float:
    """Seconds to wait after failed attempt number `attempt` (1-based).

    The server's Retry-After wins when given (plus a little jitter so waiting tasks do not return in a
    herd); otherwise exponential back-off `base * 2**(attempt-1)`, capped, with the upper half jittered.
    """
    r = rng or random
    if server_wait is not None:
        return min(server_wait, MAX_RETRY_AFTER) + r.uniform(0, min(base, 1.0))
    ceiling = min(cap, base * (2 ** (attempt - 1)))
    return ceiling / 2 + r.uniform(0, ceiling / 2)


class RateLimiter:
    """Spaces request starts evenly so that no more than `rpm` begin in any minute (one event loop)."""

    def __init__(self, rpm: float):
        if rpm <= 0:
            raise ValueError("rpm must be positive")
        self.interval = 60.0 / rpm
        self._next = 0.0

    async def wait(self) -> None:
        """Sleep until this request's turn; turns are handed out in call order."""
        now = time.monotonic()
        start = max(now, self._next)
        self._next = start + self.interval
        if start > now:
            await asyncio.sleep(start - now)
