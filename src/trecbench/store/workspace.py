"""A bench workspace: `trecbench.toml` (settings) and `bench.sqlite` (judgments, nuggets, pools, model cache).

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
from typing import Iterable, NamedTuple

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

    def to_toml(self) -> str:
        def value(v: str) -> str:
            return json.dumps(str(v))  # a TOML basic string is a JSON string for our values

        lines = ["# trecbench workspace settings", "[bench]", f"name = {value(self.name)}", ""]
        lines += ["[corpus]", f"source = {value(self.corpus or '')}", ""]
        lines += ["[topics]", f"source = {value(self.topics or '')}"]
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
        )


class Workspace:
    """Open with `Workspace(path)`; create with `Workspace.init(path, corpus=..., topics=...)`.

    Every commit survives the process being killed. `durable=True` (the web app's) also makes it survive
    a power cut or an operating-system crash, at the price of a disk flush per commit (milliseconds).
    """

    def __init__(self, path: str | os.PathLike, *, durable: bool = False):
        self.path = Path(path)
        self.durable = durable
        # This object's threads take turns at writing here rather than in SQLite, whose busy handler
        # sleeps in growing steps while another connection commits (a web app's tail latency).
        self._writing = threading.Lock()
        if not (self.path / CONFIG).is_file() or not (self.path / DATABASE).is_file():
            raise InputError(str(self.path), 0, f"not a trecbench workspace (no {CONFIG} / {DATABASE}); "
                                                "create one with `trecbench init`")
        self.settings = Settings.read(self.path / CONFIG)
        self._local = threading.local()
        _open_checked(self.path / DATABASE)

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
        settings = Settings(name or root.resolve().name, _portable(corpus, root), _portable(topics, root))
        (root / CONFIG).write_text(settings.to_toml(), encoding="utf-8")
        from .schema import create

        create(root / DATABASE)
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
            # NORMAL: a kill loses nothing; FULL: neither does a power cut (a flush per commit)
            conn.execute("PRAGMA synchronous=" + ("FULL" if self.durable else "NORMAL"))
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
        return conn

    class _Tx:
        """A write transaction; inside another one of the same thread it is a savepoint of it, so that a
        caller can check a state and change it through methods that open their own transactions."""

        def __init__(self, conn: sqlite3.Connection, writing: threading.Lock):
            self.conn, self.writing = conn, writing
            self.nested = False

        def __enter__(self) -> sqlite3.Connection:
            self.nested = self.conn.in_transaction
            if self.nested:
                self.conn.execute("SAVEPOINT nested")
                return self.conn
            self.writing.acquire()
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except BaseException:
                self.writing.release()
                raise
            return self.conn

        def __exit__(self, exc_type, exc, tb) -> None:
            if self.nested:
                if exc_type:
                    self.conn.execute("ROLLBACK TO nested")
                self.conn.execute("RELEASE nested")
                return
            try:
                self.conn.execute("ROLLBACK" if exc_type else "COMMIT")
            finally:
                self.writing.release()

    def transaction(self) -> "_Tx":
        return Workspace._Tx(self.connection(), self._writing)

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
    def cache_path(self) -> Path:
        """The model-call cache of this workspace (its database): what every model command uses."""
        return self.path / DATABASE

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
            return _row_id(c.execute("INSERT INTO judges (kind, name, model, prompt_id, prompt_hash, params_json, "
                                     "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)", (*key, now())))

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
                out.append(_row_id(cur))
        return out

    def judgment_rows(self, *, status: str | None = "ok", kind: str | None = None, qid: str | None = None,
                      docid: str | None = None, pool: int | None = None, direct: bool = False,
                      newest_first: bool = False, limit: int | None = None,
                      after: int | None = None) -> list["JudgmentRow"]:
        """Judgments with their judges (id order, or newest first): those of `status` (None: all), of judges of
        `kind`, of one topic or pair, of the representatives of pool id `pool`, only `direct` ones (not copied
        from a duplicate), only those recorded after row id `after`. The one place the store joins judgments
        to judges."""
        sql, args = _judgment_sql(status=status, kind=kind, qid=qid, docid=docid, pool=pool, direct=direct,
                                  after=after)
        sql += " ORDER BY j.id" + (" DESC" if newest_first else "") + (" LIMIT ?" if limit is not None else "")
        rows = self.connection().execute(sql, args + ((limit,) if limit is not None else ()))
        return [JudgmentRow(*r) for r in rows]

    def judgments(self, *, status: str | None = "ok", direct: bool = False, qid: str | None = None):
        """All judgment rows (of one topic with `qid`) as a DataFrame (id order) with the judge's id, kind,
        name, model and prompt."""
        import pandas as pd

        sql, args = _judgment_sql(status=status, direct=direct, qid=qid)
        frame = pd.read_sql_query(sql + " ORDER BY j.id", self.connection(), params=args)
        return frame.rename(columns={"qid": "query_id", "docid": "doc_id"})

    def grade_rows(self, *, qid: str | None = None, after: int | None = None) -> list[tuple]:
        """(id, qid, docid, grade, status, propagated_from, judge kind, judge name) of each successful judgment
        of its own (of one topic with `qid`; recorded after row id `after`): what
        `trecbench.qrels.select.choose_grades` reads."""
        sql, args = _judgment_sql(direct=True, qid=qid, after=after, columns="j.id, j.qid, j.docid, j.grade, "
                                  "j.status, j.propagated_from, g.kind, g.name")
        return self.connection().execute(sql, args).fetchall()

    def judge_replies(self, judge: str) -> list[tuple[str, int]]:
        """(raw reply, judgments it gave) of each distinct reply stored for the model judge named `judge`."""
        return self.connection().execute(
            "SELECT j.raw_reply, COUNT(*) FROM judgments j JOIN judges g ON g.id = j.judge_id "
            "WHERE g.kind = 'model' AND g.name = ? AND j.raw_reply IS NOT NULL GROUP BY j.raw_reply",
            (judge,)).fetchall()

    def newest_judgment(self, qid: str | None = None) -> int:
        """The highest judgment row id (of one topic with `qid`), 0 when there is none: rows are only added,
        so a higher id than before means something was recorded."""
        sql = "SELECT COALESCE(MAX(id), 0) FROM judgments" + (" WHERE qid = ?" if qid is not None else "")
        return self.connection().execute(sql, (qid,) if qid is not None else ()).fetchone()[0]

    def judge_stats(self) -> list["JudgeStats"]:
        """Every judge that has judgments (judge id order) with its counts."""
        rows = self.connection().execute(
            "SELECT g.id, g.kind, g.name, g.model, g.prompt_id, g.prompt_hash, g.params_json, g.created_at, "
            "SUM(j.status = 'ok'), SUM(j.status = 'ok' AND j.propagated_from IS NULL), SUM(j.status = 'failed') "
            "FROM judges g JOIN judgments j ON j.judge_id = g.id GROUP BY g.id ORDER BY g.id")
        return [JudgeStats(jid, Judge(kind, name, model, prompt_id, prompt_hash,
                                      tuple(sorted(json.loads(params or "{}").items()))),
                           json.loads(params or "{}"), created, int(ok or 0), int(direct or 0), int(failed or 0))
                for jid, kind, name, model, prompt_id, prompt_hash, params, created, ok, direct, failed in rows]

    def judged_pairs(self, judge: Judge) -> set[tuple[str, str]]:
        """Pairs this judge has a successful judgment for (what a resumed run skips)."""
        jid = self.judge_id(judge)
        rows = self.connection().execute("SELECT qid, docid FROM judgments WHERE judge_id = ? AND status = 'ok'",
                                         (jid,))
        return {(q, d) for q, d in rows}

    def raw_replies(self, judge_id: int) -> list[str | None]:
        """The model replies kept with judge `judge_id`'s direct successful judgments, one per judgment."""
        rows = self.connection().execute("SELECT raw_reply FROM judgments WHERE judge_id = ? AND status = 'ok' "
                                         "AND propagated_from IS NULL ORDER BY id", (judge_id,))
        return [r[0] for r in rows]

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

    # ---- nugget drafting runs ----

    def draft_runs(self, *, qid: str | None = None, drafter: str | None = None) -> list["DraftRun"]:
        """The drafting run recorded per (topic, drafter), in that order; narrowed to one topic or drafter."""
        where = [c for c, v in (("qid = ?", qid), ("drafter = ?", drafter)) if v is not None]
        rows = self.connection().execute(
            "SELECT qid, drafter, status, problems_json, nuggets, started_at, finished_at FROM nugget_drafts"
            + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY qid, drafter",
            tuple(v for v in (qid, drafter) if v is not None))
        return [DraftRun(q, d, st, tuple(json.loads(p)), n, s, f) for q, d, st, p, n, s, f in rows]

    def start_draft(self, qid: str, drafter: str, params: dict) -> None:
        """Record that `drafter` is drafting the topic now (replacing the topic's earlier run by it)."""
        with self.transaction() as c:
            c.execute("INSERT INTO nugget_drafts (qid, drafter, status, params_json, started_at) "
                      "VALUES (?, ?, 'running', ?, ?) ON CONFLICT (qid, drafter) DO UPDATE SET status = 'running', "
                      "params_json = excluded.params_json, problems_json = '[]', started_at = excluded.started_at, "
                      "finished_at = NULL", (qid, drafter, json.dumps(params, sort_keys=True), now()))

    def finish_draft(self, qid: str, drafter: str, problems: list[str], nuggets: int) -> None:
        """The topic's run is over: complete, or incomplete with the problems that kept it from completing."""
        with self.transaction() as c:
            c.execute("UPDATE nugget_drafts SET status = ?, problems_json = ?, nuggets = ?, finished_at = ? "
                      "WHERE qid = ? AND drafter = ?",
                      ("incomplete" if problems else "complete", json.dumps(problems), nuggets, now(), qid, drafter))

    # ---- web-app leases (a pair offered to one assessor for a while) ----

    def live_leases(self, qid: str, at: float) -> list[tuple[str, str]]:
        """(docid, assessor) of the topic's leases that have not expired at time `at`."""
        return self.connection().execute("SELECT docid, assessor FROM leases WHERE qid = ? AND expires_at > ?",
                                         (qid, at)).fetchall()

    def lease(self, qid: str, docid: str, assessor: str, expires_at: float, *, at: float) -> None:
        """The assessor's one lease becomes this pair; leases expired at `at` are swept. Call inside a
        transaction that also made the choice."""
        conn = self.connection()
        conn.execute("DELETE FROM leases WHERE assessor = ? OR expires_at <= ?", (assessor, at))
        conn.execute("INSERT INTO leases (qid, docid, assessor, expires_at) VALUES (?, ?, ?, ?)",
                     (qid, docid, assessor, expires_at))

    def drop_leases(self, assessor: str, qid: str | None = None, docid: str | None = None) -> None:
        """Remove the assessor's leases (only that pair's when given); inside the caller's transaction if any."""
        sql, args = "DELETE FROM leases WHERE assessor = ?", [assessor]
        if qid is not None and docid is not None:
            sql, args = sql + " AND qid = ? AND docid = ?", [assessor, qid, docid]
        conn = self.connection()
        if conn.in_transaction:
            conn.execute(sql, args)
        else:
            with self.transaction() as c:
                c.execute(sql, args)

    # ---- pools ----

    def pools(self) -> list["StoredPool"]:
        """Every stored pool, oldest first."""
        return [_stored_pool(row) for row in self.connection().execute(
            "SELECT id, name, strategy, params_json, created_at FROM pools ORDER BY id")]

    def pool_summaries(self) -> list["PoolSummary"]:
        """Every stored pool, oldest first, with its size and how much of it is judged."""
        return [self._summary(pool) for pool in self.pools()]

    def _summary(self, pool: "StoredPool") -> "PoolSummary":
        topics, candidates, to_judge, judged = self.connection().execute(
            "SELECT COUNT(DISTINCT qid), COUNT(*), SUM(representative), SUM(representative AND EXISTS ("
            "SELECT 1 FROM judgments j WHERE j.qid = p.qid AND j.docid = p.docid AND j.status = 'ok' AND j.id > ?)) "
            "FROM pool_candidates p WHERE pool_id = ?", (pool.since, pool.id)).fetchone()
        return PoolSummary(pool, int(topics or 0), int(candidates or 0), int(to_judge or 0), int(judged or 0))

    def pool(self, pool: str | int | None = None) -> "StoredPool | None":
        """The pool judging and reports use: the one named (or numbered) `pool`, else the newest; None when
        the workspace has none. InputError, listing the pools there are, for a pool it does not have."""
        conn = self.connection()
        columns = "SELECT id, name, strategy, params_json, created_at FROM pools"
        if pool is None or pool == "":
            row = conn.execute(columns + " ORDER BY id DESC LIMIT 1").fetchone()
            return _stored_pool(row) if row else None
        row = conn.execute(columns + " WHERE name = ?", (str(pool),)).fetchone()
        if row is None and str(pool).lstrip("#").isdigit():
            row = conn.execute(columns + " WHERE id = ?", (int(str(pool).lstrip("#")),)).fetchone()
        if row is None:
            names = [p.name for p in self.pools()]
            there = f"its pools: {', '.join(names)}" if names else "it has no pool yet"
            raise InputError(str(self.path), 0, f"no pool {str(pool)!r} in this workspace ({there})")
        return _stored_pool(row)

    def delete_pool(self, pool: str | int) -> "PoolSummary":
        """Delete a pool nobody has judged from: refused (InputError) while a judgment or a live lease is of
        one of its candidates, since qrels, reports and the web app read its duplicate groups and order."""
        import time

        with self.transaction() as c:
            chosen = self.pool(pool)
            assert chosen is not None
            judged = c.execute("SELECT COUNT(*) FROM judgments j JOIN pool_candidates p ON p.pool_id = ? AND "
                               "p.qid = j.qid AND p.docid = j.docid WHERE j.id > ?", (chosen.id, chosen.since)).fetchone()[0]
            leased = c.execute("SELECT COUNT(*) FROM leases l JOIN pool_candidates p ON p.pool_id = ? AND "
                               "p.qid = l.qid AND p.docid = l.docid WHERE l.expires_at > ?",
                               (chosen.id, time.time())).fetchone()[0]
            if judged or leased:
                uses = [f"{judged} judgment(s)"] * bool(judged) + [f"{leased} web-app lease(s)"] * bool(leased)
                raise InputError(str(self.path), 0, f"pool {chosen.name!r} is in use ({' and '.join(uses)} of its "
                                                    "candidates): not deleted")
            summary = self._summary(chosen)
            c.execute("DELETE FROM pool_candidates WHERE pool_id = ?", (chosen.id,))
            c.execute("DELETE FROM pools WHERE id = ?", (chosen.id,))
        return summary


class StoredPool(NamedTuple):
    """A pool stored in the workspace and how it was made (`params`: the pool's PoolInfo as a dict)."""

    id: int
    name: str
    strategy: str
    params: dict
    created_at: str

    @property
    def since(self) -> int:
        """Judgments count for this pool from the row id after this one: 0, or for a pool of pairs judged
        before it was made (an audit queue), the newest judgment then."""
        return int(self.params.get("since", 0))


class PoolSummary(NamedTuple):
    pool: StoredPool
    topics: int
    candidates: int
    to_judge: int  # duplicate-group representatives: what is judged
    judged: int  # representatives with a successful judgment, by anyone


class JudgmentRow(NamedTuple):
    """One judgment with its judge (`judge`: the judge's name)."""

    id: int
    qid: str
    docid: str
    grade: int | None
    status: str
    created_at: str
    propagated_from: str | None
    rationale: str | None
    error: str | None
    doc_hash: str | None
    judge_id: int
    judge_kind: str
    judge: str
    model: str | None
    prompt_id: str | None
    prompt_hash: str | None

    @property
    def judge_label(self) -> str:
        """The judge's name as `Judge.label` gives it."""
        return Judge(self.judge_kind, self.judge, self.model, self.prompt_id).label


class JudgeStats(NamedTuple):
    """A judge of the workspace (`id`: its row) with its parameters, first use and counts of judgments."""

    id: int
    judge: Judge
    params: dict
    created_at: str
    ok: int  # successful judgments, copies to duplicates included
    direct: int  # successful judgments not copied from a duplicate
    failed: int


class DraftRun(NamedTuple):
    """One topic's latest drafting run by one drafter: `running`, `complete`, or `incomplete` with problems."""

    qid: str
    drafter: str  # "llm:<model>" or "extractive"
    status: str
    problems: tuple[str, ...]
    nuggets: int
    started_at: str
    finished_at: str | None


def _judgment_sql(*, status: str | None = "ok", kind: str | None = None, qid: str | None = None,
                  docid: str | None = None, pool: int | None = None, direct: bool = False,
                  after: int | None = None, columns: str | None = None) -> tuple[str, tuple]:
    # CROSS JOIN: SQLite then reads judgments first, by topic or by row id (the planner, without statistics,
    # would rather go through every judgment of each judge of `kind`: 14 ms instead of 0.04 ms for the rows
    # after an id in a workspace of 50,000 judgments)
    join = "CROSS JOIN" if qid is not None or docid is not None or after is not None else "JOIN"
    columns = columns or ("j.id, j.qid, j.docid, j.grade, j.status, j.created_at, j.propagated_from, j.rationale, "
                          "j.error, j.doc_hash, g.id AS judge_id, g.kind AS judge_kind, g.name AS judge, g.model, "
                          "g.prompt_id, g.prompt_hash")
    sql = f"SELECT {columns} FROM judgments j {join} judges g ON g.id = j.judge_id"
    where: list[str] = []
    args: list[str | int] = []
    if pool is not None:
        sql += (" JOIN pool_candidates c ON c.pool_id = ? AND c.qid = j.qid AND c.docid = j.docid "
                "AND c.representative = 1")
        args.append(pool)
    for clause, value in (("j.status = ?", status), ("g.kind = ?", kind), ("j.qid = ?", qid), ("j.docid = ?", docid),
                          ("j.id > ?", after)):
        if value is not None:
            where.append(clause)
            args.append(value)
    if direct:
        where.append("j.propagated_from IS NULL")
    return sql + (" WHERE " + " AND ".join(where) if where else ""), tuple(args)


def _stored_pool(row: tuple) -> StoredPool:
    pool_id, name, strategy, params, created = row
    return StoredPool(pool_id, name, strategy, json.loads(params or "{}"), created)


def _open_checked(path: Path) -> None:
    """Check the database (and migrate an older schema, after a backup) on a connection of its own, before
    any connection changes a setting of the file; BrokenDatabase when it cannot be used as it is."""
    from .schema import check_and_migrate, check_file

    check_file(path)
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        check_and_migrate(conn, path)
    finally:
        conn.close()


def _row_id(cursor: sqlite3.Cursor) -> int:
    """The id of the row an INSERT just wrote."""
    assert cursor.lastrowid is not None
    return cursor.lastrowid


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
    if not rows:
        n = len(ws.topics())
        there = f"any of the workspace's {n} topic{'s' * (n != 1)}" if n else "any topic"
        raise InputError(str(ws.path), 0, f"pool {name!r} is empty (no run retrieved a document for {there}): "
                                          "not stored")
    with ws.transaction() as c:
        if c.execute("SELECT 1 FROM pools WHERE name = ?", (name,)).fetchone():
            raise ValueError(f"a pool named {name!r} already exists in {ws.path}")
        pool_id = _row_id(c.execute("INSERT INTO pools (name, strategy, params_json, created_at) VALUES (?, ?, ?, ?)",
                                    (name, strategy, json.dumps(params, sort_keys=True, default=str), now())))
        c.executemany("INSERT INTO pool_candidates (pool_id, qid, docid, priority, best_rank, n_runs, runs, "
                      "dup_group, representative, ranks) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      [(pool_id, *row) for row in rows])
    return pool_id


def load_pool(ws: Workspace, name: str | None = None, *, qid: str | None = None):
    """The candidates of the pool `Workspace.pool(name)` chooses (the newest when no name), priority order
    (of topic `qid` only, when given: only its rows are read); None if the workspace has no pool."""
    import pandas as pd

    chosen = ws.pool(name)
    if chosen is None:
        return None
    frame = pd.read_sql_query(
        "SELECT qid AS query_id, docid AS doc_id, priority, best_rank, n_runs, runs, ranks, "
        "dup_group AS \"group\", representative FROM pool_candidates WHERE pool_id = ?"
        + (" AND qid = ?" if qid is not None else "") + " ORDER BY qid, priority",
        ws.connection(), params=(chosen.id,) + ((qid,) if qid is not None else ()))
    frame["representative"] = frame["representative"].astype(bool)
    frame.attrs["name"] = chosen.name
    frame.attrs["strategy"] = chosen.strategy
    frame.attrs["info"] = chosen.params
    return frame


def _opt_int(v):
    try:
        return None if v is None or v != v else int(v)
    except (TypeError, ValueError):
        return None
