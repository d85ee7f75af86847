"""The workspace's nuggets (`nuggets`), as the report counts them."""
from __future__ import annotations

import sqlite3


def nugget_counts(conn: sqlite3.Connection) -> tuple[int, int, int]:
    """(live nuggets, vital ones, approved ones) of the whole workspace; 0 for each when it has none."""
    count, vital, approved = conn.execute("SELECT COUNT(*), SUM(importance = 'vital'), SUM(status = 'approved') "
                                          "FROM nuggets WHERE deleted = 0").fetchone()
    return int(count or 0), int(vital or 0), int(approved or 0)
