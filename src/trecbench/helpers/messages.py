"""How a message names a list that may be long: its first few items, then `...`."""
from __future__ import annotations

from typing import Iterable


def some(items: Iterable[str], limit: int = 10) -> str:
    """The first `limit` items, space separated, with `...` when there are more."""
    items = list(items)
    return " ".join(items[:limit]) + (" ..." if len(items) > limit else "")
