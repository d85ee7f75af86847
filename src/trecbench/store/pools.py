"""Stored pools: each pool's candidates in judging order with their duplicate groups, saved once under a name.

A pool is stored once and never changed; it can be deleted while nobody has judged from it. The pool
judging and reports use is the one named, else the newest. Its duplicate-group representatives are what
is judged.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, NamedTuple

from trecbench.errors import InputError

from .base import Connected, now, row_id

if TYPE_CHECKING:
    from .workspace import Workspace


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


class PoolStore(Connected):
    """The workspace's pools (part of `Workspace`)."""

    def pools(self) -> list[StoredPool]:
        """Every stored pool, oldest first."""
        return [_stored_pool(row) for row in self.connection().execute(
            "SELECT id, name, strategy, params_json, created_at FROM pools ORDER BY id")]

    def pool_summaries(self) -> list[PoolSummary]:
        """Every stored pool, oldest first, with its size and how much of it is judged."""
        return [self._summary(pool) for pool in self.pools()]

    def _summary(self, pool: StoredPool) -> PoolSummary:
        topics, candidates, to_judge, judged = self.connection().execute(
            "SELECT COUNT(DISTINCT qid), COUNT(*), SUM(representative), SUM(representative AND EXISTS ("
            "SELECT 1 FROM judgments j WHERE j.qid = p.qid AND j.docid = p.docid AND j.status = 'ok' AND j.id > ?)) "
            "FROM pool_candidates p WHERE pool_id = ?", (pool.since, pool.id)).fetchone()
        return PoolSummary(pool, int(topics or 0), int(candidates or 0), int(to_judge or 0), int(judged or 0))

    def pool(self, pool: str | int | None = None) -> StoredPool | None:
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

    def delete_pool(self, pool: str | int) -> PoolSummary:
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

    def representatives(self, pool_id: int, qid: str) -> list[str]:
        """The docids of the topic's duplicate-group representatives in pool id `pool_id`, in judging order
        (priority, then docid); empty when the topic is not the pool's."""
        return [d for (d,) in self.connection().execute(
            "SELECT docid FROM pool_candidates WHERE pool_id = ? AND qid = ? AND representative = 1 "
            "ORDER BY priority, docid", (pool_id, qid))]

    def representative_pairs(self, pool_id: int) -> list[tuple[str, str]]:
        """(qid, docid) of every duplicate-group representative in pool id `pool_id`: what is judged."""
        return self.connection().execute("SELECT qid, docid FROM pool_candidates WHERE pool_id = ? AND representative = 1",
                                         (pool_id,)).fetchall()

    def is_representative(self, pool_id: int, qid: str, docid: str) -> bool:
        """Whether the pair is one of pool id `pool_id`'s representatives (what is offered for judging)."""
        return self.connection().execute("SELECT 1 FROM pool_candidates WHERE pool_id = ? AND qid = ? AND docid = ? "
                                         "AND representative = 1", (pool_id, qid, docid)).fetchone() is not None


def save_pool(ws: Workspace, name: str, strategy: str, params: dict, candidates) -> int:
    """Store a pool's candidates (DataFrame: query_id, doc_id, priority, best_rank, n_runs, runs, group,
    representative) under `name`, replacing nothing: a name is used once."""
    rows = [_candidate_row(r._asdict()) for r in candidates.itertuples(index=False)]
    if not rows:
        n = len(ws.topics())
        there = f"any of the workspace's {n} topic{'s' * (n != 1)}" if n else "any topic"
        raise InputError(str(ws.path), 0, f"pool {name!r} is empty (no run retrieved a document for {there}): "
                                          "not stored")
    with ws.transaction() as c:
        if c.execute("SELECT 1 FROM pools WHERE name = ?", (name,)).fetchone():
            raise ValueError(f"a pool named {name!r} already exists in {ws.path}")
        pool_id = row_id(c.execute("INSERT INTO pools (name, strategy, params_json, created_at) VALUES (?, ?, ?, ?)",
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
    sql, params = _candidates_query(chosen, qid)
    frame = pd.read_sql_query(sql, ws.connection(), params=params)
    frame["representative"] = frame["representative"].astype(bool)
    frame.attrs["name"] = chosen.name
    frame.attrs["strategy"] = chosen.strategy
    frame.attrs["info"] = chosen.params
    return frame


def pool_rows(ws: Workspace, name: str | None = None, *, qid: str | None = None) -> tuple[StoredPool, list[tuple]] | None:
    """`load_pool`'s pool and its candidates as plain rows (the same query, no DataFrame: what a dry run reads):
    (query_id, doc_id, priority, best_rank, n_runs, runs, ranks, group, representative 0/1) each; None if the
    workspace has no pool."""
    chosen = ws.pool(name)
    if chosen is None:
        return None
    sql, params = _candidates_query(chosen, qid)
    return chosen, ws.connection().execute(sql, params).fetchall()


def _candidates_query(chosen: StoredPool, qid: str | None) -> tuple[str, tuple]:
    """The query of a stored pool's candidates (of one topic with `qid`), topic then priority order."""
    return ("SELECT qid AS query_id, docid AS doc_id, priority, best_rank, n_runs, runs, ranks, "
            "dup_group AS \"group\", representative FROM pool_candidates WHERE pool_id = ?"
            + (" AND qid = ?" if qid is not None else "") + " ORDER BY qid, priority",
            (chosen.id,) + ((qid,) if qid is not None else ()))


def _candidate_row(d: dict) -> tuple:
    """A pool_candidates row (without its pool id) of one candidate, given as a dict of its columns."""
    runs = d.get("runs")
    ranks = d.get("ranks")
    return (str(d["query_id"]), str(d["doc_id"]), int(d.get("priority", 0)),
            _opt_int(d.get("best_rank")), _opt_int(d.get("n_runs")),
            ";".join(runs) if isinstance(runs, (list, tuple)) else runs,
            None if d.get("group") in (None, "") or d.get("group") != d.get("group") else str(d.get("group")),
            int(bool(d.get("representative", True))),
            ";".join(map(str, ranks)) if isinstance(ranks, (list, tuple)) else ranks)


def _stored_pool(row: tuple) -> StoredPool:
    pool_id, name, strategy, params, created = row
    return StoredPool(pool_id, name, strategy, json.loads(params or "{}"), created)


def _opt_int(v):
    try:
        return None if v is None or v != v else int(v)
    except (TypeError, ValueError):
        return None
