"""Judges and their judgments: recording a judgment the moment it exists, and every way the bench reads them;
and the pairs people skipped with a comment (a skip is not a judgment: no grade, never in qrels).

Every judgment is a row written (and committed) as soon as it exists, with who or what made it; rows are
never updated or deleted, so several judges may judge the same pair and nothing is overwritten. A judge
(a person, a model with its prompt and parameters, an imported file) is a row of its own, made once.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Iterable, NamedTuple

from .base import now, row_id
from .corpus_versions import CorpusVersionStore, current_version_id


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


class Skip(NamedTuple):
    """An assessor could not decide on a pair and went on, saying why in `comment` (may be empty)."""

    id: int
    qid: str
    docid: str
    assessor: str
    comment: str
    created_at: str


class JudgeStats(NamedTuple):
    """A judge of the workspace (`id`: its row) with its parameters, first use and counts of judgments."""

    id: int
    judge: Judge
    params: dict
    created_at: str
    ok: int  # successful judgments, copies to duplicates included
    direct: int  # successful judgments not copied from a duplicate
    failed: int


class JudgmentStore(CorpusVersionStore):
    """The workspace's judges and judgments (part of `Workspace`)."""

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
            return row_id(c.execute("INSERT INTO judges (kind, name, model, prompt_id, prompt_hash, params_json, "
                                    "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)", (*key, now())))

    def record(self, judgment: Judgment) -> int:
        """Write one judgment and commit it at once; returns its row id."""
        return self.record_many([judgment])[0]

    def record_many(self, judgments: Iterable[Judgment]) -> list[int]:
        """Write judgments in one transaction; each records the corpus version it was made on (the current
        one: one lookup for the batch; None before the workspace has versions), and the texts of passages
        judged for the first time are kept (one lookup for the batch, then only those texts are read)."""
        judgments = list(judgments)
        ids = {j.judge: self.judge_id(j.judge) for j in judgments}
        out = []
        with self.transaction() as c:
            version = current_version_id(c)
            for j in judgments:
                if j.status == "ok" and j.grade is None:
                    raise ValueError("a judgment with status ok needs a grade")
                cur = c.execute(
                    "INSERT INTO judgments (qid, docid, grade, status, judge_id, raw_reply, rationale, error, "
                    "propagated_from, doc_hash, created_at, corpus_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (j.qid, j.docid, j.grade if j.status == "ok" else None, j.status, ids[j.judge], j.raw_reply,
                     j.rationale, j.error, j.propagated_from, j.doc_hash, j.created_at, version))
                out.append(row_id(cur))
            self.keep_judged_texts(c, version, {j.docid for j in judgments if j.status == "ok"})
        return out

    def judgment_rows(self, *, status: str | None = "ok", kind: str | None = None, qid: str | None = None,
                      docid: str | None = None, pool: int | None = None, direct: bool = False,
                      newest_first: bool = False, limit: int | None = None,
                      after: int | None = None, judge: str | None = None) -> list[JudgmentRow]:
        """Judgments with their judges (id order, or newest first): those of `status` (None: all), of judges of
        `kind`, of the judge named `judge`, of one topic or pair, of the representatives of pool id `pool`, only
        `direct` ones (not copied from a duplicate), only those recorded after row id `after`. The one place the
        store joins judgments to judges."""
        sql, args = _judgment_sql(status=status, kind=kind, qid=qid, docid=docid, pool=pool, direct=direct,
                                  after=after, judge=judge)
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

    def judge_stats(self) -> list[JudgeStats]:
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

    def record_skip(self, qid: str, docid: str, assessor: str, comment: str) -> int:
        """Keep that `assessor` skipped the pair with `comment`, inside the caller's transaction if any;
        returns the row id."""
        sql = "INSERT INTO skips (qid, docid, assessor, comment, created_at) VALUES (?, ?, ?, ?, ?)"
        args = (qid, docid, assessor, comment, now())
        conn = self.connection()
        if conn.in_transaction:
            return row_id(conn.execute(sql, args))
        with self.transaction() as c:
            return row_id(c.execute(sql, args))

    def skips(self, *, qid: str | None = None) -> list[Skip]:
        """The pairs people skipped (of one topic with `qid`), in the order they were skipped."""
        sql = "SELECT id, qid, docid, assessor, comment, created_at FROM skips"
        rows = self.connection().execute(sql + (" WHERE qid = ? ORDER BY id" if qid is not None else " ORDER BY id"),
                                         (qid,) if qid is not None else ())
        return [Skip(*r) for r in rows]

    def raw_replies(self, judge_id: int) -> list[str | None]:
        """The model replies kept with judge `judge_id`'s direct successful judgments, one per judgment."""
        rows = self.connection().execute("SELECT raw_reply FROM judgments WHERE judge_id = ? AND status = 'ok' "
                                         "AND propagated_from IS NULL ORDER BY id", (judge_id,))
        return [r[0] for r in rows]

    def pair_replies(self, judge_id: int) -> list[tuple[str, str, str]]:
        """(qid, docid, raw reply) of judge `judge_id`'s direct successful judgments that kept a reply, id order."""
        return self.connection().execute(
            "SELECT qid, docid, raw_reply FROM judgments WHERE judge_id = ? AND status = 'ok' AND propagated_from "
            "IS NULL AND raw_reply IS NOT NULL ORDER BY id", (judge_id,)).fetchall()


def _judgment_sql(*, status: str | None = "ok", kind: str | None = None, qid: str | None = None,
                  docid: str | None = None, pool: int | None = None, direct: bool = False,
                  after: int | None = None, columns: str | None = None, judge: str | None = None) -> tuple[str, tuple]:
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
    for clause, value in (("j.status = ?", status), ("g.kind = ?", kind), ("g.name = ?", judge), ("j.qid = ?", qid),
                          ("j.docid = ?", docid), ("j.id > ?", after)):
        if value is not None:
            where.append(clause)
            args.append(value)
    if direct:
        where.append("j.propagated_from IS NULL")
    return sql + (" WHERE " + " AND ".join(where) if where else ""), tuple(args)
