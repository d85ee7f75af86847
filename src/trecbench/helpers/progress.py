"""Progress bars: one on stderr for a command, and one that shows nothing for library calls made without one.

A bar is drawn only on a terminal. When stderr is a file or a pipe (`runs bm25 2>log`, a cron job), redrawn
frames would fill the log with carriage returns, so the job says one line when it starts and one when it
ends instead (a bar with a `delay` starts its line only once the job has run that long, as tqdm shows it).
"""
from __future__ import annotations

import sys
import time
from typing import Any, Callable, TextIO

def progress_bar(show: bool, **kwargs: Any) -> Any:
    """A tqdm bar on stderr, cleared when done unless leave=True (a `SilentProgress` when `show` is False, so
    a command that shows none does not import tqdm; a `LogProgress` when stderr is not a terminal); `kwargs`
    go to tqdm (total, unit, desc, delay, leave ...)."""
    if not show:
        return SilentProgress()
    if not draws_bars():
        return LogProgress(sys.stderr, total=kwargs.get("total"), unit=kwargs.get("unit", "it"),
                           desc=kwargs.get("desc") or "", after=float(kwargs.get("delay") or 0))
    from tqdm import tqdm

    kwargs.setdefault("leave", False)
    return tqdm(disable=not show, file=sys.stderr, dynamic_ncols=True, **kwargs)


def draws_bars() -> bool:
    """Whether bars are drawn (stderr is a terminal): libraries with bars of their own are told the same."""
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # a stream without isatty, or a closed one
        return False


class SilentProgress:
    """Stands in for a tqdm bar: the calls a long job makes on its bar, doing nothing."""

    total: int | None = None

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


class LogProgress(SilentProgress):
    """A bar for a log: a line when the job starts (or, given `after` seconds, once it has run that long), a
    line when it ends if it said the first, and no carriage return ever."""

    def __init__(self, stream: TextIO, *, total: int | None, unit: str, desc: str, after: float,
                 clock: Callable[[], float] = time.monotonic):
        self.stream, self.total, self.unit, self.desc, self.after, self.clock = stream, total, unit, desc, after, clock
        self.started, self.n, self.postfix, self.said = clock(), 0, "", False
        if after <= 0:
            self.said = True
            self._line("started")

    def update(self, n: int = 1) -> None:
        self.n += n
        if not self.said and self.clock() - self.started >= self.after:
            self.said = True
            self._line("so far")

    def set_description_str(self, text: str) -> None:
        self.desc = text

    def set_postfix_str(self, text: str) -> None:
        self.postfix = text

    def close(self) -> None:
        if self.said:
            self.said = False
            self._line(f"done in {self.clock() - self.started:.0f} s")

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _line(self, state: str) -> None:
        of = f" of {self.total}" if self.total else ""
        what = f"{self.desc}: " if self.desc else ""
        extra = f" ({self.postfix})" if self.postfix else ""
        self.stream.write(f"{what}{self.n}{of} {self.unit} {state}{extra}\n")
        self.stream.flush()
