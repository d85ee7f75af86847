"""Progress bars: one on stderr for a command, and one that shows nothing for library calls made without one."""
from __future__ import annotations

import sys
from typing import Any


def progress_bar(show: bool, **kwargs: Any) -> Any:
    """A tqdm bar on stderr, cleared when done unless leave=True (a no-op one when `show` is False); `kwargs` go
    to tqdm (total, unit, desc, delay, leave ...)."""
    from tqdm import tqdm

    kwargs.setdefault("leave", False)
    return tqdm(disable=not show, file=sys.stderr, dynamic_ncols=True, **kwargs)


class SilentProgress:
    """Stands in for a tqdm bar: the calls a long job makes on its bar, doing nothing."""

    total = None

    def update(self, n: int = 1) -> None:
        pass

    def set_description_str(self, text: str) -> None:
        pass

    def refresh(self) -> None:
        pass
