"""The bench workspace: settings file and SQLite store (judgments with who made them, pools, nuggets, cache)."""
from .workspace import Judge, Judgment, Settings, Workspace, text_hash

__all__ = ["Judge", "Judgment", "Settings", "Workspace", "text_hash"]
