"""The bench workspace: settings file and SQLite store (judgments with who made them, pools, nuggets, cache).

The store is plain sqlite3 from the standard library (no ORM, no sqlite-utils): the core installs nothing
for it, and each write is one explicit transaction over the tables it touches (a grade and its lease, a
reply and its call-log row), committed with `synchronous=FULL` for grades, which keeps every assessor page
under its 200 ms p95 with 8 clients at 7.2 ms of CPU a request (docs/web.md, "Speed").
"""
from .base import text_hash
from .judgments import Judge, Judgment
from .pools import PoolSummary, StoredPool, load_pool, save_pool
from .schema import BrokenDatabase
from .settings import Settings
from .workspace import Workspace, WorkspaceLike, as_workspace

__all__ = ["BrokenDatabase", "Judge", "Judgment", "PoolSummary", "Settings", "StoredPool", "Workspace", "WorkspaceLike",
           "as_workspace", "load_pool", "save_pool", "text_hash"]
