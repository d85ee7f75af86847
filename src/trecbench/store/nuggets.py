"""The nuggets' SQL: their current state (`nuggets`), every version (`nugget_versions`) and the queries of
imported topics (`nugget_topics`), each statement a function on a connection the caller holds.

Rows come back as SQLite gives them (JSON columns as text): the records and their rules are the nuggets
package's (`trecbench.nuggets.records`). A write runs inside the caller's transaction, so one change of a
nugget (its state and its version row) commits or rolls back whole.
"""
from __future__ import annotations

import sqlite3
from typing import Iterable

__all__ = ["NUGGET_COLUMNS", "nugget_row", "live_rows", "live_ids", "topic_nugget_ids", "nugget_exists",
           "insert_nugget", "write_nugget", "mark_deleted", "set_positions", "version_rows", "insert_version",
           "curation_rows", "topic_query", "topic_queries", "save_topic_query", "nugget_counts"]

# The columns of a nugget row, in the order `nugget_row` and `live_rows` give them (`deleted` last).
NUGGET_COLUMNS = ("id, qid, text, importance, status, origin, position, version, support_json, updated_by, "
                  "updated_at, extra_json, deleted")


# ---- current state ----------------------------------------------------------------------------------------

def nugget_row(conn: sqlite3.Connection, nugget_id: str) -> tuple | None:
    """The nugget's row (live or deleted), None if no nugget ever had this id."""
    return conn.execute(f"SELECT {NUGGET_COLUMNS} FROM nuggets WHERE id = ?", (nugget_id,)).fetchone()


def live_rows(conn: sqlite3.Connection, qid: str | None = None) -> list[tuple]:
    """The rows of live nuggets: of topic `qid` by position, or (no `qid`) of every topic by qid, then position."""
    if qid is None:
        return conn.execute(f"SELECT {NUGGET_COLUMNS} FROM nuggets WHERE deleted = 0 ORDER BY qid, position, id"
                            ).fetchall()
    return conn.execute(f"SELECT {NUGGET_COLUMNS} FROM nuggets WHERE qid = ? AND deleted = 0 ORDER BY position, id",
                        (qid,)).fetchall()


def live_ids(conn: sqlite3.Connection, qid: str) -> list[str]:
    """The ids of the topic's live nuggets, by position."""
    return [r[0] for r in conn.execute("SELECT id FROM nuggets WHERE qid = ? AND deleted = 0 ORDER BY position, id",
                                       (qid,))]


def topic_nugget_ids(conn: sqlite3.Connection, qid: str) -> list[str]:
    """The ids of every nugget the topic ever had, deleted ones too."""
    return [r[0] for r in conn.execute("SELECT id FROM nuggets WHERE qid = ?", (qid,))]


def nugget_exists(conn: sqlite3.Connection, nugget_id: str) -> bool:
    """Whether any nugget, live or deleted, has this id."""
    return conn.execute("SELECT 1 FROM nuggets WHERE id = ?", (nugget_id,)).fetchone() is not None


def insert_nugget(conn: sqlite3.Connection, nugget_id: str, qid: str, text: str, importance: str, status: str,
                  origin: str, support_json: str, extra_json: str, author: str, when: str) -> None:
    """A new live nugget at version 1, not yet placed (position -1: `set_positions` places it)."""
    conn.execute("INSERT INTO nuggets (id, qid, text, importance, status, origin, position, support_json, extra_json, "
                 "deleted, version, updated_by, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 1, ?, ?)",
                 (nugget_id, qid, text, importance, status, origin, -1, support_json, extra_json, author, when))


def write_nugget(conn: sqlite3.Connection, nugget_id: str, *, text: str, importance: str, status: str, origin: str,
                 support_json: str, extra_json: str, deleted: bool, version: int, author: str, when: str) -> None:
    """Overwrite the nugget's content, whether it is deleted, its version and who changed it when (not its place)."""
    conn.execute("UPDATE nuggets SET text = ?, importance = ?, status = ?, origin = ?, support_json = ?, "
                 "extra_json = ?, deleted = ?, version = ?, updated_by = ?, updated_at = ? WHERE id = ?",
                 (text, importance, status, origin, support_json, extra_json, int(bool(deleted)), version, author,
                  when, nugget_id))


def mark_deleted(conn: sqlite3.Connection, nugget_id: str, version: int, author: str, when: str) -> None:
    """Mark the nugget deleted at `version` (its content stays for its history)."""
    conn.execute("UPDATE nuggets SET deleted = 1, version = ?, updated_by = ?, updated_at = ? WHERE id = ?",
                 (version, author, when, nugget_id))


def set_positions(conn: sqlite3.Connection, nugget_ids: Iterable[str]) -> None:
    """Give the nuggets positions 0, 1, ... in this order, writing only the rows whose position changes."""
    conn.executemany("UPDATE nuggets SET position = ? WHERE id = ? AND position != ?",
                     [(k, i, k) for k, i in enumerate(nugget_ids)])


# ---- versions ---------------------------------------------------------------------------------------------

def version_rows(conn: sqlite3.Connection, nugget_id: str) -> list[tuple]:
    """(nugget_id, version, action, author, created_at, snapshot_json, detail_json) of the nugget, oldest first."""
    return conn.execute("SELECT nugget_id, version, action, author, created_at, snapshot_json, detail_json "
                        "FROM nugget_versions WHERE nugget_id = ? ORDER BY version", (nugget_id,)).fetchall()


def insert_version(conn: sqlite3.Connection, nugget_id: str, version: int, action: str, author: str, when: str,
                   snapshot_json: str, detail_json: str) -> None:
    """Record one version of a nugget: the action, who, when, and the state after it."""
    conn.execute("INSERT INTO nugget_versions (nugget_id, version, action, author, created_at, snapshot_json, "
                 "detail_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                 (nugget_id, version, action, author, when, snapshot_json, detail_json))


def curation_rows(conn: sqlite3.Connection, qid: str) -> list[tuple]:
    """(id, deleted, status, action, snapshot_json, detail_json) of every version of every nugget the topic
    ever had, by nugget id, then version: what tells a person's work from a drafter's."""
    return conn.execute("SELECT n.id, n.deleted, n.status, v.action, v.snapshot_json, v.detail_json FROM nuggets n "
                        "JOIN nugget_versions v ON v.nugget_id = n.id WHERE n.qid = ? ORDER BY n.id, v.version",
                        (qid,)).fetchall()


# ---- topics' queries from imported files ------------------------------------------------------------------

def topic_query(conn: sqlite3.Connection, qid: str) -> str | None:
    """The query an imported nuggets file gave for the topic, None if none did."""
    row = conn.execute("SELECT query FROM nugget_topics WHERE qid = ?", (qid,)).fetchone()
    return row[0] if row else None


def topic_queries(conn: sqlite3.Connection) -> dict[str, str]:
    """{qid: query} of every topic an imported nuggets file gave a query for."""
    return dict(conn.execute("SELECT qid, query FROM nugget_topics").fetchall())


def save_topic_query(conn: sqlite3.Connection, qid: str, query: str) -> None:
    """Keep the topic's query from an imported file, replacing the one an earlier import kept."""
    conn.execute("INSERT INTO nugget_topics (qid, query) VALUES (?, ?) ON CONFLICT (qid) DO UPDATE SET "
                 "query = excluded.query", (qid, query))


# ---- counts -----------------------------------------------------------------------------------------------

def nugget_counts(conn: sqlite3.Connection) -> tuple[int, int, int]:
    """(nuggets, vital, approved) among the workspace's nuggets that are not deleted."""
    total, vital, approved = conn.execute("SELECT COUNT(*), SUM(importance = 'vital'), SUM(status = 'approved') "
                                          "FROM nuggets WHERE deleted = 0").fetchone()
    return int(total or 0), int(vital or 0), int(approved or 0)


def nugget_counts_by_topic(conn: sqlite3.Connection) -> list[tuple[str, int, int, int]]:
    """(qid, live nuggets, vital, approved) of each topic with live nuggets: counted in SQL, so the nugget
    topic list does not read every nugget."""
    return conn.execute("SELECT qid, COUNT(*), SUM(importance = 'vital'), SUM(status = 'approved') FROM nuggets "
                        "WHERE deleted = 0 GROUP BY qid").fetchall()
