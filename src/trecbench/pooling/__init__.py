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

from typing import TYPE_CHECKING, Any

from trecbench.helpers.lazy import attribute, by_module

# What type checkers and editors see; at run time `_EXPORTS` imports each name on first use (helpers/lazy.py).
if TYPE_CHECKING:
    from trecbench.pooling.pool import (
        Pool as Pool, PoolInfo as PoolInfo, build_pool as build_pool, read_pool as read_pool, write_pool as write_pool,
    )
    from trecbench.pooling.rank import RunInfo as RunInfo, top_k as top_k
    from trecbench.pooling.strategies import (
        STRATEGIES as STRATEGIES, Strategy as Strategy, get_strategy as get_strategy, is_adaptive as is_adaptive,
    )
    from trecbench.pooling.session import JudgingSession as JudgingSession
    from trecbench.pooling.simulation import simulate as simulate
    from trecbench.pooling.stats import pool_stats as pool_stats
    from trecbench.judging.estimate import estimate_cost as estimate_cost
    from trecbench.pooling.loo import leave_one_out as leave_one_out, workspace_leave_one_out as workspace_leave_one_out
    from trecbench.pooling.workspace import (
        pool_runs as pool_runs, resume_adaptive as resume_adaptive,
    )

_EXPORTS = by_module({
    "trecbench.pooling.pool": ("Pool", "PoolInfo", "build_pool", "read_pool", "write_pool"),
    "trecbench.pooling.rank": ("RunInfo", "top_k"),
    "trecbench.pooling.strategies": ("STRATEGIES", "Strategy", "get_strategy", "is_adaptive"),
    "trecbench.pooling.session": ("JudgingSession",),
    "trecbench.pooling.simulation": ("simulate",),
    "trecbench.pooling.stats": ("pool_stats",),
    "trecbench.judging.estimate": ("estimate_cost",),
    "trecbench.pooling.loo": ("leave_one_out", "workspace_leave_one_out"),
    "trecbench.pooling.workspace": ("pool_runs", "resume_adaptive"),
})

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    return attribute(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return __all__
