"""The web app's people: assessors and their login tokens, login sessions, and leases of pairs being judged.

Only a token's hash is stored. A session is a row the signed cookie names, so that it can be ended here
(logging out, removing an assessor, a new token). A lease offers one pair to one assessor for a while;
an assessor holds at most one.
"""
from __future__ import annotations

import hashlib

from .base import Connected, now

SESSION_SECONDS = 14 * 24 * 3600  # how long a web app login lasts


class AssessorStore(Connected):
    """The workspace's assessors, sessions and leases (part of `Workspace`)."""

    # ---- assessors and tokens ----

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
        from datetime import datetime, timedelta, timezone

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

    # ---- leases (a pair offered to one assessor for a while) ----

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


def _hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
