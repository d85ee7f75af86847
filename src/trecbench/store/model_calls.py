"""The model calls logged in the workspace (`llm_calls`), as the report reads them."""
from __future__ import annotations

import sqlite3


def models_by_purpose(conn: sqlite3.Connection) -> dict[str, str]:
    """{purpose: the distinct models called for it, comma-separated} of every purpose with logged calls."""
    return dict(conn.execute("SELECT purpose, GROUP_CONCAT(DISTINCT model) FROM llm_calls GROUP BY purpose"))
