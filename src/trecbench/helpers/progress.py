"""Progress bars: one on stderr for a command, and one that shows nothing for library calls made without one."""
from __future__ import annotations

import sys
from typing import Any


def progress_bar(show: bool, **kwargs: Any) -> Any:
    """A tqdm bar on stderr, cleared when done unless leave=True (a `SilentProgress` when `show` is False, so
    a command that shows none does not import tqdm); `kwargs` go to tqdm (total, unit, desc, delay, leave ...)."""
    if not show:
        return SilentProgress()
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

    def set_postfix_str(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> "SilentProgress":
        return self

    def __exit__(self, *exc: object) -> None:
        pass
