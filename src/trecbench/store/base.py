"""What every store module builds on: the workspace as its queries see it, the time stamp rows carry, a text's hash.

Each module of the store keeps one part of the bench (judgments, pools, assessors, drafting runs, topics,
settings) as a class of methods holding that part's queries; `Workspace` (store/workspace.py) is made of
them and gives them what `Connected` declares: the folder, this thread's connection, write transactions.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
import hashlib
import sqlite3
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from pathlib import Path


def now() -> str:
    """The time a row is written, as every table keeps it (UTC, ISO 8601 to the millisecond)."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def text_hash(text: str) -> str:
    """The sha256 of a text: what judgments and evidence links keep of the document they are about."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def row_id(cursor: sqlite3.Cursor) -> int:
    """The id of the row an INSERT just wrote."""
    assert cursor.lastrowid is not None
    return cursor.lastrowid


class Connected(ABC):
    """The part of a workspace a store module's queries use; `Workspace` provides it (an abstract base, so a
    class made of the store's modules that lacks one of these cannot be made at all)."""

    path: Path

    @abstractmethod
    def connection(self) -> sqlite3.Connection:
        """This thread's connection to the workspace's database."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """A write transaction (a savepoint of the thread's open one, inside another)."""
