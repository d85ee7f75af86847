"""A bench workspace: `trecbench.toml` (settings) and `bench.sqlite` (judgments, nuggets, cache, provenance).

The store is the source of truth; TREC files are exports and imports of it. Every judgment is a row
written (and committed) as soon as it exists, with who or what made it; rows are never updated or
deleted, so several judges may judge the same pair and nothing is overwritten.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Iterator

from trecbench.errors import InputError

CONFIG = "trecbench.toml"
DATABASE = "bench.sqlite"
SESSION_SECONDS = 14 * 24 * 3600  # how long a web app login lasts


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class Judge:
    """Who or what judged: an assessor, a model with its prompt and parameters, or an imported file."""

    kind: str  # human | model | import
    name: str
    model: str | None = None
    prompt_id: str | None = None
    prompt_hash: str | None = None
    params: tuple = ()  # sorted (key, value) pairs

    @property
    def label(self) -> str:
        if self.kind == "model":
            return f"{self.name}" if self.name != self.model else f"{self.model}:{self.prompt_id}"
        return self.name


@dataclass(frozen=True)
class Judgment:
    qid: str
    docid: str
    grade: int | None
    judge: Judge
    status: str = "ok"  # ok | failed (a failure is never a grade)
    raw_reply: str | None = None
    rationale: str | None = None
    error: str | None = None
    propagated_from: str | None = None
    doc_hash: str | None = None
    created_at: str = field(default_factory=now)


@dataclass
class Settings:
    """The contents of trecbench.toml."""

    name: str
    corpus: str | None = None
    topics: str | None = None
    judge: dict = field(default_factory=dict)

    def to_toml(self) -> str:
        def value(v) -> str:
            if isinstance(v, bool):
                return "true" if v else "false"
            if isinstance(v, (int, float)):
                return repr(v)
            return json.dumps(str(v))  # a TOML basic string is a JSON string for our values

        lines = ["# trecbench workspace settings", "[bench]", f"name = {value(self.name)}", ""]
        lines += ["[corpus]", f"source = {value(self.corpus or '')}", ""]
        lines += ["[topics]", f"source = {value(self.topics or '')}", ""]
        lines += ["[judge]"] + [f"{k} = {value(v)}" for k, v in sorted(self.judge.items())]
        return "\n".join(lines) + "\n"

    @classmethod
    def read(cls, path: Path) -> "Settings":
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            import tomli as tomllib  # type: ignore[no-redef]
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as e:
            raise InputError(str(path), 0, f"cannot read: {e.strerror or e}") from None
        except tomllib.TOMLDecodeError as e:
            line = getattr(e, "lineno", 0) or 0
            raise InputError(str(path), line, f"invalid TOML: {e}") from None
        return cls(
            name=doc.get("bench", {}).get("name", path.parent.name),
            corpus=doc.get("corpus", {}).get("source") or None,
            topics=doc.get("topics", {}).get("source") or None,
            judge=dict(doc.get("judge", {})),
        )


class Workspace:
    """Open with `Workspace(path)`; create with `Workspace.init(path, corpus=..., topics=...)`."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if not (self.path / CONFIG).is_file() or not (self.path / DATABASE).is_file():
            raise InputError(str(self.path), 0, f"not a trecbench workspace (no {CONFIG} / {DATABASE}); "
                                                "create one with `trecbench init`")
        self.settings = Settings.read(self.path / CONFIG)
        self._local = threading.local()
        from .schema import migrate

        migrate(self.connection())

    # ---- creation and connections ----

    @classmethod
    def init(cls, path: str | os.PathLike, *, corpus: str | None = None, topics: str | None = None,
             name: str | None = None) -> "Workspace":
        """Create the workspace folder, its settings and its database; topics are copied into the store."""
        from trecbench.topics import read_topics

        root = Path(path)
        if (root / DATABASE).exists():
            raise InputError(str(root), 0, "a workspace already exists here")
        loaded = read_topics(topics) if topics else []
        if corpus:
            from trecbench.corpus import open_corpus

            open_corpus(corpus)  # fail now, not at the first judgment, if the corpus cannot be read
        root.mkdir(parents=True, exist_ok=True)
        (root / "runs").mkdir(exist_ok=True)
        settings = Settings(name or root.resolve().name, _portable(corpus, root), _portable(topics, root),
                            {"prompt": "graded-0-3", "batch": 1, "samples": 1, "concurrency": 8})
        (root / CONFIG).write_text(settings.to_toml(), encoding="utf-8")
        conn = sqlite3.connect(root / DATABASE)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.close()
        ws = cls(root)
        with ws.transaction() as c:
            c.executemany("INSERT INTO topics (qid, text, narrative, fields_json) VALUES (?, ?, ?, ?)",
                          [(t.qid, t.text, t.narrative, json.dumps(t.fields, sort_keys=True)) for t in loaded])
            c.execute("INSERT INTO meta (key, value) VALUES ('created_at', ?)", (now(),))
        return ws

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (autocommit; WAL; waits up to 30 s for another writer)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path / DATABASE, timeout=30, isolation_level=None, check_same_thread=True)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
        return conn

    class _Tx:
        """A write transaction; inside another one of the same thread it is a savepoint of it, so that a
        caller can check a state and change it through methods that open their own transactions."""

        def __init__(self, conn: sqlite3.Connection):
            self.conn = conn
            self.nested = False

        def __enter__(self) -> sqlite3.Connection:
            self.nested = self.conn.in_transaction
            self.conn.execute("SAVEPOINT nested" if self.nested else "BEGIN IMMEDIATE")
            return self.conn

        def __exit__(self, exc_type, exc, tb) -> None:
            if self.nested:
                if exc_type:
                    self.conn.execute("ROLLBACK TO nested")
                self.conn.execute("RELEASE nested")
            else:
                self.conn.execute("ROLLBACK" if exc_type else "COMMIT")

    def transaction(self) -> "_Tx":
        return Workspace._Tx(self.connection())

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # ---- settings-derived inputs ----

    def resolve(self, source: str | None) -> str | None:
        if not source or source.startswith("irds:") or os.path.isabs(source):
            return source
        return str((self.path / source).resolve())

    @property
    def corpus_source(self) -> str | None:
        return self.resolve(self.settings.corpus)

    def corpus(self):
        from trecbench.corpus import open_corpus

        if not self.corpus_source:
            raise InputError(str(self.path / CONFIG), 0, "no corpus configured ([corpus] source)")
        return open_corpus(self.corpus_source)

    def topics(self) -> dict:
        """{qid: Topic} as stored at init."""
        from trecbench.topics import Topic

        rows = self.connection().execute("SELECT qid, text, narrative, fields_json FROM topics ORDER BY qid")
        return {q: Topic(q, t, n, json.loads(f)) for q, t, n, f in rows}

    # ---- judges and judgments ----

    def judge_id(self, judge: Judge) -> int:
        params = json.dumps(dict(judge.params), sort_keys=True)
        key = (judge.kind, judge.name, judge.model, judge.prompt_id, judge.prompt_hash, params)
        conn = self.connection()
        row = conn.execute("SELECT id FROM judges WHERE kind IS ? AND name IS ? AND model IS ? AND prompt_id IS ? "
                           "AND prompt_hash IS ? AND params_json IS ?", key).fetchone()
        if row:
            return row[0]
        with self.transaction() as c:
            row = c.execute("SELECT id FROM judges WHERE kind IS ? AND name IS ? AND model IS ? AND prompt_id IS ? "
                            "AND prompt_hash IS ? AND params_json IS ?", key).fetchone()
            if row:
                return row[0]
            return c.execute("INSERT INTO judges (kind, name, model, prompt_id, prompt_hash, params_json, created_at) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?)", (*key, now())).lastrowid

    def record(self, judgment: Judgment) -> int:
        """Write one judgment and commit it at once; returns its row id."""
        return self.record_many([judgment])[0]

    def record_many(self, judgments: Iterable[Judgment]) -> list[int]:
        judgments = list(judgments)
        ids = {j.judge: self.judge_id(j.judge) for j in judgments}
        out = []
        with self.transaction() as c:
            for j in judgments:
                if j.status == "ok" and j.grade is None:
                    raise ValueError("a judgment with status ok needs a grade")
                cur = c.execute(
                    "INSERT INTO judgments (qid, docid, grade, status, judge_id, raw_reply, rationale, error, "
                    "propagated_from, doc_hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (j.qid, j.docid, j.grade if j.status == "ok" else None, j.status, ids[j.judge], j.raw_reply,
                     j.rationale, j.error, j.propagated_from, j.doc_hash, j.created_at))
                out.append(cur.lastrowid)
        return out

    def judgments(self, *, status: str | None = "ok", qid: str | None = None):
        """All judgment rows (of one topic with `qid`) as a DataFrame (id order) with the judge's kind, name,
        model and prompt."""
        import pandas as pd

        sql = ("SELECT j.id, j.qid AS query_id, j.docid AS doc_id, j.grade, j.status, j.created_at, "
               "j.propagated_from, j.rationale, j.error, g.kind AS judge_kind, g.name AS judge, g.model, "
               "g.prompt_id, g.prompt_hash FROM judgments j JOIN judges g ON g.id = j.judge_id")
        where = [(c, v) for c, v in (("j.status = ?", status), ("j.qid = ?", qid)) if v]
        if where:
            sql += " WHERE " + " AND ".join(c for c, _ in where)
        return pd.read_sql_query(sql + " ORDER BY j.id", self.connection(), params=tuple(v for _, v in where))

    def judged_pairs(self, judge: Judge) -> set[tuple[str, str]]:
        """Pairs this judge has a successful judgment for (what a resumed run skips)."""
        jid = self.judge_id(judge)
        rows = self.connection().execute("SELECT qid, docid FROM judgments WHERE judge_id = ? AND status = 'ok'",
                                         (jid,))
        return {(q, d) for q, d in rows}

    # ---- assessors ----

    def add_assessor(self, name: str) -> str:
        """Register an assessor; returns their login token (only its hash is stored)."""
        import secrets

        if not name or any(c.isspace() for c in name):
            raise ValueError("assessor names are non-empty and without spaces")
        token = secrets.token_urlsafe(18)
        with self.transaction() as c:
            if c.execute("SELECT 1 FROM assessors WHERE name = ?", (name,)).fetchone():
                raise ValueError(f"assessor {name!r} already exists")
            c.execute("INSERT INTO assessors (name, token_hash, created_at) VALUES (?, ?, ?)",
                      (name, _hash_token(token), now()))
        return token

    def assessor_for_token(self, token: str) -> str | None:
        row = self.connection().execute("SELECT name FROM assessors WHERE token_hash = ?",
                                        (_hash_token(token),)).fetchone()
        return row[0] if row else None

    def assessors(self) -> list[str]:
        return [r[0] for r in self.connection().execute("SELECT name FROM assessors ORDER BY name")]

    def remove_assessor(self, name: str) -> None:
        """Remove an assessor and end their sessions (their judgments stay); KeyError if there is none."""
        with self.transaction() as c:
            if c.execute("DELETE FROM assessors WHERE name = ?", (name,)).rowcount == 0:
                raise KeyError(name)
            c.execute("DELETE FROM web_sessions WHERE assessor = ?", (name,))

    def new_token(self, name: str) -> str:
        """Give an assessor a new token: the old one stops working and their sessions end."""
        import secrets

        token = secrets.token_urlsafe(18)
        with self.transaction() as c:
            if c.execute("UPDATE assessors SET token_hash = ? WHERE name = ?", (_hash_token(token), name)).rowcount == 0:
                raise KeyError(name)
            c.execute("DELETE FROM web_sessions WHERE assessor = ?", (name,))
        return token

    # ---- web app sessions ----

    def open_session(self, assessor: str, via: str) -> str:
        """Record a login session; returns its id (kept in the signed cookie). Sessions older than
        SESSION_SECONDS (the cookie's lifetime) are dropped."""
        import secrets
        from datetime import timedelta

        sid = secrets.token_urlsafe(24)
        stale = (datetime.now(timezone.utc) - timedelta(seconds=SESSION_SECONDS)).isoformat(timespec="milliseconds")
        with self.transaction() as c:
            c.execute("DELETE FROM web_sessions WHERE created_at < ?", (stale,))
            c.execute("INSERT INTO web_sessions (id, assessor, via, created_at) VALUES (?, ?, ?, ?)",
                      (sid, assessor, via, now()))
        return sid

    def session(self, sid: str) -> tuple[str, str] | None:
        """(assessor, via) of a session that was not ended, else None."""
        return self.connection().execute("SELECT assessor, via FROM web_sessions WHERE id = ?", (sid,)).fetchone()

    def end_session(self, sid: str) -> None:
        with self.transaction() as c:
            c.execute("DELETE FROM web_sessions WHERE id = ?", (sid,))

    # ---- provenance ----

    def log_command(self, command: str, args: dict) -> "Iterator[int]":
        from trecbench import __version__

        with self.transaction() as c:
            return c.execute("INSERT INTO provenance (command, args_json, version, started_at) VALUES (?, ?, ?, ?)",
                             (command, json.dumps(args, sort_keys=True, default=str), __version__, now())).lastrowid

    def finish_command(self, row: int, outcome: str) -> None:
        with self.transaction() as c:
            c.execute("UPDATE provenance SET finished_at = ?, outcome = ? WHERE id = ?", (now(), outcome, row))


def _hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _portable(source: str | None, root: Path) -> str | None:
    """Sources are stored relative to the workspace when they live beside it, so the folder can move."""
    if not source or source.startswith("irds:"):
        return source
    p = Path(source).resolve()
    home = root.resolve().parent
    if p == home or home in p.parents:
        return os.path.relpath(p, root.resolve())
    return str(p)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def save_pool(ws: Workspace, name: str, strategy: str, params: dict, candidates) -> int:
    """Store a pool's candidates (DataFrame: query_id, doc_id, priority, best_rank, n_runs, runs, group,
    representative) under `name`, replacing nothing: a name is used once."""
    rows = []
    for r in candidates.itertuples(index=False):
        d = r._asdict()
        runs = d.get("runs")
        ranks = d.get("ranks")
        rows.append((str(d["query_id"]), str(d["doc_id"]), int(d.get("priority", 0)),
                     _opt_int(d.get("best_rank")), _opt_int(d.get("n_runs")),
                     ";".join(runs) if isinstance(runs, (list, tuple)) else runs,
                     None if d.get("group") in (None, "") or d.get("group") != d.get("group") else str(d.get("group")),
                     int(bool(d.get("representative", True))),
                     ";".join(map(str, ranks)) if isinstance(ranks, (list, tuple)) else ranks))
    with ws.transaction() as c:
        if c.execute("SELECT 1 FROM pools WHERE name = ?", (name,)).fetchone():
            raise ValueError(f"a pool named {name!r} already exists in {ws.path}")
        pool_id = c.execute("INSERT INTO pools (name, strategy, params_json, created_at) VALUES (?, ?, ?, ?)",
                            (name, strategy, json.dumps(params, sort_keys=True, default=str), now())).lastrowid
        c.executemany("INSERT INTO pool_candidates (pool_id, qid, docid, priority, best_rank, n_runs, runs, "
                      "dup_group, representative, ranks) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      [(pool_id, *row) for row in rows])
    return pool_id


def load_pool(ws: Workspace, name: str | None = None):
    """The named pool's candidates (the newest pool when no name), priority order; None if no pool."""
    import pandas as pd

    conn = ws.connection()
    row = (conn.execute("SELECT id, name, strategy, params_json FROM pools WHERE name = ?", (name,)).fetchone()
           if name else conn.execute("SELECT id, name, strategy, params_json FROM pools ORDER BY id DESC LIMIT 1")
           .fetchone())
    if row is None:
        if name:
            raise InputError(str(ws.path), 0, f"no pool named {name!r}")
        return None
    frame = pd.read_sql_query(
        "SELECT qid AS query_id, docid AS doc_id, priority, best_rank, n_runs, runs, ranks, "
        "dup_group AS \"group\", representative FROM pool_candidates WHERE pool_id = ? ORDER BY qid, priority",
        conn, params=(row[0],))
    frame["representative"] = frame["representative"].astype(bool)
    frame.attrs["name"] = row[1]
    frame.attrs["strategy"] = row[2]
    frame.attrs["info"] = json.loads(row[3] or "{}")
    return frame


def _opt_int(v):
    try:
        return None if v is None or v != v else int(v)
    except (TypeError, ValueError):
        return None
