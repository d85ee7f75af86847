"""Nugget drafting runs: per topic and drafter, whether drafting is running, complete, or incomplete and why.

What a resumed `trecbench nuggets draft` reads to skip the topics already drafted; a topic drafted again
replaces its earlier run by the same drafter.
"""
from __future__ import annotations

import json
from typing import NamedTuple

from .base import Connected, now


class DraftRun(NamedTuple):
    """One topic's latest drafting run by one drafter: `running`, `complete`, or `incomplete` with problems."""

    qid: str
    drafter: str  # "llm:<model>" or "extractive"
    status: str
    problems: tuple[str, ...]
    nuggets: int
    started_at: str
    finished_at: str | None


class DraftStore(Connected):
    """The workspace's nugget drafting runs (part of `Workspace`)."""

    def draft_runs(self, *, qid: str | None = None, drafter: str | None = None) -> list[DraftRun]:
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
