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

import importlib
from typing import Any

_EXPORTS = {
    "Pool": "trecbench.pooling.pool",
    "PoolInfo": "trecbench.pooling.pool",
    "build_pool": "trecbench.pooling.pool",
    "read_pool": "trecbench.pooling.pool",
    "write_pool": "trecbench.pooling.pool",
    "RunInfo": "trecbench.pooling.rank",
    "top_k": "trecbench.pooling.rank",
    "STRATEGIES": "trecbench.pooling.strategies",
    "Strategy": "trecbench.pooling.strategies",
    "get_strategy": "trecbench.pooling.strategies",
    "JudgingSession": "trecbench.pooling.session",
    "simulate": "trecbench.pooling.simulate",
    "pool_stats": "trecbench.pooling.stats",
    "estimate_cost": "trecbench.pooling.estimate",
    "leave_one_out": "trecbench.pooling.loo",
    "workspace_leave_one_out": "trecbench.pooling.loo",
    "pool_runs": "trecbench.pooling.workspace",
    "resume_adaptive": "trecbench.pooling.workspace",
    "is_adaptive": "trecbench.pooling.workspace",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'trecbench.pooling' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
