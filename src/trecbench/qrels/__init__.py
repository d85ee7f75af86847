"""Qrels files: read (fast, vectorised), validate (every problem, with line numbers), write, per-topic stats.

Importing the package is cheap (its modules, and pandas, load on first use: helpers/lazy.py), so that what
needs only `trecbench.qrels.select`'s rows (nugget drafting, its dry run) does not pay for the readers.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trecbench.helpers.lazy import attribute, by_module

# What type checkers and editors see; at run time `_EXPORTS` imports each name on first use (helpers/lazy.py).
if TYPE_CHECKING:
    from trecbench.qrels.stats import qrels_stats as qrels_stats
    from trecbench.qrels.trec import (
        QRELS_FORMAT as QRELS_FORMAT, check_qrels as check_qrels, read_qrels as read_qrels,
        validate_qrels as validate_qrels, write_qrels as write_qrels,
    )

_EXPORTS = by_module({
    "trecbench.qrels.stats": ("qrels_stats",),
    "trecbench.qrels.trec": ("QRELS_FORMAT", "check_qrels", "read_qrels", "validate_qrels", "write_qrels"),
})

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    return attribute(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return __all__
