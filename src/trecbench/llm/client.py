"""The one way trecbench talks to models: an async client that caches, retries, re-asks, counts and budgets.

    config = ModelConfig("openai/gpt-4o-mini", concurrency=16)
    async with LLM(config, cache="bench.sqlite", budget=Budget(5.0)) as llm:
        outcome = await llm.ask(messages, parse=json_object("grade"), purpose="judge")
        if outcome.ok: ... outcome.value["grade"] ...
        else: ... record outcome.error: never a made-up grade ...
"""
from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from trecbench.llm._litellm import load
from trecbench.llm.budget import Budget, Estimate, Plan
from trecbench.llm.cache import ResponseCache, request_key
from trecbench.llm.cost import call_cost, count_text_tokens, count_tokens, is_priced, supports_response_schema
from trecbench.llm.errors import LLMError, ModelCallError, ParseError
from trecbench.llm.parse import reask_messages
from trecbench.llm.records import CallRecord, Completion, Outcome, Usage
from trecbench.llm.retry import (FirstContact, RateLimiter, backoff_delay, classify, missing_credentials,
                                 out_of_quota, retry_after, status_of, unreachable)
from trecbench.llm.transport import TRANSPORTS, OpenAITransport, Unsent, make_transport, sdk_endpoints

__all__ = ["ModelConfig", "LLM"]

Messages = Sequence[Mapping[str, Any]]
DEFAULT_COMPLETION_TOKENS = 256  # expected reply length for estimates, until real replies are seen
REASK_TEMPERATURE = 0.3  # a re-ask at temperature 0 would mostly get the same unusable text back
MAX_REPLAYED = 8  # cached unreadable turns replayed before asking afresh
MOST_REPLY_TOKENS = 16384  # a reply cut by length is re-asked with twice its bound, up to this


@dataclass(frozen=True)
class ModelConfig:
    """Which model to call and how.

    `model` is a litellm model name (`openai/gpt-4o-mini`, `hosted_vllm/llama-3-8b`, ...); with
    `deployments` it names the group, and each deployment (`{"model": ..., "api_base": ..., "api_key":
    ...}`, `model` defaulting to this one) is a server that calls are spread over (to the one with the
    fewest in flight, or by litellm's Router when the transport is litellm). `params` are
    sent with every call and are part of the cache key. `max_retries` counts retries after the first
    attempt; back-off starts at `backoff` seconds and doubles up to `max_backoff`. At most `concurrency`
    requests are in flight, and with `rpm` at most that many start per minute. `transport` is `litellm`,
    `openai` (the openai SDK straight to OpenAI-compatible servers), or `auto`: the SDK where every
    endpoint is an `openai/` or `hosted_vllm/` model with an api_base, litellm elsewhere (see transport.py).
    `prices` are (input, output) dollars per million tokens, for a model litellm's cost map has no price for.
    `structured_output` says whether the server enforces a JSON schema given as `response_format`: None
    detects it (litellm's `supports_response_schema`; OpenAI-compatible servers are tried, and a server
    that refuses the parameter is asked again without it), True or False declares it; the environment
    variable TRECBENCH_STRUCTURED_OUTPUT (on, off, auto) declares it for every command.
    """

    model: str
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)
    params: Mapping[str, Any] = field(default_factory=lambda: {"temperature": 0})
    timeout: float = 60.0
    max_retries: int = 4
    deployments: Sequence[Mapping[str, Any]] | None = None
    concurrency: int = 8
    rpm: float | None = None
    backoff: float = 1.0
    max_backoff: float = 60.0
    transport: str = "auto"
    prices: tuple[float, float] | None = None
    structured_output: bool | None = None

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("ModelConfig needs a model name")
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if self.max_retries < 0 or self.timeout <= 0:
            raise ValueError("max_retries must be >= 0 and timeout > 0")
        if self.prices is not None and (len(self.prices) != 2 or min(self.prices) < 0):
            raise ValueError("prices must be (input, output) dollars per million tokens, both >= 0")
        if self.transport not in TRANSPORTS:
            raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}, not {self.transport!r}")


STRUCTURED_OUTPUT_VARIABLE = "TRECBENCH_STRUCTURED_OUTPUT"


def structured_output_setting() -> bool | None:
    """`TRECBENCH_STRUCTURED_OUTPUT`: `on`/`off` declare whether servers enforce a schema; unset or `auto` detects.

    Raises LLMError for any other value, naming the ones it takes.
    """
    value = os.environ.get(STRUCTURED_OUTPUT_VARIABLE, "").strip().lower()
    if value in ("", "auto"):
        return None
    if value in ("on", "1", "true", "yes"):
        return True
    if value in ("off", "0", "false", "no"):
        return False
    raise LLMError(f"{STRUCTURED_OUTPUT_VARIABLE}={value!r}: use on, off or auto")


def _as_messages(messages: str | Messages) -> list[dict]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    return [dict(m) for m in messages]


def _first_line(exc: BaseException, limit: int = 400) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


# Providers litellm resolves from a `provider/` prefix alone (tests/llm/test_tokens.py checks each against
# litellm): a name with one needs no import of litellm (seconds) to be checked. Any other name asks litellm.
KNOWN_PROVIDERS = frozenset({
    "openai", "hosted_vllm", "anthropic", "azure", "azure_ai", "gemini", "vertex_ai", "bedrock", "ollama",
    "ollama_chat", "openrouter", "together_ai", "groq", "mistral", "deepseek", "fireworks_ai", "cohere",
    "cohere_chat", "huggingface", "vllm", "lm_studio", "xai", "perplexity", "databricks", "watsonx", "sagemaker",
    "text-completion-openai", "deepinfra", "cerebras", "nvidia_nim", "llamafile", "litellm_proxy"})
# Bare names litellm knows by its cost map: those of these providers (its lists of their models).
_BARE_PROVIDERS = frozenset({"openai", "anthropic", "text-completion-openai", "cohere", "cohere_chat"})


def known_without_litellm(model: str) -> bool:
    """True when `model`'s provider is clear without asking litellm: a known `provider/` prefix, or a bare
    name litellm's cost map lists under a provider litellm knows bare names of."""
    from trecbench.llm.cost_map import cost_map

    provider, _, name = model.partition("/")
    if name:
        return provider in KNOWN_PROVIDERS
    entry = cost_map().get(model)
    return isinstance(entry, dict) and entry.get("litellm_provider") in _BARE_PROVIDERS


def check_model_name(model: str) -> None:
    """Raise LLMError unless litellm can tell which provider serves `model` (known providers' names need no
    look-up, see `known_without_litellm`)."""
    if known_without_litellm(model):
        return
    try:
        load().get_llm_provider(model=model)
    except Exception as exc:
        raise LLMError(
            f"model {model!r}: litellm cannot tell which provider serves it ({_first_line(exc, 160)}); "
            "name it as provider/model, e.g. openai/gpt-4o-mini or hosted_vllm/<served name>") from None


def key_variable(model: str) -> str:
    """The environment variable that holds the key of `model`'s provider (OPENAI_API_KEY for openai/...)."""
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    return f"{provider.upper().replace('-', '_')}_API_KEY"


def _plain(status: int | None, error: BaseException, model: str = "") -> str:
    """What a fatal error means, in a user's words ("" when there is nothing to add to the server's text)."""
    if missing_credentials(error):
        return f"no API key reached the server: set {key_variable(model)} (or TRECBENCH_API_KEY), or give --api-key"
    if status == 429 and out_of_quota(error):
        return "the account has no credit left (insufficient_quota); add credit or use another key"
    return {401: "the server refused the API key (check --api-key or the provider's key variable)",
            402: "the account has no credit left",
            403: "the API key has no access to this model",
            404: "no such model at this server (check the model name and --api-base)"}.get(status or 0, "")


class LLM:
    """An async client for one model (or one Router group of deployments); share one per run.

    `cache` is a ResponseCache, a sqlite3 connection or a database path (None: no cache, nothing logged
    to disk). `budget` enforces `--max-cost`; with `dry_run=True` nothing is sent: calls are estimated
    into `.plan` and answered with `Outcome(ok=False, dry_run=True)` unless the cache has them.
    """

    def __init__(self, config: ModelConfig, *, cache: ResponseCache | sqlite3.Connection | str | os.PathLike[str]
                 | None = None, budget: Budget | None = None, dry_run: bool = False):
        self.config = config
        self._owns_cache = cache is not None and not isinstance(cache, ResponseCache)
        self.cache: ResponseCache | None = (cache if isinstance(cache, ResponseCache) or cache is None
                                            else ResponseCache(cache))
        self.budget = budget
        self.dry_run = dry_run
        self.plan = Plan()
        self._usage: dict[str, Usage] = {}
        self._deployments = [self._deployment(d) for d in config.deployments or ()]
        # A dry run sends nothing: no transport is made, so neither litellm nor the openai SDK is imported.
        self.transport = (Unsent(sdk_endpoints(load, config.transport, config.model, config.api_base, config.api_key,
                                               self._deployments) is not None) if dry_run else
                          make_transport(load, config.transport, config.model, config.api_base, config.api_key,
                                         self._deployments, config.timeout))
        if not self._through_sdk():  # the SDK's servers need no provider lookup
            for model in [d["model"] for d in self._deployments] or [config.model]:
                check_model_name(model)
        self._structured = (config.structured_output if config.structured_output is not None
                            else structured_output_setting())
        # How a schema is sent: OpenAI's `json_schema` (OpenAI, vLLM, llama.cpp's own server), else the
        # `json_object` + `schema` form that llama-cpp-python's server takes; a refusal moves down the list.
        self._schema_style = "json_schema"
        self._takes_seed: bool | None = None  # whether the provider takes `seed` (Anthropic does not)
        # Price with the group's name when it has one, else with the (first) deployment's model.
        candidates = [config.model] + [d["model"] for d in self._deployments]
        priced = [m for m in candidates if is_priced(m)]
        self.price_model = priced[0] if priced else candidates[-1]
        self.prices = config.prices
        self.priced = bool(priced) or config.prices is not None
        if budget is not None and budget.max_cost is not None and not self.priced:
            raise LLMError(f"--max-cost needs a price: litellm's cost map has none for {config.model!r}; give "
                           "--input-price and --output-price (dollars per million tokens)")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._limiter: RateLimiter | None = None
        self._hold_until = 0.0  # a 429's Retry-After pauses every request of this client until then
        self._contact = FirstContact(len(self._deployments) or 1)
        self._unreachable: str | None = None  # why the run stopped before any server answered
        self._seen_completion_tokens = [0, 0]  # sum, count: the expected reply length for estimates

    # -- setup ---------------------------------------------------------------------------------------
    def _deployment(self, d: Mapping[str, Any]) -> dict[str, Any]:
        params = dict(d)
        params.setdefault("model", self.config.model)
        if self.config.api_key is not None:
            params.setdefault("api_key", self.config.api_key)
        if self.config.api_base is not None:
            params.setdefault("api_base", self.config.api_base)
        return params

    def _loop_state(self) -> tuple[asyncio.Semaphore, RateLimiter | None]:
        # asyncio primitives belong to one event loop; a client reused under a new asyncio.run() gets fresh ones.
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop = loop
            self._semaphore = asyncio.Semaphore(self.config.concurrency)
            self._limiter = RateLimiter(self.config.rpm) if self.config.rpm else None
        assert self._semaphore is not None
        return self._semaphore, self._limiter

    # -- the public calls ----------------------------------------------------------------------------
    async def ask(self, messages: str | Messages, *, parse: Callable[[str], Any] | None = None, reask: int = 2,
                  purpose: str = "", use_cache: bool = True, schema: Mapping[str, Any] | None = None,
                  **params: Any) -> Outcome:
        """Ask once, read the reply with `parse`, re-ask up to `reask` times when it cannot be read.

        Returns Outcome(ok=True, value=parse(reply)) or Outcome(ok=False, error=..., raw=last reply).
        A reply cut off by its length bound (finish_reason `length`) is not parsed: it is re-asked with
        twice the bound. A re-ask states what was wrong and runs at a small temperature. `schema` (the
        `json_schema` of a `response_format`) asks for structured output where the server supports it.
        Every reply is cached and logged the moment it arrives; a rerun replays the cached turns, so no
        reply is paid for twice. `use_cache=False` forces fresh calls (their replies are still stored).
        Raises ModelCallError only when the request can never succeed (bad key, unknown model...), and
        BudgetExceeded when the budget would be passed.
        """
        reask = max(0, reask)
        turns = _Turns(_as_messages(messages), {**self.config.params, **params})
        # `fresh` counts the replies asked for in this call; replayed cached turns do not use up `reask`,
        # so a rerun replays what was paid for and then still re-asks (at most MAX_REPLAYED of them).
        while turns.fresh <= reask and turns.turn <= reask + MAX_REPLAYED:
            sent = self._turn_params(turns.params, schema, turns.turn)
            key = request_key(self.config.model, turns.convo, sent)
            turns.first_key = turns.first_key or key
            reply = await self._reply(turns, sent, key, use_cache=use_cache, purpose=purpose)
            if reply is None:
                continue  # the server refused the schema's form: the same turn in the next form
            if isinstance(reply, Outcome):
                return reply
            turns.completions.append(reply)
            value, reason = _reading(parse, reply)
            self._account(reply, turns.convo, sent, purpose, reason)
            if not reason:
                return turns.answered(value, reply)
            turns.reask(reply, reason)
        return turns.unreadable()

    async def _reply(self, turns: _Turns, sent: dict, key: str, *, use_cache: bool,
                     purpose: str) -> Completion | Outcome | None:
        """The reply to this turn: the cached one, else one asked for within the budget. An Outcome when none
        can come (a dry run, a failed call), None when the server refused the schema's form (try the next)."""
        cached = self._from_cache(key) if use_cache and self.cache is not None else None
        if cached is not None:
            return cached
        if self.dry_run:
            self.plan = self.plan.add(self._estimate(turns.convo, sent, key, cached=False))
            return Outcome(False, error="dry run: not sent", dry_run=True, key=turns.first_key)
        reserved = 0.0
        if self.budget is not None and self.budget.max_cost is not None:
            reserved = self.budget.reserve(self._estimate(turns.convo, sent, key).cost)
        started = time.monotonic()
        try:
            completion = await self._send(turns.convo, sent, key)
        except ModelCallError as exc:
            if self.budget:
                self.budget.release(reserved)
            if "response_format" in sent and _refuses_schema(exc):
                self._next_schema_form()
                return None
            if not exc.unreachable:  # a request that reached no server was never asked: nothing to log
                self._log(CallRecord(key, self.config.model, False, error=str(exc), attempts=exc.attempts,
                                     latency_ms=(time.monotonic() - started) * 1000, purpose=purpose,
                                     cost_known=self.priced))
            if exc.fatal:
                raise
            return turns.failed(str(exc))
        if self.budget is not None:
            self.budget.settle(reserved, completion.cost)
        return completion

    def _next_schema_form(self) -> None:
        """A server refused the schema as sent: the other form a server may take, then none (words only)."""
        if self._schema_style == "json_schema":
            self._schema_style = "json_object"
        else:
            self._structured = False

    def _account(self, completion: Completion, convo: list[dict], sent: Mapping[str, Any], purpose: str,
                 reason: str) -> None:
        """Store a fresh reply and log every reply (cached ones too); a dry run plans a cached reply instead."""
        error = f"unreadable reply: {reason}" if reason else None
        if not completion.cached:
            if self.cache is not None:
                self._store(completion.key, convo, sent, completion)  # committed with the log row below
            self._log(self._record(completion, purpose, error=error))
        elif not self.dry_run:
            self._log(self._record(completion, purpose, error=error))
        else:
            self.plan = self.plan.add(Estimate(completion.key, completion.prompt_tokens, completion.completion_tokens,
                                               0.0, True, True))

    def _through_sdk(self) -> bool:
        """Whether requests go (or, in a dry run, would go) through the openai SDK rather than litellm."""
        return isinstance(self.transport, OpenAITransport) or getattr(self.transport, "sdk", False)

    def uses_structured_output(self) -> bool:
        """Whether requests with a schema carry it as `response_format` (see ModelConfig.structured_output)."""
        if self._structured is None:
            if self._through_sdk():
                self._structured = True  # tried; a server that refuses it turns it off (see `ask`)
            elif self.dry_run and "litellm" not in sys.modules:  # litellm's answer, read from its cost map
                self._structured = supports_response_schema(self.config.model)
            else:
                try:
                    self._structured = bool(load().supports_response_schema(model=self.config.model))
                except Exception:
                    self._structured = False
        return self._structured

    def first_request(self, messages: str | Messages, *, schema: Mapping[str, Any] | None = None,
                      **params: Any) -> tuple[list[dict], dict, str]:
        """(messages, parameters, cache key) of the first request `ask` would send for these arguments."""
        convo = _as_messages(messages)
        sent = self._turn_params({**self.config.params, **params}, schema, 0)
        return convo, sent, request_key(self.config.model, convo, sent)

    def takes_seed(self) -> bool:
        """Whether requests may carry `seed` (litellm's list of the provider's parameters; OpenAI-compatible
        servers take it). Where it may not, litellm drops it: the seed stays in the cache key, so each of a
        judge's samples is still a call of its own."""
        if self._takes_seed is None:
            if self._through_sdk():
                self._takes_seed = True
            else:
                try:
                    litellm = load()
                    model, provider, *_ = litellm.get_llm_provider(self.config.model)
                    self._takes_seed = "seed" in (litellm.get_supported_openai_params(
                        model=model, custom_llm_provider=provider) or [])
                except Exception:
                    self._takes_seed = True  # unknown: sent, and a refusal says so
        return self._takes_seed

    def _turn_params(self, merged: Mapping[str, Any], schema: Mapping[str, Any] | None, turn: int) -> dict:
        params = dict(merged)
        if "seed" in params and not self.takes_seed():
            params["additional_drop_params"] = ["seed"]
        if turn > 0 and float(params.get("temperature") or 0.0) < REASK_TEMPERATURE:
            params["temperature"] = REASK_TEMPERATURE
        if schema is not None and self.uses_structured_output():
            if self._schema_style == "json_schema":
                params["response_format"] = {"type": "json_schema", "json_schema": dict(schema)}
            else:
                params["response_format"] = {"type": "json_object", "schema": dict(schema)["schema"]}
        return params

    async def complete(self, messages: str | Messages, *, purpose: str = "", use_cache: bool = True,
                       **params: Any) -> Completion:
        """One reply as text (cached, retried, logged); raises ModelCallError when no usable reply came."""
        outcome = await self.ask(messages, reask=0, purpose=purpose, use_cache=use_cache, **params)
        if outcome.dry_run:
            raise LLMError("dry run: no call was made")
        if not outcome.ok or outcome.completion is None:
            raise ModelCallError(outcome.error or "no reply", model=self.config.model, attempts=outcome.attempts)
        return outcome.completion

    def estimate(self, messages: str | Messages, **params: Any) -> Estimate:
        """What asking `messages` would cost now (0 when the cache already holds the reply); sends nothing."""
        convo = _as_messages(messages)
        merged = {**self.config.params, **params}
        key = request_key(self.config.model, convo, merged)
        return self._estimate(convo, merged, key, cached=self.cache is not None and self.cache.get(key) is not None)

    @property
    def usage(self) -> Usage:
        """Totals of this client's calls (this process only; `cache.usage()` covers every run)."""
        return sum(self._usage.values(), Usage())

    @property
    def usage_by_purpose(self) -> dict[str, Usage]:
        return dict(self._usage)

    def close(self) -> None:
        """Close the cache database if this client opened it."""
        if self._owns_cache and self.cache is not None:
            self.cache.close()

    def run(self, coro):
        """`asyncio.run(coro)`, closing this client's HTTP connections before the event loop ends.

        Use it for each batch of work: connections belong to one event loop, and closing them inside it
        keeps asyncio from reporting unclosed connections after the loop is gone.
        """
        import asyncio

        async def main():
            try:
                return await coro
            finally:
                await self.transport.aclose()

        return asyncio.run(main())

    async def aclose(self) -> None:
        """Close the HTTP clients of the running event loop, then the cache."""
        await self.transport.aclose()
        self.close()

    async def __aenter__(self) -> "LLM":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __enter__(self) -> "LLM":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- one request, with retries -------------------------------------------------------------------
    async def _send(self, convo: list[dict], params: Mapping[str, Any], key: str) -> Completion:
        cfg = self.config
        semaphore, limiter = self._loop_state()
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            if self._unreachable is not None:  # another call found that no server answers: stop here too
                raise ModelCallError(self._unreachable, model=cfg.model, attempts=attempt - 1, fatal=True,
                                     unreachable=True)
            pause = self._hold_until - time.monotonic()
            if pause > 0:
                await asyncio.sleep(pause)
            if limiter is not None:
                await limiter.wait()
            async with semaphore:
                try:
                    response = await self.transport(convo, params, cfg.timeout)  # a deadline included
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # classified below: nothing is swallowed
                    error: BaseException = exc
                else:
                    self._contact.answer()
                    return self._completion(response, convo, key, attempt, time.monotonic() - started)
            verdict = classify(error)
            status = status_of(error)
            if status is not None:
                self._contact.answer()
            # Before any server answered, an unreachable one is no request's failure: tried again, or the run stops.
            unanswered = status is None and self._first_contact_failed(error, attempt)
            if verdict == "retry" and "response_format" in params and _refuses_schema(error, status):
                verdict = "item"  # a refusal of the schema's form, not a passing fault: `ask` tries another
            if not unanswered and (verdict != "retry" or attempt > cfg.max_retries):
                raise self._given_up(error, verdict, status, attempt) from error
            if getattr(error, "retry_elsewhere", False):
                continue  # its deployment left the rotation and another is up: no reason to wait
            server_wait = retry_after(error)
            if server_wait is not None and status == 429:
                self._hold_until = max(self._hold_until, time.monotonic() + server_wait)
            await asyncio.sleep(backoff_delay(attempt, cfg.backoff, cfg.max_backoff, server_wait))

    def _given_up(self, error: BaseException, verdict: str, status: int | None, attempt: int) -> ModelCallError:
        """The error a request ends with once it is not retried any more, in a user's words where it is fatal."""
        model = self.config.model
        what = "gave up after" if verdict == "retry" else "failed on"
        where = f"HTTP {status}: " if status else ""
        plain = _plain(status, error, model) if verdict == "fatal" else ""
        message = (f"{model}: {plain} [{where}{_first_line(error, 200)}]" if plain else
                   f"{model}: {what} attempt {attempt}: {where}{_first_line(error)}")
        return ModelCallError(message, model=model, status=status, attempts=attempt, fatal=verdict == "fatal",
                              retryable=verdict == "retry")

    def _first_contact_failed(self, error: BaseException, attempt: int) -> bool:
        """True when `error` says no server could be reached before any answered: the request is tried again.
        Raises the fatal ModelCallError once every deployment failed so (see FirstContact)."""
        cause = unreachable(error)
        if cause is None or self._contact.answered:
            return False
        place = getattr(error, "deployment", 0 if self._contact.places == 1 else None)
        if self._contact.strike(place):
            self._unreachable = self._unreachable or self._no_server(cause)
            raise ModelCallError(self._unreachable, model=self.config.model, attempts=attempt, fatal=True,
                                 unreachable=True) from error
        return True

    def _no_server(self, cause: str) -> str:
        """One line: which address failed how, and what to set."""
        from urllib.parse import urlsplit

        bases = [d["api_base"] for d in self._deployments if d.get("api_base")] or (
            [self.config.api_base] if self.config.api_base else [])
        where = ", ".join(bases) if bases else "the provider's default address"
        every = "every server" if len(bases) > 1 else "the server"
        if cause == "unknown host":
            if not bases:
                return (f"{self.config.model}: no server reached: the provider's host name does not resolve (unknown "
                        "host); check the network, or set --api-base to a server you can reach")
            hosts = ", ".join(sorted({urlsplit(b).hostname or b for b in bases}))
            return (f"{self.config.model}: no server reached: the host name {hosts} does not resolve (unknown host); "
                    "check --api-base")
        return (f"{self.config.model}: no server reached: nothing listens at {where} (connection refused); start "
                f"{every} or set --api-base to the address it listens on")

    def _completion(self, response: Any, convo: list[dict], key: str, attempts: int, latency: float) -> Completion:
        choices = getattr(response, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        text = getattr(message, "content", None) or ""
        finish = getattr(choices[0], "finish_reason", None) if choices else None
        usage = getattr(response, "usage", None)
        prompt = getattr(usage, "prompt_tokens", None)
        reply = getattr(usage, "completion_tokens", None)
        # A server that reports no usage: count ourselves, as litellm counts, without importing it (llm/tokens.py).
        if prompt is None:
            prompt = count_tokens(self.price_model, convo, import_litellm=False)
        if reply is None:
            reply = count_text_tokens(self.price_model, text, import_litellm=False)
        cost, known = call_cost(self.price_model, prompt, reply, self.prices) if self.priced else (0.0, False)
        total, n = self._seen_completion_tokens
        self._seen_completion_tokens = [total + int(reply), n + 1]
        return Completion(text=text, model=getattr(response, "model", None) or self.config.model,
                          prompt_tokens=int(prompt), completion_tokens=int(reply), cost=cost, cost_known=known,
                          latency=latency, cached=False, attempts=attempts, finish_reason=finish, key=key)

    # -- cache, log, estimates -----------------------------------------------------------------------
    def _from_cache(self, key: str) -> Completion | None:
        assert self.cache is not None
        hit = self.cache.get(key)
        if hit is None:
            return None
        return Completion(text=hit.text, model=hit.model, prompt_tokens=hit.prompt_tokens,
                          completion_tokens=hit.completion_tokens, cost=0.0, cost_known=True, latency=0.0,
                          cached=True, attempts=0, finish_reason=hit.finish_reason, key=key)

    def _store(self, key: str, convo: list[dict], params: Mapping[str, Any], c: Completion) -> None:
        assert self.cache is not None
        request = {"model": self.config.model, "messages": convo, "params": dict(params)}
        self.cache.put(key, c.model, request, c.text, c.prompt_tokens, c.completion_tokens, c.cost,
                       finish_reason=c.finish_reason, commit=False)

    def _record(self, c: Completion, purpose: str, error: str | None = None) -> CallRecord:
        return CallRecord(c.key, self.config.model, error is None, error=error, prompt_tokens=c.prompt_tokens,
                          completion_tokens=c.completion_tokens, cost=c.cost, cost_known=c.cost_known,
                          latency_ms=c.latency * 1000, cached=c.cached, attempts=c.attempts, purpose=purpose,
                          raw=c.text if error is not None else None)

    def _log(self, record: CallRecord) -> None:
        self._usage[record.purpose] = self._usage.get(record.purpose, Usage()) + record.usage()
        if self.cache is not None:
            self.cache.log(record)

    def _estimate(self, convo: list[dict], params: Mapping[str, Any], key: str, cached: bool = False) -> Estimate:
        if cached:
            return Estimate(key, 0, 0, 0.0, True, True)
        if not self.priced and not self.dry_run:
            return Estimate(key, 0, 0, 0.0, False, False)  # nothing to weigh against a budget: skip counting
        prompt = count_tokens(self.price_model, convo)
        limit = params.get("max_completion_tokens") or params.get("max_tokens")
        total, n = self._seen_completion_tokens
        reply = int(limit) if limit else (round(total / n) if n else DEFAULT_COMPLETION_TOKENS)
        cost, known = call_cost(self.price_model, prompt, reply, self.prices) if self.priced else (0.0, False)
        return Estimate(key, prompt, reply, cost, known, False)


@dataclass
class _Turns:
    """One `ask` so far (mutable: it grows turn by turn): the conversation and parameters the next turn
    sends, every reply, the last reply and why it could not be read."""

    convo: list[dict]
    params: dict
    first_key: str = ""
    completions: list[Completion] = field(default_factory=list)
    raw: str | None = None
    reason: str = ""
    turn: int = 0
    fresh: int = 0  # replies paid for in this call (replayed cached turns are not)

    def reask(self, completion: Completion, reason: str) -> None:
        """The next turn: the unreadable reply and what was wrong with it added, a longer bound if it was cut."""
        self.raw, self.reason = completion.text, reason
        if completion.finish_reason == "length":
            self.params = _longer(self.params)
        self.convo = self.convo + reask_messages(completion.text, reason)
        self.turn += 1
        self.fresh += 0 if completion.cached else 1

    def answered(self, value: Any, completion: Completion) -> Outcome:
        return Outcome(True, value, raw=completion.text, completions=tuple(self.completions), key=self.first_key)

    def failed(self, error: str) -> Outcome:
        return Outcome(False, error=error, raw=self.raw, completions=tuple(self.completions), key=self.first_key)

    def unreadable(self) -> Outcome:
        tries = "try" if len(self.completions) == 1 else f"{len(self.completions)} tries"
        return self.failed(f"unreadable reply after {tries}: {self.reason}")


def _reading(parse: Callable[[str], Any] | None, completion: Completion) -> tuple[Any, str]:
    """(the value `parse` reads from the reply, "") or (None, why it cannot be read)."""
    try:
        return _read(parse, completion), ""
    except ValueError as exc:
        return None, exc.reason if isinstance(exc, ParseError) else _first_line(exc, 200)


def _read(parse: Callable[[str], Any] | None, completion: Completion) -> Any:
    text = completion.text
    if parse is None:
        if not text.strip():
            raise ParseError("the reply is empty")
        return text
    if completion.finish_reason == "length":
        raise ParseError("the reply was cut off at its length limit before it finished; give only the answer, "
                         "in the requested format, without explanations")
    return parse(text)


def _longer(params: Mapping[str, Any]) -> dict:
    """`params` with the reply bound doubled (a reply was cut by it)."""
    out = dict(params)
    for name in ("max_completion_tokens", "max_tokens"):
        if out.get(name):
            out[name] = min(MOST_REPLY_TOKENS, int(out[name]) * 2)
    return out


def _refuses_schema(exc: BaseException, status: int | None = None) -> bool:
    """True when a server refused a request because of its `response_format` (4xx, or a 500 that names it:
    llama-cpp-python's server answers 500 to a request its validation rejects)."""
    text = str(exc).lower()
    status = status if status is not None else getattr(exc, "status", None)
    return status in (400, 415, 422, 500, 501) and any(w in text for w in ("response_format", "json_schema"))
