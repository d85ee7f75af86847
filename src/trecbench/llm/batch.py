"""Requests sent through a provider's batch interface (OpenAI's /v1/files + /v1/batches, and servers that
copy it), about half the price of live calls, answered within the provider's window (24 h).

The ledger writes a batch down (tables `llm_batches`, `llm_batch_requests`) *before* asking the provider
to create it, under a token that goes with it as metadata, and writes the provider's id as soon as it
answers: a process killed in between finds its batch again by the token, so nothing is submitted twice.
Results are applied in one transaction (replies into the cache, one call-log row each, the batch marked
collected): a process killed while collecting applies them again from the start, never twice.
"""
from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from trecbench.llm.cache import ResponseCache, _now, canonical_json
from trecbench.llm.client import ModelConfig
from trecbench.llm.cost import call_cost
from trecbench.llm.errors import LLMError
from trecbench.llm.records import CallRecord, Usage

__all__ = ["BatchAPI", "BatchLedger", "BatchRequest", "BatchState", "BatchResult", "batch_api", "batch_cost",
           "TERMINAL"]

TERMINAL = ("completed", "failed", "expired", "cancelled")  # the provider will not answer more of the batch
ENDPOINT = "/v1/chat/completions"


@dataclass(frozen=True)
class BatchRequest:
    """One chat request of a batch: the cache key it is stored under, and its model, messages and params."""

    key: str
    model: str
    messages: list[dict]
    params: Mapping[str, Any]

    def request(self) -> dict:
        return {"model": self.model, "messages": self.messages, "params": dict(self.params)}


@dataclass(frozen=True)
class BatchState:
    """What the provider says about a batch."""

    batch_id: str
    status: str
    completed: int
    failed: int
    total: int
    output_file: str | None
    error_file: str | None

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL


@dataclass(frozen=True)
class BatchResult:
    """One answered request: its key and either the reply (text, token counts) or why there is none."""

    key: str
    text: str | None
    prompt_tokens: int
    completion_tokens: int
    model: str | None
    error: str | None
    finish_reason: str | None = None


def batch_cost(model: str, prompt_tokens: int, completion_tokens: int) -> tuple[float, bool]:
    """(USD, known) of a batch request: litellm's batch prices where it has them, else half the live price."""
    from trecbench.llm._litellm import load

    litellm = load()
    try:
        info = litellm.get_model_info(model=model)
    except Exception:
        info = {}
    ins, outs = info.get("input_cost_per_token_batches"), info.get("output_cost_per_token_batches")
    if ins is not None and outs is not None:
        return float(ins) * prompt_tokens + float(outs) * completion_tokens, True
    cost, known = call_cost(model, prompt_tokens, completion_tokens)
    return cost * 0.5, known


class BatchAPI:
    """OpenAI's batch endpoints on one server, through the openai SDK."""

    def __init__(self, api_base: str | None, api_key: str, model: str, timeout: float = 60.0):
        from openai import OpenAI

        self.model = model  # the name the server knows the model by
        self.client = OpenAI(base_url=api_base, api_key=api_key, max_retries=2, timeout=timeout)

    def submit(self, requests: Iterable[BatchRequest], token: str) -> str:
        """Upload the requests as a JSONL file, create the batch; its id."""
        lines = [json.dumps({"custom_id": r.key, "method": "POST", "url": ENDPOINT,
                             "body": {"model": self.model, "messages": r.messages, **dict(r.params)}},
                            ensure_ascii=False) for r in requests]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        uploaded = self.client.files.create(file=(f"trecbench-{token}.jsonl", data), purpose="batch")
        batch = self.client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions",
                                           completion_window="24h",
                                           metadata={"trecbench": token})
        return batch.id

    def find(self, token: str) -> str | None:
        """The id of the batch created with `token`, if the provider has one."""
        for batch in self.client.batches.list(limit=100):
            if (batch.metadata or {}).get("trecbench") == token:
                return batch.id
        return None

    def state(self, batch_id: str) -> BatchState:
        b = self.client.batches.retrieve(batch_id)
        counts = b.request_counts
        return BatchState(b.id, b.status, getattr(counts, "completed", 0) or 0, getattr(counts, "failed", 0) or 0,
                          getattr(counts, "total", 0) or 0, b.output_file_id, b.error_file_id)

    def results(self, state: BatchState) -> list[BatchResult]:
        """Every answered or failed request of a finished batch (output file, then error file)."""
        out: list[BatchResult] = []
        for file_id in (state.output_file, state.error_file):
            if not file_id:
                continue
            text = self.client.files.content(file_id).text
            for number, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    out.append(_result(line, f"{state.batch_id} file {file_id}:{number}"))
        return out


def _result(line: str, where: str) -> BatchResult:
    try:
        row = json.loads(line)
        key = row["custom_id"]
    except (ValueError, KeyError, TypeError):
        raise LLMError(f"batch {where}: not a batch result line (JSON with a custom_id)") from None
    response = row.get("response") or {}
    body = response.get("body") or {}
    if row.get("error") or response.get("status_code") != 200:
        error = row.get("error") or body.get("error") or {}
        message = error.get("message") if isinstance(error, dict) else str(error)
        return BatchResult(key, None, 0, 0, None, f"batch request failed (status {response.get('status_code')}): "
                                                  f"{message or 'no reason given'}")
    try:
        choice = body["choices"][0]
        text, finish = choice["message"]["content"], choice.get("finish_reason")
    except (KeyError, IndexError, TypeError):
        text, finish = None, None
    usage = body.get("usage") or {}
    if text is None:
        return BatchResult(key, None, 0, 0, None, "batch reply without a message")
    return BatchResult(key, text, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0),
                       body.get("model"), None, finish)


def batch_api(config: ModelConfig) -> BatchAPI:
    """The batch endpoints for `config`'s model: OpenAI, or an OpenAI-compatible server at its api_base."""
    import os

    from trecbench.llm._litellm import load

    if config.deployments:
        raise LLMError("provider batches go to one server: give one --api-base, not several")
    litellm = load()
    name, provider, env_key, _ = litellm.get_llm_provider(model=config.model, api_base=config.api_base,
                                                          api_key=config.api_key)
    if provider not in ("openai", "hosted_vllm"):
        raise LLMError(f"model {config.model!r} ({provider}): provider batches are supported for OpenAI and "
                       "OpenAI-compatible servers (openai/... or hosted_vllm/... with --api-base)")
    key = config.api_key or env_key or os.environ.get("OPENAI_API_KEY")
    if not key:
        if not config.api_base:
            raise LLMError("provider batches need an API key: --api-key or OPENAI_API_KEY")
        key = "none"
    return BatchAPI(config.api_base, key, name, config.timeout)


class BatchLedger:
    """The workspace's record of batches, on the reply cache's connection (so results apply atomically)."""

    def __init__(self, cache: ResponseCache):
        self.cache = cache
        self.conn = cache.conn

    def open_batches(self, purpose: str) -> list[tuple[int, str, str | None, str]]:
        """(row id, token, provider id, state) of batches not collected yet, oldest first."""
        with self.cache._lock:
            return self.conn.execute(
                "SELECT id, token, batch_id, state FROM llm_batches WHERE purpose = ? AND state != 'collected'"
                " ORDER BY id", (purpose,)).fetchall()

    def keys(self, purpose: str) -> dict[str, str]:
        """{key: state of the newest batch that holds it} for every request this purpose ever batched."""
        with self.cache._lock:
            rows = self.conn.execute(
                "SELECT r.key, b.state FROM llm_batch_requests r JOIN llm_batches b ON b.id = r.batch"
                " WHERE b.purpose = ? ORDER BY b.id", (purpose,)).fetchall()
        return dict(rows)

    def requests(self, row: int) -> dict[str, dict]:
        with self.cache._lock:
            return {k: json.loads(r) for k, r in self.conn.execute(
                "SELECT key, request_json FROM llm_batch_requests WHERE batch = ?", (row,))}

    def begin(self, model: str, purpose: str, requests: list[BatchRequest]) -> tuple[int, str]:
        """Write a batch down before it is submitted; (row id, token)."""
        token = secrets.token_hex(12)
        with self.cache._lock:
            try:
                cur = self.conn.execute(
                    "INSERT INTO llm_batches (token, model, purpose, state, requests, created_at)"
                    " VALUES (?, ?, ?, 'submitting', ?, ?)", (token, model, purpose, len(requests), _now()))
                row = int(cur.lastrowid or 0)
                self.conn.executemany("INSERT INTO llm_batch_requests (batch, key, request_json) VALUES (?, ?, ?)",
                                      [(row, r.key, canonical_json(r.request())) for r in requests])
                self.conn.commit()
            except BaseException:
                self.conn.rollback()
                raise
        return row, token

    def submitted(self, row: int, batch_id: str) -> None:
        with self.cache._lock:
            self.conn.execute("UPDATE llm_batches SET batch_id = ?, state = 'submitted' WHERE id = ?", (batch_id, row))
            self.conn.commit()

    def forget(self, row: int) -> None:
        """Drop a batch the provider never created (its requests can be submitted again)."""
        with self.cache._lock:
            self.conn.execute("DELETE FROM llm_batch_requests WHERE batch = ?", (row,))
            self.conn.execute("DELETE FROM llm_batches WHERE id = ?", (row,))
            self.conn.commit()

    def collect(self, row: int, state: BatchState, results: list[BatchResult], *, purpose: str, price_model: str,
                priced: bool, readable: Callable[[str, str], str | None]) -> tuple[int, Usage]:
        """Apply a finished batch in one transaction: every reply into the cache (as a live reply is, read or
        not: the caller's live loop replays it and re-asks what it cannot read), a call-log row for each
        result, the batch marked collected. `readable(key, text)` says why a reply cannot be read (None: it
        can). Returns (replies that can be read, usage)."""
        requests = self.requests(row)
        read, usage = 0, Usage()
        with self.cache._lock:
            try:
                for r in results:
                    request = requests.get(r.key)
                    if request is None:
                        continue  # not a request of this batch
                    cost, known = (batch_cost(price_model, r.prompt_tokens, r.completion_tokens) if priced
                                   else (0.0, False)) if r.text is not None else (0.0, True)
                    why = r.error if r.text is None else readable(r.key, r.text)
                    if r.text is not None:
                        self.cache.put(r.key, r.model or request["model"], request, r.text, r.prompt_tokens,
                                       r.completion_tokens, cost, finish_reason=r.finish_reason, commit=False)
                        read += why is None
                        why = None if why is None else f"unreadable reply: {why}"
                    record = CallRecord(r.key, request["model"], why is None, error=why, prompt_tokens=r.prompt_tokens,
                                        completion_tokens=r.completion_tokens, cost=cost, cost_known=known,
                                        purpose=purpose, raw=r.text if why is not None else None, attempts=1)
                    self.cache.log(record, commit=False)
                    usage += record.usage()
                self.conn.execute("UPDATE llm_batches SET state = 'collected', provider_status = ?, collected_at = ?"
                                  " WHERE id = ?", (state.status, _now(), row))
                self.conn.commit()
            except BaseException:
                self.conn.rollback()
                raise
        return read, usage
