"""Who is judging: assessors and their login tokens, login sessions, and leases of pairs being judged.

Only a token's hash is stored. A session is a row the signed cookie names, so that it can be ended here
(logging out, removing an assessor, a new token). A lease offers one pair to one assessor for a while;
an assessor holds at most one. A model judging run leases the pairs it is asking about too (`take_pairs`),
so that two runs of one judge share the work: its leases are rows of the same table whose holder is
`model RUN JUDGE` (a person's name has no space), many per run, invisible to the web app.
"""
from __future__ import annotations

import hashlib
import os
import secrets
import socket
from typing import NamedTuple, Sequence

from .base import Connected, now

SESSION_SECONDS = 14 * 24 * 3600  # how long a web app login lasts
# A model run's lease holder: "model ", the run (8 hex digits of the machine's name, 8 of the process id, 4
# random), a space, the judge's name.
MODEL_HOLDER = "model "
_RUN = 20
_JUDGE_AT = len(MODEL_HOLDER) + _RUN + 2  # where the judge's name starts in a holder (SQLite counts from 1)


class PairClaim(NamedTuple):
    """What `take_pairs` found for one document: `taken` (leased to the run now), `held` (a live lease of
    another run of the same judge) or `judged` (the judge recorded it since the run planned: `grade`, None
    for a failure)."""

    docid: str
    state: str
    grade: int | None = None


def model_holder(judge: str) -> str:
    """A new lease holder for one judging run of `judge` (a judge's name as `Judge.name` gives it) in this process."""
    return f"{MODEL_HOLDER}{machine_id()}{os.getpid():08x}{secrets.token_hex(2)} {judge}"


def machine_id() -> str:
    """8 hex digits naming this machine (of its host name) in a model run's lease holder."""
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def run_is_dead(holder: str) -> bool:
    """True when the holder's run was a process of this machine that no longer exists (killed, crashed): its
    leases need not wait to expire. Another machine's run, a process id now used again, or a holder that is not
    a model run's (a person), counts as alive."""
    if not holder.startswith(MODEL_HOLDER):
        return False
    run = holder[len(MODEL_HOLDER):len(MODEL_HOLDER) + _RUN]
    if os.name != "posix" or run[:8] != machine_id():
        return False
    try:
        os.kill(int(run[8:16], 16), 0)  # signal 0: asks whether the process exists, sends nothing
    except ProcessLookupError:
        return True
    except (OSError, ValueError):  # alive under another user, or not a holder this module made
        return False
    return False


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
        """(docid, assessor) of the topic's leases that have not expired at time `at` (people's: a model run's
        leases keep two runs of one judge apart, never a person from a pair)."""
        return self.connection().execute("SELECT docid, assessor FROM leases WHERE qid = ? AND expires_at > ? "
                                         "AND substr(assessor, 1, ?) != ?",
                                         (qid, at, len(MODEL_HOLDER), MODEL_HOLDER)).fetchall()

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

    # ---- a model run's leases (the pairs it is asking about) ----

    def take_pairs(self, holder: str, qid: str, docids: Sequence[str], *, since: int, expires_at: float,
                   at: float) -> list[PairClaim]:
        """Lease to `holder` (`model_holder`) each of the topic's documents that no other run of the same judge
        holds (a lease live at `at`) and the judge has not judged since judgment row `since` (what the run
        saw when it planned), in one write transaction; says for each what it found. The lease of a run that
        died is taken over: at once when it was a process of this machine, else once it has expired."""
        judge = holder[_JUDGE_AT - 1:]
        claims = []
        with self.transaction() as c:
            for docid in docids:
                row = c.execute("SELECT j.grade FROM judgments j JOIN judges g ON g.id = j.judge_id "
                                "WHERE j.qid = ? AND j.docid = ? AND j.id > ? AND g.kind = 'model' AND g.name = ? "
                                "ORDER BY j.id DESC LIMIT 1", (qid, docid, since, judge)).fetchone()
                if row is not None:
                    claims.append(PairClaim(docid, "judged", row[0]))
                    continue
                c.execute("DELETE FROM leases WHERE qid = ? AND docid = ? AND expires_at <= ?", (qid, docid, at))
                others = [r[0] for r in c.execute(
                    "SELECT assessor FROM leases WHERE qid = ? AND docid = ? AND substr(assessor, 1, ?) = ? "
                    "AND substr(assessor, ?) = ? AND assessor != ?",
                    (qid, docid, len(MODEL_HOLDER), MODEL_HOLDER, _JUDGE_AT, judge, holder))]
                if any(not run_is_dead(other) for other in others):
                    claims.append(PairClaim(docid, "held"))
                    continue
                c.executemany("DELETE FROM leases WHERE qid = ? AND docid = ? AND assessor = ?",
                              [(qid, docid, other) for other in others])
                c.execute("INSERT OR REPLACE INTO leases (qid, docid, assessor, expires_at) VALUES (?, ?, ?, ?)",
                          (qid, docid, holder, expires_at))
                claims.append(PairClaim(docid, "taken"))
        return claims

    def renew_leases(self, holder: str, expires_at: float) -> None:
        """Every lease `holder` still has now lasts until `expires_at` (a run that is alive keeps its pairs)."""
        with self.transaction() as c:
            c.execute("UPDATE leases SET expires_at = ? WHERE assessor = ?", (expires_at, holder))


def _hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
