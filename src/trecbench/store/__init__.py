"""The bench workspace: settings file and SQLite store (judgments with who made them, pools, nuggets, cache)."""
from .base import text_hash
from .judgments import Judge, Judgment
from .pools import PoolSummary, StoredPool, load_pool, save_pool
from .schema import BrokenDatabase
from .settings import Settings
from .workspace import Workspace, WorkspaceLike, as_workspace

__all__ = ["BrokenDatabase", "Judge", "Judgment", "PoolSummary", "Settings", "StoredPool", "Workspace", "WorkspaceLike",
           "as_workspace", "load_pool", "save_pool", "text_hash"]
