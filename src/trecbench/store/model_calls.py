"""The model calls a bench keeps: the reply cache (`llm_cache`), the call log (`llm_calls`) and provider batches
(`llm_batches`, `llm_batch_requests`), each query once, over a connection the caller owns.

trecbench.llm decides what is cached, logged and batched, holds the lock and commits; this module only
reads and writes the rows (no statement here commits, so a caller can make several of them one
transaction). It imports nothing but the standard library: judging against an OpenAI-compatible server
and provider batches run without litellm, and the store must not bring it in.

The cache and the log are tables of the bench's own SQLite file, not a cache library's store, so that a
reply and its row in the log are one transaction (llm/cache.py says why no other cache fits).
"""
from __future__ import annotations

import os
import sqlite3
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Iterable, NamedTuple

if TYPE_CHECKING:
    from trecbench.llm.records import CallRecord

__all__ = ["ensure_schema", "open_database", "open_read_only", "use_wal", "now", "CachedRow", "cached_reply", "has_reply",
           "has_model_cache", "has_replies", "store_reply", "reply_costs", "log_call", "usage_rows", "models_by_purpose",
           "open_batches", "batched_keys", "batch_requests", "PendingRow", "pending_batch", "add_batch",
           "mark_submitted", "drop_batch", "mark_collected"]

# The two tables trecbench.llm made before the store had versions (store/schema.py requires them from
# schema 4 on and calls ensure_schema for a newer trecbench.llm's columns); the batch tables are schema.py's.
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


def open_database(path: str) -> sqlite3.Connection:
    """A connection to the database at `path` that any thread may use (the caller serialises its use)."""
    conn = sqlite3.connect(path, timeout=30, check_same_thread=False)
    # WAL + NORMAL: a commit per row costs microseconds and survives a kill; a power cut may lose the last rows.
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def open_read_only(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """A connection that can only read the database at `path` (a dry run never creates a table or a row)."""
    return sqlite3.connect(f"file:{os.fspath(path)}?mode=ro", uri=True)


def use_wal(conn: sqlite3.Connection) -> None:
    """Put the database in WAL mode, unless a transaction is open (the mode cannot change inside one)."""
    if not conn.in_transaction:
        conn.execute("PRAGMA journal_mode=WAL")


def now() -> str:
    """The time a row is written: ISO 8601 UTC to the millisecond."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


# -- the reply cache -------------------------------------------------------------------------------------
class CachedRow(NamedTuple):
    """A cached reply's row: its text, the model that answered, its usage when first paid for."""

    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cost: float
    finish_reason: str | None


def cached_reply(conn: sqlite3.Connection, key: str) -> CachedRow | None:
    """The cached reply under `key`, or None."""
    row = conn.execute("SELECT response_text, model, prompt_tokens, completion_tokens, cost, finish_reason"
                       " FROM llm_cache WHERE key = ?", (key,)).fetchone()
    return CachedRow(*row) if row else None


def has_reply(conn: sqlite3.Connection, key: str) -> bool:
    """Whether the cache holds a reply under `key` (reads only: works on a read-only connection)."""
    return conn.execute("SELECT 1 FROM llm_cache WHERE key = ?", (key,)).fetchone() is not None


def has_model_cache(conn: sqlite3.Connection) -> bool:
    """Whether the database has a reply cache at all (a workspace that never called a model may not)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'llm_cache'").fetchone() is not None


def has_replies(conn: sqlite3.Connection) -> bool:
    """Whether the database has a reply cache holding any reply (none: no request needs looking up)."""
    return has_model_cache(conn) and conn.execute("SELECT 1 FROM llm_cache LIMIT 1").fetchone() is not None


def store_reply(conn: sqlite3.Connection, key: str, model: str, request_json: str, text: str, prompt_tokens: int,
                completion_tokens: int, cost: float, finish_reason: str | None) -> None:
    """Write a reply under `key`, replacing any older one (not committed)."""
    conn.execute("INSERT OR REPLACE INTO llm_cache (key, model, request_json, response_text, prompt_tokens,"
                 " completion_tokens, cost, created_at, finish_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 (key, model, request_json, text, prompt_tokens, completion_tokens, cost, now(), finish_reason))


def reply_costs(conn: sqlite3.Connection) -> list[tuple[str, str, float]]:
    """(model, reply text, first-paid cost) of every cached reply; none when the cache was never created."""
    try:
        return conn.execute("SELECT model, response_text, cost FROM llm_cache").fetchall()
    except sqlite3.OperationalError:  # a workspace whose model cache was never created
        return []


# -- the call log ----------------------------------------------------------------------------------------
def log_call(conn: sqlite3.Connection, call: CallRecord) -> None:
    """Append one row to `llm_calls` (not committed)."""
    conn.execute(
        "INSERT INTO llm_calls (key, model, ok, error, prompt_tokens, completion_tokens, cost, latency_ms,"
        " cached, attempts, created_at, purpose, cost_known, raw) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (call.key, call.model, int(call.ok), call.error, call.prompt_tokens, call.completion_tokens, call.cost,
         round(call.latency_ms, 3), int(call.cached), call.attempts, now(), call.purpose, int(call.cost_known),
         call.raw))


_USAGE_SQL = """SELECT purpose,
    SUM(cached = 0), SUM(cached = 1), SUM(ok = 0), SUM(CASE WHEN cached = 0 THEN attempts ELSE 0 END),
    SUM(CASE WHEN cached = 0 THEN prompt_tokens ELSE 0 END),
    SUM(CASE WHEN cached = 0 THEN completion_tokens ELSE 0 END),
    SUM(CASE WHEN cached = 0 THEN cost ELSE 0 END), SUM(cached = 0 AND cost_known = 0)
    FROM llm_calls GROUP BY purpose"""


def usage_rows(conn: sqlite3.Connection) -> list[tuple]:
    """Per purpose: (purpose, calls sent, cached calls, failed calls, attempts, prompt tokens, completion
    tokens, cost, unpriced calls) over the whole call log; the totals count calls that were sent (not cached)."""
    return conn.execute(_USAGE_SQL).fetchall()


def models_by_purpose(conn: sqlite3.Connection) -> dict[str, str]:
    """Each call purpose with the distinct models logged for it, comma separated (SQLite's GROUP_CONCAT)."""
    return dict(conn.execute("SELECT purpose, GROUP_CONCAT(DISTINCT model) FROM llm_calls GROUP BY purpose"))


# -- provider batches ------------------------------------------------------------------------------------
def open_batches(conn: sqlite3.Connection, purpose: str) -> list[tuple[int, str, str | None, str]]:
    """(row id, token, provider id, state) of the purpose's batches not collected yet, oldest first."""
    return conn.execute("SELECT id, token, batch_id, state FROM llm_batches WHERE purpose = ? AND state != 'collected'"
                        " ORDER BY id", (purpose,)).fetchall()


def batched_keys(conn: sqlite3.Connection, purpose: str) -> dict[str, str]:
    """{key: state of the newest batch that holds it} for every request this purpose ever batched."""
    return dict(conn.execute("SELECT r.key, b.state FROM llm_batch_requests r JOIN llm_batches b ON b.id = r.batch"
                             " WHERE b.purpose = ? ORDER BY b.id", (purpose,)).fetchall())


def batch_requests(conn: sqlite3.Connection, row: int) -> list[tuple[str, str]]:
    """(key, request JSON) of each request of the batch in `row`."""
    return conn.execute("SELECT key, request_json FROM llm_batch_requests WHERE batch = ?", (row,)).fetchall()


class PendingRow(NamedTuple):
    """A written-down batch's token and time, its requests' keys, the provider ids of every batch with one."""

    token: str
    created_at: str
    keys: set[str]
    known: set[str]


def pending_batch(conn: sqlite3.Connection, row: int) -> PendingRow:
    """What the batch in `row` may be recognised by at its provider."""
    token, created = conn.execute("SELECT token, created_at FROM llm_batches WHERE id = ?", (row,)).fetchone()
    known = {b for (b,) in conn.execute("SELECT batch_id FROM llm_batches WHERE batch_id IS NOT NULL")}
    keys = {k for (k,) in conn.execute("SELECT key FROM llm_batch_requests WHERE batch = ?", (row,))}
    return PendingRow(token, created, keys, known)


def add_batch(conn: sqlite3.Connection, token: str, model: str, purpose: str,
              requests: Iterable[tuple[str, str]]) -> int:
    """Write down a batch about to be submitted, with its (key, request JSON) requests; its row id (not committed)."""
    requests = list(requests)
    cur = conn.execute("INSERT INTO llm_batches (token, model, purpose, state, requests, created_at)"
                       " VALUES (?, ?, ?, 'submitting', ?, ?)", (token, model, purpose, len(requests), now()))
    row = int(cur.lastrowid or 0)
    conn.executemany("INSERT INTO llm_batch_requests (batch, key, request_json) VALUES (?, ?, ?)",
                     [(row, key, request) for key, request in requests])
    return row


def mark_submitted(conn: sqlite3.Connection, row: int, batch_id: str) -> None:
    """The provider's id of the batch in `row`: it was created (not committed)."""
    conn.execute("UPDATE llm_batches SET batch_id = ?, state = 'submitted' WHERE id = ?", (batch_id, row))


def drop_batch(conn: sqlite3.Connection, row: int) -> None:
    """Delete the batch in `row` and its requests (not committed)."""
    conn.execute("DELETE FROM llm_batch_requests WHERE batch = ?", (row,))
    conn.execute("DELETE FROM llm_batches WHERE id = ?", (row,))


def mark_collected(conn: sqlite3.Connection, row: int, provider_status: str) -> None:
    """The batch in `row` was applied, with the provider's last status (not committed)."""
    conn.execute("UPDATE llm_batches SET state = 'collected', provider_status = ?, collected_at = ? WHERE id = ?",
                 (provider_status, now(), row))
