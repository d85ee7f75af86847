"""RBP-weighted pooling: judge documents in the order of the rank-biased precision weight runs give them."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trecbench.pooling.strategies.base import StaticStrategy, register


@register
@dataclass
class RankBiasedPrecision(StaticStrategy):
    """Documents by summed RBP weight, sum over runs of (1 - p) p^(rank - 1) (Moffat, Webber & Zobel 2007).

    The weight is what judging the document could change in the runs' RBP scores, so documents that
    matter most to the comparison of systems come first. p = 0.8 by default (the paper's persistence).
    With a budget N, the N heaviest documents per topic are kept.
    """

    p: float = 0.8
    name = "rbp"
    summary = "by fused score (rank-biased precision weight)"
    param_help = {"p": "Persistence p of rbp: weight (1-p)p^(rank-1)."}
    citation = ("A. Moffat, W. Webber and J. Zobel. Strategic system comparisons via targeted relevance judgments. "
                "SIGIR 2007.")

    def __post_init__(self) -> None:
        if not 0 < self.p < 1:
            raise ValueError(f"rbp p must be between 0 and 1, not {self.p}")

    def fused(self, rank: np.ndarray, row_candidate: np.ndarray, n: int) -> np.ndarray:
        weight = (1.0 - self.p) * np.power(self.p, rank.astype(np.float64) - 1.0)
        return np.bincount(row_candidate, weights=weight, minlength=n)
