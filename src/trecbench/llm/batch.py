"""Requests sent through a provider's batch interface, about half the price of live calls, answered within
the provider's window (24 h): OpenAI's /v1/files + /v1/batches (and servers that copy it, `batch_openai`)
and Anthropic's message batches (`batch_anthropic`), both behind one interface (`BatchAPI`).

The ledger writes a batch down (tables `llm_batches`, `llm_batch_requests`) *before* asking the provider
to create it, and writes the provider's id as soon as it answers: a process killed in between finds its
batch again (`BatchAPI.find`), so nothing is submitted twice. Results are applied in one transaction
(replies into the cache, one call-log row for every request of the batch, the batch marked collected): a
process killed while collecting applies them again from the start, never twice.
"""
from __future__ import annotations

import json
import secrets
from typing import Callable, Iterable, NamedTuple

from trecbench.llm.batch_records import (BatchAPI, BatchRefused, BatchRequest, BatchResult, BatchResults, BatchState,
                                         PendingBatch, read_results)
from trecbench.llm.cache import ResponseCache, canonical_json
from trecbench.llm.config import ModelConfig
from trecbench.llm.cost import batch_cost
from trecbench.llm.errors import LLMError
from trecbench.llm.records import CallRecord, Usage
from trecbench.store import model_calls

__all__ = ["BatchAPI", "BatchLedger", "BatchRefused", "BatchRequest", "BatchState", "BatchResult", "BatchResults",
           "Collected", "PendingBatch", "batch_api", "batch_cost", "read_results", "split_batch"]


class Collected(NamedTuple):
    """What applying a batch did: replies that can be read, their usage, {key: why} of requests without one."""

    read: int
    usage: Usage
    failed: dict[str, str]


def split_batch(requests: list[BatchRequest], max_requests: int, max_bytes: int) -> list[list[BatchRequest]]:
    """`requests` in order, cut into batches within a provider's limits: at most `max_requests` each, and
    their JSON (as written down, plus the provider's framing) within nine tenths of `max_bytes`."""
    parts: list[list[BatchRequest]] = []
    size = 0
    for r in requests:
        n = len(canonical_json(r.request()).encode("utf-8")) + 256
        if not parts or len(parts[-1]) >= max_requests or size + n > max_bytes * 0.9:
            parts.append([])
            size = 0
        parts[-1].append(r)
        size += n
    return parts


# provider prefixes whose batch interface is known without asking litellm (importing it takes seconds)
_BATCH_PROVIDERS = {"openai": "OPENAI_API_KEY", "hosted_vllm": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def batch_api(config: ModelConfig) -> BatchAPI:
    """The batch endpoints for `config`'s model: OpenAI (or an OpenAI-compatible server at its api_base),
    or Anthropic (or a server at its api_base that offers Anthropic's message batches)."""
    import os

    if config.deployments:
        raise LLMError("provider batches go to one server: give one --api-base, not several")
    provider, _, name = config.model.partition("/")
    if provider not in _BATCH_PROVIDERS or not name:
        from trecbench.llm._litellm import load

        name, provider, _, _ = load().get_llm_provider(model=config.model, api_base=config.api_base,
                                                       api_key=config.api_key)
    env_key = os.environ.get(_BATCH_PROVIDERS[provider], "") if provider in _BATCH_PROVIDERS else ""
    if provider in ("openai", "hosted_vllm"):
        from trecbench.llm.batch_openai import OpenAIBatches

        key = config.api_key or env_key
        if not key and not config.api_base:
            raise LLMError("provider batches need an API key: --api-key or OPENAI_API_KEY")
        return OpenAIBatches(config.api_base, key or "none", name, config.timeout)
    if provider == "anthropic":
        from trecbench.llm.batch_anthropic import AnthropicBatches

        key = config.api_key or env_key
        if not key:
            raise LLMError("Anthropic message batches need an API key: --api-key or ANTHROPIC_API_KEY")
        return AnthropicBatches(config.api_base, key, config.model, config.timeout)
    raise LLMError(f"model {config.model!r} ({provider}): provider batches are supported for OpenAI, "
                   "OpenAI-compatible servers (openai/... or hosted_vllm/... with --api-base) and Anthropic "
                   "(anthropic/...)")


class BatchLedger:
    """The workspace's record of batches, on the reply cache's connection (so results apply atomically)."""

    def __init__(self, cache: ResponseCache):
        self.cache = cache
        self.conn = cache.conn

    def open_batches(self, purpose: str) -> list[tuple[int, str, str | None, str]]:
        """(row id, token, provider id, state) of batches not collected yet, oldest first."""
        with self.cache._lock:
            return model_calls.open_batches(self.conn, purpose)

    def keys(self, purpose: str) -> dict[str, str]:
        """{key: state of the newest batch that holds it} for every request this purpose ever batched."""
        with self.cache._lock:
            return model_calls.batched_keys(self.conn, purpose)

    def requests(self, row: int) -> dict[str, dict]:
        with self.cache._lock:
            return {k: json.loads(r) for k, r in model_calls.batch_requests(self.conn, row)}

    def pending(self, row: int) -> PendingBatch:
        """What `BatchAPI.find` needs to recognise the batch of `row`."""
        with self.cache._lock:
            token, created, keys, known = model_calls.pending_batch(self.conn, row)
        return PendingBatch(token, created, frozenset(keys), frozenset(known))

    def begin(self, model: str, purpose: str, requests: list[BatchRequest]) -> tuple[int, str]:
        """Write a batch down before it is submitted; (row id, token)."""
        token = secrets.token_hex(12)
        with self.cache._lock:
            try:
                row = model_calls.add_batch(self.conn, token, model, purpose,
                                            [(r.key, canonical_json(r.request())) for r in requests])
                self.conn.commit()
            except BaseException:
                self.conn.rollback()
                raise
        return row, token

    def submitted(self, row: int, batch_id: str) -> None:
        with self.cache._lock:
            model_calls.mark_submitted(self.conn, row, batch_id)
            self.conn.commit()

    def forget(self, row: int) -> None:
        """Drop a batch the provider never created (its requests can be submitted again)."""
        with self.cache._lock:
            model_calls.drop_batch(self.conn, row)
            self.conn.commit()
    def collect(self, row: int, state: BatchState, results: Iterable[BatchResult], *, purpose: str,
                price_model: str, priced: bool, readable: Callable[[str, str], str | None]) -> Collected:
        """Apply a finished batch in one transaction: every reply into the cache (as a live reply is, read or
        not: the caller's live loop replays it and re-asks what it cannot read), a call-log row for each
        request of the batch (a request without a reply, or without any result line, is a failed call), the
        batch marked collected. `readable(key, text)` says why a reply cannot be read (None: it can)."""
        requests = self.requests(row)
        by_key = {r.key: r for r in results if r.key in requests}  # lines of other batches are ignored
        read, usage, failed = 0, Usage(), {}
        with self.cache._lock:
            try:
                for key, request in requests.items():
                    r = by_key.get(key) or BatchResult(key, None, 0, 0, None, "no result for this request in the batch")
                    cost, known = (batch_cost(price_model, r.prompt_tokens, r.completion_tokens) if priced
                                   else (0.0, False)) if r.text is not None else (0.0, True)
                    why = r.error if r.text is None else readable(r.key, r.text)
                    if r.text is not None:
                        self.cache.put(r.key, r.model or request["model"], request, r.text, r.prompt_tokens,
                                       r.completion_tokens, cost, finish_reason=r.finish_reason, commit=False)
                        read += why is None
                        why = None if why is None else f"unreadable reply: {why}"
                    else:
                        failed[key] = why or "no reply"
                    record = CallRecord(r.key, request["model"], why is None, error=why, prompt_tokens=r.prompt_tokens,
                                        completion_tokens=r.completion_tokens, cost=cost, cost_known=known,
                                        purpose=purpose, raw=r.text if why is not None else None, attempts=1)
                    self.cache.log(record, commit=False)
                    usage += record.usage()
                model_calls.mark_collected(self.conn, row, state.status)
                self.conn.commit()
            except BaseException:
                self.conn.rollback()
                raise
        return Collected(read, usage, failed)
