"""How a request reaches a model: through litellm (any provider, its Router for several deployments), or
straight through the openai SDK for OpenAI-compatible servers named by an api_base (vLLM, llama.cpp, TGI...).

litellm 1.110 spends ~4-6 ms of CPU per call and hops through a thread pool; against a 200 ms server at
concurrency 16 that caps a run near 70% of the ideal rate. The openai SDK (which litellm itself wraps for
these servers) costs ~2 ms, so `transport="auto"` uses it for `openai/` and `hosted_vllm/` models with an
api_base. Everything else -- provider resolution, prices, token counts, other providers -- stays litellm's.
"""
from __future__ import annotations

import asyncio
import itertools
import os
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol, Sequence

__all__ = ["Transport", "LiteLLMTransport", "OpenAITransport", "make_transport", "TRANSPORTS"]

TRANSPORTS = ("auto", "litellm", "openai")
_OPENAI_COMPATIBLE = {"openai", "hosted_vllm"}
# Deployment keys only litellm's Router understands; their presence keeps a group on the Router.
_ROUTER_KEYS = {"rpm", "tpm", "weight", "order", "max_parallel_requests"}


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
            return await self._router.acompletion(model=self.model, **kwargs)
        return await self._litellm.acompletion(model=self.model, num_retries=0, **self._extra, **kwargs)

    async def aclose(self) -> None:
        pass  # litellm keeps its clients in a process-wide cache


@dataclass(frozen=True)
class Endpoint:
    """One OpenAI-compatible server: the model name it serves, its base URL and key."""

    model: str
    api_base: str
    api_key: str


class OpenAITransport:
    """The openai SDK, one AsyncOpenAI client per endpoint and event loop, reused by every call.

    With several endpoints each request goes to the one with the fewest requests in flight (ties in turn),
    which spreads load over replicas of one model as well as a shuffle and adapts to a slow replica.
    """

    DOWN_SECONDS = 30.0

    def __init__(self, endpoints: Sequence[Endpoint]):
        if not endpoints:
            raise ValueError("OpenAITransport needs at least one endpoint")
        self.endpoints = list(endpoints)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._clients: list[Any] = []
        self._in_flight = [0] * len(self.endpoints)
        self._turn = itertools.count()
        self._down_until: dict[int, float] = {}

    def _clients_for_loop(self) -> list[Any]:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # httpx connections belong to the loop that opened them
            from openai import AsyncOpenAI

            self._loop = loop
            self._clients = [AsyncOpenAI(base_url=e.api_base, api_key=e.api_key, max_retries=0)
                             for e in self.endpoints]
            self._in_flight = [0] * len(self.endpoints)
        return self._clients

    def _pick(self) -> int:
        n = len(self.endpoints)
        if n == 1:
            return 0
        start = next(self._turn) % n
        now = time.monotonic()
        # An endpoint that refused a connection (a dead server answers at once, so it always looks idle) is
        # left out for DOWN_SECONDS while another is up; its calls, retried, go to the live ones.
        up = [(start + k) % n for k in range(n) if self._down_until.get((start + k) % n, 0.0) <= now]
        return min(up or [(start + k) % n for k in range(n)], key=lambda i: self._in_flight[i])

    async def __call__(self, messages: list[dict], params: Mapping[str, Any], timeout: float) -> Any:
        from openai import APIConnectionError, APITimeoutError

        clients = self._clients_for_loop()
        i = self._pick()
        self._in_flight[i] += 1
        try:
            response = await clients[i].chat.completions.create(
                model=self.endpoints[i].model, messages=messages, timeout=timeout, **params)
        except APIConnectionError as e:
            if len(self.endpoints) > 1 and not isinstance(e, APITimeoutError):
                self._down_until[i] = time.monotonic() + self.DOWN_SECONDS
            raise
        finally:
            self._in_flight[i] -= 1
        self._down_until.pop(i, None)
        return response

    async def aclose(self) -> None:
        clients, self._clients, self._loop = self._clients, [], None
        for client in clients:
            await client.close()


def _endpoint(load: Callable[[], Any], model: str, api_base: str | None, api_key: str | None) -> Endpoint | None:
    """The endpoint for `model` when it is served by an OpenAI-compatible server at an explicit api_base.

    A model named `openai/...` or `hosted_vllm/...` needs no litellm to know that; any other name asks
    litellm's provider resolution (`load` imports it).
    """
    if not api_base:
        return None
    provider, _, name = model.partition("/")
    if name and provider in _OPENAI_COMPATIBLE:
        env_key = os.environ.get(f"{provider.upper()}_API_KEY")
    else:
        try:
            name, provider, env_key, _ = load().get_llm_provider(model=model, api_base=api_base, api_key=api_key)
        except Exception:  # an unknown provider: the client says so in its own words
            return None
        if provider not in _OPENAI_COMPATIBLE:
            return None
    key = api_key or env_key or os.environ.get("OPENAI_API_KEY") or "none"  # local servers often take any key
    return Endpoint(name, api_base, key)


def make_transport(load: Callable[[], Any], kind: str, model: str, api_base: str | None, api_key: str | None,
                   deployments: Sequence[Mapping[str, Any]], timeout: float) -> Transport:
    """The transport `kind` asks for; `auto` picks the openai SDK wherever every endpoint allows it.

    `load` returns the litellm module; it is called only when the choice or the transport needs litellm.
    """
    if kind not in TRANSPORTS:
        raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}, not {kind!r}")
    if kind != "litellm":
        targets = deployments or [{"model": model, "api_base": api_base, "api_key": api_key}]
        endpoints = [None if set(d) & _ROUTER_KEYS else
                     _endpoint(load, d["model"], d.get("api_base"), d.get("api_key")) for d in targets]
        if all(e is not None for e in endpoints):
            return OpenAITransport(endpoints)  # type: ignore[arg-type]
        if kind == "openai":
            raise ValueError("transport 'openai' needs openai/ or hosted_vllm/ models with an api_base "
                             "(and no Router-only deployment keys such as rpm, tpm, weight)")
    return LiteLLMTransport(load(), model, api_base, api_key, deployments, timeout)
