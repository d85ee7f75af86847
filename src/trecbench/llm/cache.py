"""The exact-match reply cache and the call log, two tables in the bench's SQLite store.

Every reply is cached under sha256(canonical JSON of model, messages, params) the moment it arrives,
readable or not, in the same commit as its row in `llm_calls`: a reply that was paid for is never asked
for again, and a killed run's call log is complete. A rerun replays an unreadable cached reply as what
it was (the client then re-asks, and that re-ask is cached too), so it never poisons a rerun either.
Every call, cached or not, ok or not, gets a row in `llm_calls`. This module says what is cached and
logged, and when it is committed; the rows are read and written by `trecbench.store.model_calls`.

Ours rather than litellm's cache (litellm.Cache, on disk through diskcache or in Redis): that cache is a
second store beside the bench, filled inside litellm's completion calls only, so it could not commit a
reply with its call-log row, would miss the openai transport, and would import litellm where a test
(test_llm_replies.py) checks that judging an OpenAI-compatible server never does.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from typing import Any, Mapping, NamedTuple, Sequence

from trecbench.llm.records import CallRecord, Usage
from trecbench.store import model_calls
from trecbench.store.model_calls import ensure_schema

__all__ = ["ensure_schema", "request_key", "canonical_json", "CachedReply", "ResponseCache"]


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: equal requests give equal text, hence equal keys."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False,
                      default=str)


def request_key(model: str, messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any]) -> str:
    """sha256 (hex) of the canonical JSON of (model, messages, params)."""
    payload = canonical_json({"model": model, "messages": list(messages), "params": dict(params)})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class CachedReply(NamedTuple):
    """A reply found in the cache, with the usage it had when it was first paid for."""

    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost: float
    finish_reason: str | None = None


class ResponseCache:
    """Reply cache and call log over one SQLite connection (given, or opened from a path in WAL mode).

    Every statement runs under one lock and is committed at once, so asyncio tasks and threads may share
    the cache. A connection passed in is used as it is (its owner closes it); one opened from a path is
    created with `check_same_thread=False`, since the lock serialises its use.
    """

    def __init__(self, db: sqlite3.Connection | str | os.PathLike[str]):
        self._lock = threading.RLock()
        if isinstance(db, sqlite3.Connection):
            self.conn, self._owned = db, False
        else:
            self.conn, self._owned = model_calls.open_database(os.fspath(db)), True
        with self._lock:
            model_calls.use_wal(self.conn)
            ensure_schema(self.conn)
            self.conn.commit()

    def get(self, key: str) -> CachedReply | None:
        """The cached reply for `key`, or None."""
        with self._lock:
            row = model_calls.cached_reply(self.conn, key)
        return CachedReply(*row) if row else None

    def put(self, key: str, model: str, request: Mapping[str, Any], text: str, prompt_tokens: int = 0,
            completion_tokens: int = 0, cost: float = 0.0, *, finish_reason: str | None = None,
            commit: bool = True) -> None:
        """Store a reply (replacing any older one under the same key).

        With `commit=False` the row waits for the next commit (the `log` of the same call makes it).
        """
        with self._lock:
            model_calls.store_reply(self.conn, key, model, canonical_json(request), text, prompt_tokens,
                                    completion_tokens, cost, finish_reason)
            if commit:
                self.conn.commit()

    def log(self, call: CallRecord, *, commit: bool = True) -> None:
        """Append one row to `llm_calls` (with `commit=False` it waits for the caller's commit)."""
        with self._lock:
            model_calls.log_call(self.conn, call)
            if commit:
                self.conn.commit()

    def usage_by_purpose(self) -> dict[str, Usage]:
        """Usage totals per purpose over the whole call log (all runs, not only this process)."""
        with self._lock:
            rows = model_calls.usage_rows(self.conn)
        out = {}
        for purpose, calls, cached, failed, attempts, prompt, completion, cost, unpriced in rows:
            out[purpose] = Usage(int(calls or 0), int(cached or 0), int(failed or 0), int(attempts or 0),
                                 int(prompt or 0), int(completion or 0), float(cost or 0.0), int(unpriced or 0))
        return out

    def usage(self, purpose: str | None = None) -> Usage:
        """Usage totals over the call log, for one purpose or all."""
        totals = self.usage_by_purpose()
        if purpose is not None:
            return totals.get(purpose, Usage())
        return sum(totals.values(), Usage())

    def close(self) -> None:
        """Close the connection if this cache opened it."""
        if self._owned:
            with self._lock:
                self.conn.close()
