"""Reciprocal rank fusion pooling: judge documents in the order of their fused RRF score."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trecbench.pooling.strategies.base import StaticStrategy, register


@register
@dataclass
class ReciprocalRankFusion(StaticStrategy):
    """Documents by RRF score, sum over runs of 1 / (k + rank), k = 60 (Cormack, Clarke & Büttcher 2009).

    Only ranks within the pool depth count. With a budget N, the N best-fused documents per topic are kept.
    """

    k: float = 60.0
    name = "rrf"
    summary = "by fused score (reciprocal rank fusion)"
    param_help = {"k": "k of rrf: 1/(k+rank)."}
    citation = ("G. V. Cormack, C. L. A. Clarke and S. Büttcher. Reciprocal rank fusion outperforms Condorcet and "
                "individual rank learning methods. SIGIR 2009.")

    def __post_init__(self) -> None:
        if not self.k >= 0:
            raise ValueError(f"rrf k must be >= 0, not {self.k}")

    def fused(self, rank: np.ndarray, row_candidate: np.ndarray, n: int) -> np.ndarray:
        return np.bincount(row_candidate, weights=1.0 / (self.k + rank), minlength=n)
