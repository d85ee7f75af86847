"""How a request reaches a model: through litellm (any provider, its Router for several deployments), or
straight through the openai SDK for OpenAI-compatible servers named by an api_base (vLLM, llama.cpp, TGI...).

litellm 1.110 spends ~4-6 ms of CPU per call and hops through a thread pool; against a 200 ms server at
concurrency 16 that caps a run near 70% of the ideal rate. The openai SDK (which litellm itself wraps for
these servers) costs ~2 ms, so `transport="auto"` uses it for `openai/` and `hosted_vllm/` models with an
api_base. Everything else -- provider resolution, prices, token counts, other providers -- stays litellm's.

Every client here is made with its own retries off (`max_retries=0`, `num_retries=0`, no Router cool-downs):
one error reaches the caller per attempt, and llm/client.py retries by the policy of llm/retry.py, which
says why that policy is not litellm's, the openai SDK's or tenacity's.
"""
from __future__ import annotations

import asyncio
import itertools
import sys
import time
import warnings
from functools import lru_cache
from importlib.util import find_spec
from typing import Any, Callable, Mapping, Protocol, Sequence

from trecbench.llm.config import TRANSPORTS
from trecbench.llm.request import Endpoint, sdk_endpoints

__all__ = ["Transport", "LiteLLMTransport", "OpenAITransport", "Breaker", "deadline", "make_transport", "sdk_endpoints",
           "Unsent", "TRANSPORTS", "tls_context"]


@lru_cache(maxsize=1)
def tls_context() -> Any:
    """The TLS settings every httpx client here verifies with: those httpx would make for each client (certifi's
    CAs, SSL_CERT_FILE / SSL_CERT_DIR honoured), made once per process, since making them reads the CA bundle
    (~25 ms of CPU a client)."""
    import httpx

    return httpx.create_ssl_context()


class Transport(Protocol):
    """Sends one chat request and returns an OpenAI-shaped response (choices, usage, model)."""

    async def __call__(self, messages: list[dict], params: Mapping[str, Any], timeout: float) -> Any: ...

    async def aclose(self) -> None: ...


class LiteLLMTransport:
    """litellm.acompletion for one model, or a litellm Router over several deployments."""

    def __init__(self, litellm: Any, model: str, api_base: str | None, api_key: str | None,
                 deployments: Sequence[Mapping[str, Any]], timeout: float):
        self._litellm = litellm
        self.model = model
        self._extra = {k: v for k, v in (("api_base", api_base), ("api_key", api_key)) if v is not None}
        self._router = None
        if deployments:
            model_list = [{"model_name": model, "litellm_params": {**d, "max_retries": 0, "timeout": timeout}}
                          for d in deployments]
            # Retries and cool-downs stay ours: one policy, counted attempts, and no deployment is benched
            # for minutes after a single 500.
            with warnings.catch_warnings():  # pydantic's `ReadOnly` notes on litellm's TypedDicts, again
                warnings.filterwarnings("ignore", message=r".*`ReadOnly` qualifier", category=UserWarning)
                self._router = litellm.Router(model_list=model_list, num_retries=0, disable_cooldowns=True,
                                              routing_strategy="simple-shuffle", timeout=timeout)

    async def __call__(self, messages: list[dict], params: Mapping[str, Any], timeout: float) -> Any:
        kwargs = {**params, "messages": messages, "timeout": timeout, "max_retries": 0}
        if self._router is not None:
            return await deadline(self._router.acompletion(model=self.model, **kwargs), timeout)
        return await deadline(self._litellm.acompletion(model=self.model, num_retries=0, **self._extra, **kwargs),
                              timeout)

    async def aclose(self) -> None:
        pass  # litellm keeps its clients in a process-wide cache


class Breaker:
    """Which deployments of a fleet take calls: a circuit breaker per deployment.

    A deployment that fails at the connection (refused, reset, timed out) leaves the rotation at once;
    one that answers `TRIP_5XX` server errors (5xx) in a row with no success in between leaves it too
    (a single 500 may be the request's fault). It stays out `BACKOFF` seconds, doubled after each
    failed return up to `MAX_BACKOFF`; then one call probes it, and only one: an answer puts it back,
    a failure sends it out again for the next back-off. While every deployment is out, calls go to the
    one due back first (they fail or succeed on their own; the client's retries wait between them).
    Failures of calls sent before a deployment left (and still in flight) do not lengthen its absence.
    `clock` is time.monotonic unless a test gives another.
    """

    BACKOFF = 1.0
    MAX_BACKOFF = 30.0
    TRIP_5XX = 3

    def __init__(self, n: int, clock: Callable[[], float] = time.monotonic):
        self.n = n
        self.clock = clock
        self.in_flight = [0] * n
        self._turn = itertools.count()
        self._errors = [0] * n  # server errors in a row
        self._trips = [0] * n  # failed returns in a row (0: in the rotation)
        self._back_at = [0.0] * n  # out of the rotation until then (when _trips > 0)
        self._probing = [False] * n

    def is_out(self, i: int) -> bool:
        """True while deployment `i` is out of the rotation (its back-off runs, or its probe is in flight)."""
        return self._trips[i] > 0 and (self._probing[i] or self.clock() < self._back_at[i])

    def pick(self) -> tuple[int, bool]:
        """(deployment, whether the call probes it); the chosen one's in-flight count is raised."""
        n = self.n
        start = next(self._turn) % n
        order = [(start + k) % n for k in range(n)]
        due = [i for i in order if self._trips[i] and not self.is_out(i)]
        if due:  # back-off over: this call finds out whether it is back
            i, probe = due[0], True
            self._probing[i] = True
        else:
            up = [i for i in order if not self._trips[i]]
            if up:  # the fewest calls in flight, ties in turn
                i = min(up, key=lambda k: self.in_flight[k])
            else:  # all out: the one due back first
                i = min(order, key=lambda k: (self._back_at[k], self.in_flight[k]))
            probe = False
        self.in_flight[i] += 1
        return i, probe

    def succeeded(self, i: int, probe: bool) -> None:
        """A call to `i` was answered: it is in the rotation."""
        self.in_flight[i] -= 1
        self._errors[i] = self._trips[i] = 0
        if probe:
            self._probing[i] = False

    def failed(self, i: int, probe: bool, connection: bool) -> bool:
        """A call to `i` failed at the connection (`connection`) or with a 5xx; True when `i` is now out."""
        self.in_flight[i] -= 1
        if probe:
            self._probing[i] = False
        self._errors[i] += 1
        if probe or (not self._trips[i] and (connection or self._errors[i] >= self.TRIP_5XX)):
            self._trips[i] += 1
            self._back_at[i] = self.clock() + min(self.MAX_BACKOFF, self.BACKOFF * 2 ** (self._trips[i] - 1))
        return self._trips[i] > 0

    def released(self, i: int, probe: bool) -> None:
        """A call to `i` ended with neither (cancelled, or an error that says nothing about the deployment)."""
        self.in_flight[i] -= 1
        if probe:
            self._probing[i] = False

    def another_up(self, i: int) -> bool:
        """True when a deployment other than `i` takes calls now (in the rotation, or due for its probe)."""
        return any(k != i and not self.is_out(k) for k in range(self.n))


class OpenAITransport:
    """The openai SDK, one AsyncOpenAI client per endpoint and event loop, reused by every call.

    With several endpoints each request goes to the one with the fewest requests in flight (ties in turn),
    which spreads load over replicas of one model as well as a shuffle and adapts to a slow replica; a
    failing endpoint leaves the rotation (see Breaker). When it left and another endpoint is up, the
    error carries `retry_elsewhere = True`: the client retries the call at once, on another endpoint. Every
    error carries `deployment`, the index of the endpoint that failed.
    """

    def __init__(self, endpoints: Sequence[Endpoint]):
        if not endpoints:
            raise ValueError("OpenAITransport needs at least one endpoint")
        if find_spec("openai") is None:  # the models extra is missing: say so now, not as every call's failure
            raise ModuleNotFoundError("No module named 'openai'", name="openai")
        self.endpoints = list(endpoints)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._clients: list[Any] = []
        self.breaker = Breaker(len(self.endpoints))

    def _clients_for_loop(self) -> list[Any]:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # httpx connections belong to the loop that opened them
            from openai import AsyncOpenAI, DefaultAsyncHttpxClient

            self._loop = loop
            self._clients = [AsyncOpenAI(base_url=e.api_base, api_key=e.api_key, max_retries=0,
                                         http_client=DefaultAsyncHttpxClient(verify=tls_context())) for e in self.endpoints]
            self.breaker.in_flight = [0] * len(self.endpoints)
        return self._clients

    async def __call__(self, messages: list[dict], params: Mapping[str, Any], timeout: float) -> Any:
        from openai import APIConnectionError

        clients = self._clients_for_loop()
        if len(self.endpoints) == 1:
            return await deadline(clients[0].chat.completions.create(
                model=self.endpoints[0].model, messages=messages, timeout=timeout, **params), timeout)
        breaker = self.breaker
        i, probe = breaker.pick()
        try:
            response = await deadline(clients[i].chat.completions.create(
                model=self.endpoints[i].model, messages=messages, timeout=timeout, **params), timeout)
        except BaseException as e:
            e.deployment = i  # type: ignore[attr-defined]  # which one failed, for the client's first-contact rule
            status = getattr(e, "status_code", None)
            connection = isinstance(e, (APIConnectionError, TimeoutError))  # refused, reset, timed out
            if not connection and not (isinstance(status, int) and status >= 500):
                breaker.released(i, probe)
            elif breaker.failed(i, probe, connection) and breaker.another_up(i):
                e.retry_elsewhere = True  # type: ignore[attr-defined]
            raise
        breaker.succeeded(i, probe)
        return response

    async def aclose(self) -> None:
        clients, self._clients, self._loop = self._clients, [], None
        for client in clients:
            await client.close()


async def deadline(awaitable: Any, timeout: float) -> Any:
    """`awaitable`, or TimeoutError once `timeout` (plus a second) has passed.

    The HTTP clients enforce `timeout` per read; this deadline is the backstop for a server that trickles.
    """
    if sys.version_info >= (3, 11):  # asyncio.timeout needs no extra task per call, unlike wait_for
        async with asyncio.timeout(timeout + 1.0):
            return await awaitable
    return await asyncio.wait_for(awaitable, timeout + 1.0)


def make_transport(load: Callable[[], Any], kind: str, model: str, api_base: str | None, api_key: str | None,
                   deployments: Sequence[Mapping[str, Any]], timeout: float) -> Transport:
    """The transport `kind` asks for; `auto` picks the openai SDK wherever every endpoint allows it.

    `load` returns the litellm module; it is called only when the choice or the transport needs litellm.
    """
    endpoints = sdk_endpoints(load, kind, model, api_base, api_key, deployments)
    if endpoints is not None:
        return OpenAITransport(endpoints)
    return LiteLLMTransport(load(), model, api_base, api_key, deployments, timeout)


class Unsent:
    """The transport of a dry run: nothing is sent, so neither litellm nor a provider's SDK is loaded.

    `sdk` says whether a real run would send through the openai SDK (OpenAITransport), which decides how
    requests are formed (structured output is tried there), and so their cache keys.
    """

    def __init__(self, sdk: bool):
        self.sdk = sdk

    async def __call__(self, messages: list[dict], params: Mapping[str, Any], timeout: float) -> Any:
        raise RuntimeError("a dry run sends nothing")

    async def aclose(self) -> None:
        pass
