"""The bench store's SQLite schema, as numbered migrations applied in order (PRAGMA user_version)."""
from __future__ import annotations

import sqlite3

# Each migration is applied once, in a transaction; never edit one that has shipped: add the next.
MIGRATIONS: list[str] = [
    # 1: topics, judges, judgments, assessors, pools, provenance
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE topics (
        qid TEXT PRIMARY KEY, text TEXT NOT NULL, narrative TEXT, fields_json TEXT NOT NULL DEFAULT '{}'
    );
    CREATE TABLE judges (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('human', 'model', 'import')),
        name TEXT NOT NULL,
        model TEXT, prompt_id TEXT, prompt_hash TEXT, params_json TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        UNIQUE (kind, name, model, prompt_id, prompt_hash, params_json)
    );
    CREATE TABLE judgments (
        id INTEGER PRIMARY KEY,
        qid TEXT NOT NULL, docid TEXT NOT NULL,
        grade INTEGER,                      -- NULL when status = 'failed'
        status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
        judge_id INTEGER NOT NULL REFERENCES judges(id),
        raw_reply TEXT, rationale TEXT, error TEXT,
        propagated_from TEXT,               -- docid of the duplicate whose judgment this copies
        doc_hash TEXT,                      -- sha256 of the document text judged
        created_at TEXT NOT NULL,
        CHECK (status = 'failed' OR grade IS NOT NULL)
    );
    CREATE INDEX judgments_pair ON judgments (qid, docid);
    CREATE INDEX judgments_judge ON judgments (judge_id, qid, docid);
    CREATE TABLE assessors (
        id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, token_hash TEXT NOT NULL, created_at TEXT NOT NULL
    );
    CREATE TABLE leases (
        qid TEXT NOT NULL, docid TEXT NOT NULL, assessor TEXT NOT NULL, expires_at REAL NOT NULL,
        PRIMARY KEY (qid, docid, assessor)
    );
    CREATE TABLE pools (
        id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, strategy TEXT NOT NULL, params_json TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE pool_candidates (
        pool_id INTEGER NOT NULL REFERENCES pools(id), qid TEXT NOT NULL, docid TEXT NOT NULL,
        priority INTEGER NOT NULL, best_rank INTEGER, n_runs INTEGER, runs TEXT,
        dup_group TEXT, representative INTEGER NOT NULL DEFAULT 1,
        PRIMARY KEY (pool_id, qid, docid)
    );
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, file TEXT NOT NULL, sha256 TEXT NOT NULL,
        imported_at TEXT NOT NULL
    );
    CREATE TABLE provenance (
        id INTEGER PRIMARY KEY, command TEXT NOT NULL, args_json TEXT NOT NULL, version TEXT NOT NULL,
        started_at TEXT NOT NULL, finished_at TEXT, outcome TEXT
    );
    """,
    # 2: nuggets (current state), their versions (every edit, with author, time and a full snapshot),
    #    the query text of imported nugget topics, and drafting runs per (topic, drafter) for resume
    """
    CREATE TABLE nuggets (
        id TEXT PRIMARY KEY,
        qid TEXT NOT NULL,
        text TEXT NOT NULL,
        importance TEXT NOT NULL CHECK (importance IN ('vital', 'okay')),
        status TEXT NOT NULL CHECK (status IN ('draft', 'approved')),
        origin TEXT NOT NULL,
        position INTEGER NOT NULL,          -- 0-based order among the topic's live nuggets
        support_json TEXT NOT NULL DEFAULT '[]',   -- [[{"docid", "doc_hash"}, ...], ...]: alternatives of joint groups
        extra_json TEXT NOT NULL DEFAULT '{}',
        deleted INTEGER NOT NULL DEFAULT 0,
        version INTEGER NOT NULL,
        updated_by TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX nuggets_by_topic ON nuggets (qid, deleted, position);
    CREATE TABLE nugget_versions (
        id INTEGER PRIMARY KEY,
        nugget_id TEXT NOT NULL REFERENCES nuggets(id),
        version INTEGER NOT NULL,
        action TEXT NOT NULL,
        author TEXT NOT NULL,
        created_at TEXT NOT NULL,
        snapshot_json TEXT NOT NULL,        -- the nugget's whole state after this action
        detail_json TEXT NOT NULL DEFAULT '{}',
        UNIQUE (nugget_id, version)
    );
    CREATE TABLE nugget_topics (qid TEXT PRIMARY KEY, query TEXT);
    CREATE TABLE nugget_drafts (
        qid TEXT NOT NULL,
        drafter TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'incomplete')),
        params_json TEXT NOT NULL DEFAULT '{}',
        problems_json TEXT NOT NULL DEFAULT '[]',
        nuggets INTEGER NOT NULL DEFAULT 0,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        PRIMARY KEY (qid, drafter)
    );
    """,
    # 3: pools keep each candidate's rank in every run that retrieved it, so adaptive strategies
    #    (mtf, maxmean) can walk the runs again when judging from the workspace
    """
    ALTER TABLE pool_candidates ADD COLUMN ranks TEXT;
    """,
]


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the database to the newest schema; returns the version it is at."""
    from trecbench.llm.cache import ensure_schema as ensure_llm_schema

    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > len(MIGRATIONS):
        raise RuntimeError(f"bench.sqlite has schema version {version}, newer than this trecbench "
                           f"({len(MIGRATIONS)}): upgrade trecbench")
    for number, sql in enumerate(MIGRATIONS[version:], start=version + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(sql):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    ensure_llm_schema(conn)
    ensure_web_schema(conn)
    return len(MIGRATIONS)


def ensure_web_schema(conn: sqlite3.Connection) -> None:
    """The assessor app's login sessions: one row per session, so that a logout, `assessors remove` or a
    new token ends it on the server. Created when missing (no numbered migration: a database without the
    table is otherwise unchanged); a no-op on a database that has it."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'web_sessions'").fetchone():
        return
    conn.execute("CREATE TABLE IF NOT EXISTS web_sessions (id TEXT PRIMARY KEY, assessor TEXT NOT NULL, "
                 "via TEXT NOT NULL, created_at TEXT NOT NULL)")


def _statements(sql: str) -> list[str]:
    lines = [line.split("--")[0] for line in sql.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
