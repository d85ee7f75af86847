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
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from trecbench.llm._litellm import load
from trecbench.llm.budget import Budget, Estimate, Plan
from trecbench.llm.cache import ResponseCache
from trecbench.llm.config import ModelConfig, check_model_name, first_line, structured_output_setting
from trecbench.llm.cost import call_cost, count_text_tokens, count_tokens, is_priced
from trecbench.llm.errors import LLMError, ModelCallError, ParseError
from trecbench.llm.parse import reask_messages
from trecbench.llm.records import CallRecord, Completion, Outcome, Usage
from trecbench.llm.retry import (FirstContact, RateLimiter, backoff_delay, classify, missing_credentials,
                                 out_of_quota, retry_after, status_of, unreachable)
from trecbench.llm.request import RequestForm, as_messages, deployments, sdk_endpoints
from trecbench.llm.transport import OpenAITransport, Unsent, make_transport

__all__ = ["ModelConfig", "LLM", "check_model_name", "structured_output_setting"]

Messages = Sequence[Mapping[str, Any]]
DEFAULT_COMPLETION_TOKENS = 256  # expected reply length for estimates, until real replies are seen
MAX_REPLAYED = 8  # cached unreadable turns replayed before asking afresh
MOST_REPLY_TOKENS = 16384  # a reply cut by length is re-asked with twice its bound, up to this


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
        self._deployments = deployments(config)
        # A dry run sends nothing: no transport is made, so neither litellm nor the openai SDK is imported.
        self.transport = (Unsent(sdk_endpoints(load, config.transport, config.model, config.api_base, config.api_key,
                                               self._deployments) is not None) if dry_run else
                          make_transport(load, config.transport, config.model, config.api_base, config.api_key,
                                         self._deployments, config.timeout))
        if not self._through_sdk():  # the SDK's servers need no provider lookup
            for model in [d["model"] for d in self._deployments] or [config.model]:
                check_model_name(model)
        self.requests = RequestForm(config, sdk=self._through_sdk(), dry_run=dry_run)  # parameters and cache keys
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
        turns = _Turns(as_messages(messages), {**self.config.params, **params})
        # `fresh` counts the replies asked for in this call; replayed cached turns do not use up `reask`,
        # so a rerun replays what was paid for and then still re-asks (at most MAX_REPLAYED of them).
        while turns.fresh <= reask and turns.turn <= reask + MAX_REPLAYED:
            sent = self.requests.params(turns.params, schema, turns.turn)
            key = self.requests.key(turns.convo, sent)
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
                self.requests.refused_schema_form()
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
        """Whether requests with a schema carry it as `response_format` (`RequestForm.uses_structured_output`)."""
        return self.requests.uses_structured_output()

    def first_request(self, messages: str | Messages, *, schema: Mapping[str, Any] | None = None,
                      **params: Any) -> tuple[list[dict], dict, str]:
        """(messages, parameters, cache key) of the first request `ask` would send for these arguments."""
        return self.requests.first(messages, schema=schema, **params)

    def takes_seed(self) -> bool:
        """Whether requests may carry `seed` (`RequestForm.takes_seed`)."""
        return self.requests.takes_seed()

    async def complete(self, messages: str | Messages, *, purpose: str = "", use_cache: bool = True,
                       **params: Any) -> Completion:
        """One reply as text (cached, retried, logged); raises ModelCallError when no usable reply came."""
        outcome = await self.ask(messages, reask=0, purpose=purpose, use_cache=use_cache, **params)
        if outcome.dry_run:
            raise LLMError("dry run: no call was made")
        if not outcome.ok or outcome.completion is None:
            raise ModelCallError(outcome.error or "no reply", model=self.config.model, attempts=outcome.attempts)
        return outcome.completion

    def estimate(self, messages: str | Messages, *, schema: Mapping[str, Any] | None = None,
                 **params: Any) -> Estimate:
        """What asking `messages` would cost now (0 when the cache already holds the reply of its first
        request, keyed as `ask` keys it); sends nothing."""
        convo, sent, key = self.requests.first(messages, schema=schema, **params)
        return self._estimate(convo, sent, key, cached=self.cache is not None and self.cache.get(key) is not None)

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
        message = (f"{model}: {plain} [{where}{first_line(error, 200)}]" if plain else
                   f"{model}: {what} attempt {attempt}: {where}{first_line(error)}")
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
        return None, exc.reason if isinstance(exc, ParseError) else first_line(exc, 200)


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
