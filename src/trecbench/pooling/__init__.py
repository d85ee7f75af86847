"""Pooling: which documents of many runs to judge, in which order, and which are duplicates of each other.

    >>> from trecbench.pooling import build_pool, read_pool
    >>> pool = build_pool(["bm25.txt", "dense.txt"], depth=100, strategy="rrf", budget=50)
    >>> pool.write("pool.tsv"); read_pool("pool.tsv").candidates.head()

Strategies live one per module under `strategies/` and are found by name (`get_strategy`); adaptive
ones (mtf, maxmean) choose the next document during judging (`pool.session()`), and `simulate`
replays existing qrels to compare them. `pool_stats`, `estimate_cost` and `leave_one_out` answer
how big the pool is, what judging it by a model costs, and whether the judgments can be reused.
"""
from __future__ import annotations

from typing import Any

from trecbench.helpers.lazy import attribute, by_module

_EXPORTS = by_module({
    "trecbench.pooling.pool": ("Pool", "PoolInfo", "build_pool", "read_pool", "write_pool"),
    "trecbench.pooling.rank": ("RunInfo", "top_k"),
    "trecbench.pooling.strategies": ("STRATEGIES", "Strategy", "get_strategy"),
    "trecbench.pooling.session": ("JudgingSession",),
    "trecbench.pooling.simulate": ("simulate",),
    "trecbench.pooling.stats": ("pool_stats",),
    "trecbench.judging.estimate": ("estimate_cost",),
    "trecbench.pooling.loo": ("leave_one_out", "workspace_leave_one_out"),
    "trecbench.pooling.workspace": ("pool_runs", "resume_adaptive", "is_adaptive"),
})

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    return attribute(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return __all__
