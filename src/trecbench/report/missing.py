"""Why a report section is empty, and the command that would fill it (a record every section module shares)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Missing:
    """Why a section is empty, and a command that would fill it."""

    reason: str
    command: str
