"""The bench workspace: settings file and SQLite store (judgments with who made them, pools, nuggets, cache)."""
from .schema import BrokenDatabase
from .workspace import Judge, Judgment, PoolSummary, Settings, StoredPool, Workspace, load_pool, save_pool, text_hash

__all__ = ["BrokenDatabase", "Judge", "Judgment", "PoolSummary", "Settings", "StoredPool", "Workspace", "load_pool", "save_pool",
           "text_hash"]
