"""The exact-match reply cache and the call log, two tables in the bench's SQLite store.

Every reply is cached under sha256(canonical JSON of model, messages, params) the moment it arrives,
readable or not, in the same commit as its row in `llm_calls`: a reply that was paid for is never asked
for again, and a killed run's call log is complete. A rerun replays an unreadable cached reply as what
it was (the client then re-asks, and that re-ask is cached too), so it never poisons a rerun either.
Every call, cached or not, ok or not, gets a row in `llm_calls`.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from datetime import datetime, timezone
from typing import Any, Mapping, NamedTuple, Sequence

from trecbench.llm.records import CallRecord, Usage

__all__ = ["ensure_schema", "request_key", "canonical_json", "CachedReply", "ResponseCache"]

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS llm_cache (
        key TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        request_json TEXT NOT NULL,
        response_text TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        cost REAL NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS llm_calls (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        key TEXT NOT NULL,
        model TEXT NOT NULL,
        ok INTEGER NOT NULL,
        error TEXT,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        cost REAL NOT NULL DEFAULT 0,
        latency_ms REAL NOT NULL DEFAULT 0,
        cached INTEGER NOT NULL DEFAULT 0,
        attempts INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        purpose TEXT NOT NULL DEFAULT '',
        cost_known INTEGER NOT NULL DEFAULT 1,
        raw TEXT
    )""",
    "CREATE INDEX IF NOT EXISTS llm_calls_by_purpose ON llm_calls (purpose)",
    "CREATE INDEX IF NOT EXISTS llm_calls_by_key ON llm_calls (key)",
)


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the `llm_cache` and `llm_calls` tables if missing (idempotent; the caller commits)."""
    for statement in _SCHEMA:
        conn.execute(statement)
    columns = {row[1] for row in conn.execute("PRAGMA table_info(llm_cache)")}
    if "finish_reason" not in columns:  # caches written before replies cut by length were told apart
        conn.execute("ALTER TABLE llm_cache ADD COLUMN finish_reason TEXT")


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


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


_USAGE_SQL = """SELECT purpose,
    SUM(cached = 0), SUM(cached = 1), SUM(ok = 0), SUM(CASE WHEN cached = 0 THEN attempts ELSE 0 END),
    SUM(CASE WHEN cached = 0 THEN prompt_tokens ELSE 0 END),
    SUM(CASE WHEN cached = 0 THEN completion_tokens ELSE 0 END),
    SUM(CASE WHEN cached = 0 THEN cost ELSE 0 END), SUM(cached = 0 AND cost_known = 0)
    FROM llm_calls GROUP BY purpose"""


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
            self.conn, self._owned = sqlite3.connect(os.fspath(db), timeout=30, check_same_thread=False), True
            # WAL + NORMAL: a commit per row costs microseconds and survives a kill; a power cut may lose the last rows.
            self.conn.execute("PRAGMA synchronous=NORMAL")
        with self._lock:
            if not self.conn.in_transaction:
                self.conn.execute("PRAGMA journal_mode=WAL")
            ensure_schema(self.conn)
            self.conn.commit()

    def get(self, key: str) -> CachedReply | None:
        """The cached reply for `key`, or None."""
        with self._lock:
            row = self.conn.execute(
                "SELECT response_text, model, prompt_tokens, completion_tokens, cost, finish_reason FROM llm_cache"
                " WHERE key = ?",
                (key,)).fetchone()
        return CachedReply(*row) if row else None

    def put(self, key: str, model: str, request: Mapping[str, Any], text: str, prompt_tokens: int = 0,
            completion_tokens: int = 0, cost: float = 0.0, *, finish_reason: str | None = None,
            commit: bool = True) -> None:
        """Store a reply (replacing any older one under the same key).

        With `commit=False` the row waits for the next commit (the `log` of the same call makes it).
        """
        with self._lock:
            self.conn.execute(
                "INSERT OR REPLACE INTO llm_cache (key, model, request_json, response_text, prompt_tokens,"
                " completion_tokens, cost, created_at, finish_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (key, model, canonical_json(request), text, prompt_tokens, completion_tokens, cost, _now(),
                 finish_reason))
            if commit:
                self.conn.commit()

    def log(self, call: CallRecord, *, commit: bool = True) -> None:
        """Append one row to `llm_calls` (with `commit=False` it waits for the caller's commit)."""
        with self._lock:
            self.conn.execute(
                "INSERT INTO llm_calls (key, model, ok, error, prompt_tokens, completion_tokens, cost, latency_ms,"
                " cached, attempts, created_at, purpose, cost_known, raw)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (call.key, call.model, int(call.ok), call.error, call.prompt_tokens, call.completion_tokens,
                 call.cost, round(call.latency_ms, 3), int(call.cached), call.attempts, _now(), call.purpose,
                 int(call.cost_known), call.raw))
            if commit:
                self.conn.commit()

    def usage_by_purpose(self) -> dict[str, Usage]:
        """Usage totals per purpose over the whole call log (all runs, not only this process)."""
        with self._lock:
            rows = self.conn.execute(_USAGE_SQL).fetchall()
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
