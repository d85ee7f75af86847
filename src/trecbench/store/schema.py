"""The bench store's SQLite schema, as numbered migrations applied in order (PRAGMA user_version), and the
checks a database passes before anything reads or writes it.

A workspace's database is refused, with one message and nothing changed, when it is empty, not SQLite,
cut short, damaged (SQLite's quick_check), from a newer trecbench, not a trecbench database, or missing a
table. An older schema is copied to `bench.sqlite.vN.bak` before it is migrated.
"""
from __future__ import annotations

import logging
import sqlite3
import threading
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple, NoReturn

from trecbench.errors import InputError

APPLICATION_ID = 0x74726563  # "trec": PRAGMA application_id of a trecbench database (from schema 4 on)
LLM_TABLES = ("llm_cache", "llm_calls")  # made by trecbench.llm.cache; required from schema 4 on
NOTHING_CHANGED = "nothing was changed"
_HEADER = b"SQLite format 3\x00"

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
    # 4: the database says it is trecbench's; the never-written `provenance` and `runs` tables go (runs are
    #    the files in BENCH/runs/, a pool records the runs it was made from); the model cache tables are
    #    required from here on
    f"""
    PRAGMA application_id = {APPLICATION_ID};
    DROP TABLE provenance;
    DROP TABLE runs;
    """,
    # 5: requests sent through a provider's batch interface: one row per batch (its id once the provider
    #    gave one; `token` finds a batch whose id was never written down), one per request in it
    """
    CREATE TABLE llm_batches (
        id INTEGER PRIMARY KEY,
        token TEXT NOT NULL UNIQUE,          -- sent as the batch's metadata
        batch_id TEXT,                       -- the provider's id; NULL until the provider answered
        model TEXT NOT NULL,
        purpose TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('submitting', 'submitted', 'collected')),
        provider_status TEXT,
        requests INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        collected_at TEXT
    );
    CREATE TABLE llm_batch_requests (
        batch INTEGER NOT NULL REFERENCES llm_batches(id),
        key TEXT NOT NULL,                   -- the reply cache's request key, sent as custom_id
        request_json TEXT NOT NULL,
        PRIMARY KEY (batch, key)
    );
    CREATE INDEX llm_batch_requests_key ON llm_batch_requests (key);
    """,
    # 6: corpus versions: each version's passages (docid, source span, sha256 of the text as 32 bytes), the
    #    texts of the passages the benchmark refers to by hash (an update still knows an old text when the old
    #    corpus file was overwritten), what each update did (changes), and the version a judgment was made on
    #    (NULL: before versions existed, taken as the first) and the judgment a copy was carried from
    """
    CREATE TABLE corpus_versions (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,           -- v1, v2, ...
        created_at TEXT NOT NULL,
        corpus TEXT NOT NULL,                -- the corpus source as given (a path or irds:)
        sources TEXT,                        -- the sources file, if one was given
        passages INTEGER NOT NULL DEFAULT 0,
        spans INTEGER NOT NULL DEFAULT 0,    -- passages with a source span
        parent INTEGER REFERENCES corpus_versions(id),
        summary_json TEXT NOT NULL DEFAULT '{}'   -- the update's counts, per kind and outcome
    );
    CREATE TABLE corpus_passages (
        version INTEGER NOT NULL REFERENCES corpus_versions(id),
        docid TEXT NOT NULL,
        source_id TEXT, start_char INTEGER, end_char INTEGER,
        text_hash BLOB NOT NULL,
        PRIMARY KEY (version, docid)
    ) WITHOUT ROWID;
    CREATE TABLE corpus_texts (hash BLOB PRIMARY KEY, text TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE corpus_changes (
        id INTEGER PRIMARY KEY,
        version INTEGER NOT NULL REFERENCES corpus_versions(id),
        kind TEXT NOT NULL CHECK (kind IN ('judgment', 'link')),
        outcome TEXT NOT NULL CHECK (outcome IN ('mapped', 'split', 'changed', 'retired')),
        qid TEXT NOT NULL,
        ref TEXT NOT NULL,                   -- judgment id, or nugget id and alternative (n1#0)
        docid TEXT NOT NULL,                 -- the passage of the version before
        old_hash BLOB,
        new_docids TEXT NOT NULL DEFAULT '[]',   -- where it went: one passage, the split group, the review pool
        source_id TEXT, start_char INTEGER, end_char INTEGER,   -- where its text is now (changed: the best match)
        new_hash BLOB,                       -- the text there (in corpus_texts)
        note TEXT
    );
    CREATE INDEX corpus_changes_by_version ON corpus_changes (version, outcome);
    ALTER TABLE judgments ADD COLUMN corpus_version INTEGER REFERENCES corpus_versions(id);
    ALTER TABLE judgments ADD COLUMN copied_from INTEGER REFERENCES judgments(id);
    ALTER TABLE judgments ADD COLUMN flag TEXT;   -- 'may be cut': a copy to one passage of a split group
    """,
    # 7: a nugget's link may be a span of its passage: a link of support_json (and of the versions' snapshots)
    #    may hold start, end (characters of the passage's text), span_hash (sha256 of those characters) and,
    #    when the passage has a source span, source_id, start_char, end_char. Links live in that JSON column,
    #    so no table changes; the number is what makes a trecbench from before spans, which would drop them
    #    on its next write of the nugget, refuse the database instead of reading it
    """
    """,
    # 8: an assessor who cannot decide skips a pair with a
    #    comment (no grade: a skip is never a judgment); the organiser reads the comments
    """
    CREATE TABLE skips (
        id INTEGER PRIMARY KEY,
        qid TEXT NOT NULL, docid TEXT NOT NULL,
        assessor TEXT NOT NULL,
        comment TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL
    );
    CREATE INDEX skips_pair ON skips (qid, docid);
    """,
    # 9: support assessment of RAG answers: the sentences registered for judging (as they were read: a
    #    changed answer file is noticed by the sentence's hash), each judgment of whether a cited passage
    #    backs a sentence (by a person, a model or an imported file; a failure is never a grade), and the
    #    leases that keep two assessors or two model runs off the same sentence-citation pair
    """
    CREATE TABLE support_sentences (
        run_id TEXT NOT NULL, qid TEXT NOT NULL, sentence INTEGER NOT NULL,
        text TEXT NOT NULL, text_hash TEXT NOT NULL,
        citations_json TEXT NOT NULL DEFAULT '[]',
        registered_at TEXT NOT NULL,
        PRIMARY KEY (run_id, qid, sentence)
    );
    CREATE TABLE support_judgments (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL, qid TEXT NOT NULL, sentence INTEGER NOT NULL,
        docid TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        grade TEXT CHECK (grade IN ('full', 'partial', 'none', 'contradicts')),
        status TEXT NOT NULL DEFAULT 'ok' CHECK (status IN ('ok', 'failed')),
        judge_id INTEGER NOT NULL REFERENCES judges(id),
        raw_reply TEXT, rationale TEXT, error TEXT,
        created_at TEXT NOT NULL,
        CHECK ((status = 'ok') = (grade IS NOT NULL))
    );
    CREATE INDEX support_judgments_pair ON support_judgments (run_id, qid, sentence, docid);
    CREATE TABLE support_leases (
        run_id TEXT NOT NULL, qid TEXT NOT NULL, sentence INTEGER NOT NULL, docid TEXT NOT NULL,
        holder TEXT NOT NULL, expires_at REAL NOT NULL,
        PRIMARY KEY (run_id, qid, sentence, docid)
    );
    """,
]


class BrokenDatabase(InputError):
    """The workspace's database cannot be used as it is; the message says why and that nothing was changed."""


def create(path: Path) -> None:
    """Make a new, empty bench database at the newest schema (the file must not exist).

    The pages are copied from an empty database this process migrated in memory (`_newest_empty`), with its
    user_version and application_id: the same schema as migrating the file itself, for a quarter of the time
    (one write instead of a transaction per migration; ~3.7 against ~14 ms a workspace).
    """
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        with _EMPTY_LOCK:  # one copy at a time from the shared connection (threads of the web app, say)
            _newest_empty().backup(conn)
        conn.execute("PRAGMA journal_mode=WAL")
    finally:
        conn.close()


_EMPTY_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _newest_empty() -> sqlite3.Connection:
    """An in-memory database at the newest schema, made by the migrations, that `create` copies (kept open)."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    _migrate(conn, Path(":memory:"))
    return conn


def check_file(path: Path) -> None:
    """Refuse, before SQLite opens it, a file that cannot be read or is empty; from its size alone.

    The database file is never opened outside SQLite while this process may hold a connection to it: on
    POSIX, closing any descriptor of a file releases every lock the process holds on it, SQLite's
    included, and another process would then take a database in use for an unused one (and checkpoint
    and delete its WAL under the connections still writing to it). What is wrong with a file SQLite
    refuses is told from its header by `explain_unreadable`, once SQLite has refused it.
    """
    try:
        size = path.stat().st_size
    except OSError as e:
        _broken(path, f"cannot read the database file: {e.strerror or e}")
    if size == 0:
        _broken(path, "the database file is empty (0 bytes), not a trecbench database")


def explain_unreadable(path: Path) -> None:
    """Why SQLite cannot read the file, as its header tells: not SQLite, a damaged header, or cut short
    (BrokenDatabase); returns when the header shows nothing wrong. Only for a file SQLite has refused
    (see `check_file`: reading it here releases the process's locks on it)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            header = f.read(100)
    except OSError as e:
        _broken(path, f"cannot read the database file: {e.strerror or e}")
    if not header.startswith(_HEADER):
        _broken(path, "not an SQLite database (the file does not start with SQLite's header)")
    if len(header) < 100:
        _broken(path, f"the database file is cut short ({size} bytes, less than SQLite's 100-byte header)")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):
        _broken(path, f"the database header is damaged (page size {page_size} is not a power of two from 512)")
    pages = int.from_bytes(header[28:32], "big")
    valid = header[92:96] == header[24:28]  # the in-header size is valid only when these counters agree
    if size % page_size or (valid and pages * page_size > size):
        expected = f"; its header says {pages * page_size} bytes" if valid else ""
        _broken(path, f"the database file is cut short ({size} bytes{expected})")


def check_and_migrate(conn: sqlite3.Connection, path: Path, *, read_only: bool = False) -> int:
    """Check an open bench database and bring it to the newest schema; returns the version it is at.

    Raises BrokenDatabase (nothing changed) for a database that is damaged, foreign, newer or missing a
    table; copies an older one to `bench.sqlite.vN.bak` before the first migration. `read_only` (a
    workspace that cannot be written) checks without migrating, and refuses an older schema.
    """
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        tables = dict(_tables(conn))
    except sqlite3.DatabaseError as e:
        if not isinstance(e, sqlite3.OperationalError):  # not a database, or malformed; not busy or locked
            explain_unreadable(path)
        _broken(path, cannot_open(path, e))
    size = path.stat().st_size
    if size % page_size:  # SQLite reads a last page cut short as if the rest were zeros
        _broken(path, f"the database file is cut short ({size} bytes, not a whole number of {page_size}-byte pages)")
    newest = len(MIGRATIONS)
    if app_id not in (0, APPLICATION_ID) or version == 0 or not set(tables) & set(expected_tables(1)):
        _broken(path, "an SQLite database, but not a trecbench workspace's (no trecbench schema)")
    if version > newest:
        _broken(path, f"schema version {version} is newer than this trecbench knows ({newest}): upgrade trecbench")
    try:
        problems = [row[0] for row in conn.execute("PRAGMA quick_check(5)")]
    except sqlite3.DatabaseError as e:
        problems = [str(e)]
    if problems != ["ok"]:
        _broken(path, "the database is damaged (SQLite quick_check: " + "; ".join(problems) + ")")
    missing = []
    for table, columns in expected_tables(version).items():
        if table not in tables:
            missing.append(f"table {table!r} is missing")
        elif not columns <= tables[table]:
            missing.append(f"table {table!r} lacks column(s) {', '.join(sorted(columns - tables[table]))}")
    if missing:
        _broken(path, "the database is incomplete: " + "; ".join(missing))
    if read_only:
        if version < newest:
            _broken(path, f"schema version {version} is older than this trecbench's ({newest}) and the workspace "
                          "is read-only, so it cannot be upgraded: open it once where it can be written")
        return version
    saved = backup(conn, path, version) if version < newest else None
    _migrate(conn, path)
    if saved is not None:
        logging.getLogger("trecbench.store").warning(
            "%s: schema %d upgraded to %d; the database as it was is kept in %s", path, version, newest, saved.name)
    return newest


# SQLite's shared-memory file (bench.sqlite-shm) takes 32 kB: with less free, it cannot be made, and every
# connection fails with "disk I/O error" although the database is fine.
SHM_BYTES = 32 * 1024


def cannot_open(path: Path, error: sqlite3.Error) -> str:
    """What is wrong when SQLite cannot open a database whose file is fine, and what to do."""
    free = free_bytes(path.parent)
    if free is not None and free < 2 * SHM_BYTES:
        return (f"the disk holding the workspace is full ({free // 1024} kB free; SQLite said: {error}): SQLite "
                f"needs {SHM_BYTES // 1024} kB beside the database for {path.name}-shm; free some space on it and "
                "run the command again")
    return f"SQLite cannot read the database ({error})"


class StoreFailure(NamedTuple):
    """What a failed read or write of the store means for a person: what is wrong and what to do about it."""

    what: str
    todo: str | None
    full: bool  # the disk is full: the web app answers 507 Insufficient Storage


def store_failure(error: BaseException) -> StoreFailure:
    """Why a statement of an open workspace failed, in the user's words (the CLI's line, the web app's page)."""
    said = str(error)
    if "readonly" in said:  # a workspace on read-only media or in a folder this user cannot write
        return StoreFailure(f"the workspace is read-only ({said})", "run it on a writable copy of the folder", False)
    if "disk is full" in said:
        return StoreFailure(f"the disk holding the workspace is full ({said})", "free some space on it", True)
    return StoreFailure(f"the workspace database failed ({said})", None, False)


def free_bytes(folder: Path) -> int | None:
    """The bytes this process may still write on the file system of `folder` (None if it cannot be told)."""
    import os

    try:
        st = os.statvfs(folder)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def refuse_unsaved_wal(path: Path) -> None:
    """Refuse a read-only workspace whose WAL file holds changes not yet in the database: a connection that
    cannot make the -shm file (opened immutable) does not read the WAL, so it would miss them."""
    wal = path.with_name(path.name + "-wal")
    try:
        size = wal.stat().st_size
    except OSError:
        return
    if size:
        _broken(path, f"the workspace is read-only and {wal.name} holds changes not yet written into the database "
                      f"({size} bytes): open it once where it can be written (or a writable copy of the folder)")


def backup(conn: sqlite3.Connection, path: Path, version: int) -> Path:
    """Copy the database (consistently, through SQLite) to BENCH/bench.sqlite.vN.bak before migrating it."""
    target = path.with_name(f"{path.name}.v{version}.bak")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.v{version}.{n}.bak")
    copy = sqlite3.connect(target)
    try:
        conn.backup(copy)
    finally:
        copy.close()
    return target


@lru_cache(maxsize=None)
def expected_tables(version: int) -> dict[str, frozenset[str]]:
    """{table: its columns} of a database at schema `version` (the migrations applied to an empty one)."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        for sql in MIGRATIONS[:version]:
            for statement in _statements(sql):
                conn.execute(statement)
        out = dict(_tables(conn))
    finally:
        conn.close()
    if version >= 4:
        out.update({t: frozenset() for t in LLM_TABLES})
    return out


def _tables(conn: sqlite3.Connection) -> list[tuple[str, frozenset[str]]]:
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return [(n, frozenset(r[1] for r in conn.execute(f'PRAGMA table_info("{n}")'))) for n in names]


def _migrate(conn: sqlite3.Connection, path: Path) -> int:
    from trecbench.llm.cache import ensure_schema as ensure_llm_schema

    for number, sql in enumerate(MIGRATIONS, start=1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            # read under the write lock: another process opening the same workspace may have just migrated it
            if conn.execute("PRAGMA user_version").fetchone()[0] < number:
                for statement in _statements(sql):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    ensure_llm_schema(conn)  # tables a newer trecbench.llm adds appear without a migration of their own
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


def _broken(path: Path, what: str) -> NoReturn:
    raise BrokenDatabase(str(path), 0, f"{what}; {NOTHING_CHANGED}")


def _statements(sql: str) -> list[str]:
    lines = [line.split("--")[0] for line in sql.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
