"""Support assessment in the store: the answer sentences registered for judging, the judgments of whether a
cited passage backs a sentence, and the leases that keep two judges of one kind off the same pair.

A support pair is (run, topic, sentence index, cited docid). Judgments are rows that are only added, like
relevance judgments: several judges may grade one pair, and a failed reply is a row with status 'failed'
and no grade (never "no support"). Each judgment keeps the hash of the sentence text it was made on, so a
sentence whose answer file changed is told apart from the one that was judged.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Iterable, NamedTuple, Sequence

from .base import now, row_id
from .judgments import Judge, JudgmentStore

SupportKey = tuple[str, str, int, str]  # (run_id, qid, sentence, docid)


class SupportSentence(NamedTuple):
    """One registered answer sentence with the docids it cites (in the answer's order)."""

    run_id: str
    qid: str
    sentence: int
    text: str
    text_hash: str
    citations: tuple[str, ...]


@dataclass(frozen=True)
class SupportJudgment:
    """A judge's grade of how far passage `docid` backs sentence `sentence` of a run's answer to `qid`."""

    run_id: str
    qid: str
    sentence: int
    docid: str
    text_hash: str
    grade: str | None  # full | partial | none | contradicts; None when the judgment failed
    judge: Judge
    status: str = "ok"  # ok | failed
    raw_reply: str | None = None
    rationale: str | None = None
    error: str | None = None
    created_at: str = field(default_factory=now)

    @property
    def key(self) -> SupportKey:
        return (self.run_id, self.qid, self.sentence, self.docid)


class SupportRow(NamedTuple):
    """One stored support judgment with its judge (`judge`: the judge's name)."""

    id: int
    run_id: str
    qid: str
    sentence: int
    docid: str
    text_hash: str
    grade: str | None
    status: str
    rationale: str | None
    error: str | None
    created_at: str
    judge_id: int
    judge_kind: str
    judge: str
    model: str | None

    @property
    def key(self) -> SupportKey:
        return (self.run_id, self.qid, self.sentence, self.docid)


class SupportStore(JudgmentStore):
    """The workspace's support sentences, judgments and leases (part of `Workspace`)."""

    def register_sentences(self, sentences: Iterable[SupportSentence]) -> tuple[int, int]:
        """Keep the sentences to be judged, in one transaction; returns (added, changed). A sentence already
        registered with the same text is left as it is; one whose text or citations changed is replaced
        (its judgments stay, under the old text's hash)."""
        added = changed = 0
        stamp = now()
        with self.transaction() as c:
            for s in sentences:
                row = c.execute("SELECT text_hash, citations_json FROM support_sentences WHERE run_id = ? AND qid = ? "
                                "AND sentence = ?", (s.run_id, s.qid, s.sentence)).fetchone()
                cited = json.dumps(list(s.citations))
                if row is not None and tuple(row) == (s.text_hash, cited):
                    continue
                c.execute("INSERT OR REPLACE INTO support_sentences (run_id, qid, sentence, text, text_hash, "
                          "citations_json, registered_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                          (s.run_id, s.qid, s.sentence, s.text, s.text_hash, cited, stamp))
                if row is None:
                    added += 1
                else:
                    changed += 1
        return added, changed

    def support_sentences(self, *, run_id: str | None = None, qid: str | None = None) -> list[SupportSentence]:
        """The registered sentences (of one run and/or topic), by run, topic and sentence index."""
        sql, args = _where("SELECT run_id, qid, sentence, text, text_hash, citations_json FROM support_sentences",
                           (("run_id = ?", run_id), ("qid = ?", qid)))
        rows = self.connection().execute(sql + " ORDER BY run_id, qid, sentence", args)
        return [SupportSentence(r, q, n, t, h, tuple(json.loads(c))) for r, q, n, t, h, c in rows]

    def record_support(self, judgments: Iterable[SupportJudgment]) -> list[int]:
        """Write support judgments in one transaction and commit them; returns their row ids."""
        judgments = list(judgments)
        ids = {j.judge: self.judge_id(j.judge) for j in judgments}
        out = []
        with self.transaction() as c:
            for j in judgments:
                if (j.status == "ok") != (j.grade is not None):
                    raise ValueError("a support judgment has a grade exactly when its status is ok")
                out.append(row_id(c.execute(
                    "INSERT INTO support_judgments (run_id, qid, sentence, docid, text_hash, grade, status, judge_id, "
                    "raw_reply, rationale, error, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (j.run_id, j.qid, j.sentence, j.docid, j.text_hash, j.grade, j.status, ids[j.judge],
                     j.raw_reply, j.rationale, j.error, j.created_at))))
        return out

    def support_rows(self, *, status: str | None = "ok", kind: str | None = None, judge: str | None = None,
                     run_id: str | None = None, qid: str | None = None) -> list[SupportRow]:
        """Support judgments with their judges, in row order: of `status` (None: all), of judges of `kind`
        (human | model | import), of the judge named `judge`, of one run and/or topic."""
        sql, args = _where(
            "SELECT s.id, s.run_id, s.qid, s.sentence, s.docid, s.text_hash, s.grade, s.status, s.rationale, "
            "s.error, s.created_at, g.id, g.kind, g.name, g.model FROM support_judgments s "
            "JOIN judges g ON g.id = s.judge_id",
            (("s.status = ?", status), ("g.kind = ?", kind), ("g.name = ?", judge), ("s.run_id = ?", run_id),
             ("s.qid = ?", qid)))
        return [SupportRow(*r) for r in self.connection().execute(sql + " ORDER BY s.id", args)]

    def support_judged(self, judge: Judge) -> set[SupportKey]:
        """Pairs this judge has a successful support judgment for (what a resumed run skips)."""
        jid = self.judge_id(judge)
        rows = self.connection().execute("SELECT run_id, qid, sentence, docid FROM support_judgments "
                                         "WHERE judge_id = ? AND status = 'ok'", (jid,))
        return {(r, q, int(n), d) for r, q, n, d in rows}

    # ---- leases: a pair offered to one assessor, or being asked about by one model run ----

    def take_support_pairs(self, holder: str, keys: Sequence[SupportKey], *, expires_at: float,
                           at: float) -> list[SupportKey]:
        """Lease to `holder` each pair that no other holder has a live lease on (at time `at`), in one write
        transaction; returns the pairs taken (those `holder` already held included). Expired leases are
        swept first, and the lease of a model run that died on this machine is taken over at once
        (`assessors.run_is_dead`), as `take_pairs` does for relevance: a dead run will never give it back."""
        from .assessors import run_is_dead

        taken = []
        with self.transaction() as c:
            c.execute("DELETE FROM support_leases WHERE expires_at <= ?", (at,))
            for key in keys:
                row = c.execute("SELECT holder FROM support_leases WHERE run_id = ? AND qid = ? AND sentence = ? "
                                "AND docid = ?", key).fetchone()
                if row is not None and row[0] != holder and not run_is_dead(row[0]):
                    continue
                c.execute("INSERT OR REPLACE INTO support_leases (run_id, qid, sentence, docid, holder, expires_at) "
                          "VALUES (?, ?, ?, ?, ?, ?)", (*key, holder, expires_at))
                taken.append(key)
        return taken

    def support_leases(self, at: float) -> dict[SupportKey, str]:
        """{pair: holder} of the leases live at time `at`."""
        rows = self.connection().execute("SELECT run_id, qid, sentence, docid, holder FROM support_leases "
                                         "WHERE expires_at > ?", (at,))
        return {(r, q, int(n), d): h for r, q, n, d, h in rows}

    def renew_support_leases(self, holder: str, expires_at: float) -> None:
        """Every support lease `holder` still has lasts until `expires_at`."""
        with self.transaction() as c:
            c.execute("UPDATE support_leases SET expires_at = ? WHERE holder = ?", (expires_at, holder))

    def drop_support_leases(self, holder: str, key: SupportKey | None = None) -> None:
        """Remove the holder's support leases (only that pair's when given); inside the caller's transaction
        if any."""
        sql = "DELETE FROM support_leases WHERE holder = ?"
        args: tuple[object, ...] = (holder,)
        if key is not None:
            sql, args = sql + " AND run_id = ? AND qid = ? AND sentence = ? AND docid = ?", (holder, *key)
        conn = self.connection()
        if conn.in_transaction:
            conn.execute(sql, args)
        else:
            with self.transaction() as c:
                c.execute(sql, args)


def _where(sql: str, clauses: Iterable[tuple[str, object]]) -> tuple[str, tuple]:
    where = [(clause, value) for clause, value in clauses if value is not None]
    if not where:
        return sql, ()
    return sql + " WHERE " + " AND ".join(c for c, _ in where), tuple(v for _, v in where)
