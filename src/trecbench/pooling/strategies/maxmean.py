"""MaxMean: pooling as a multi-armed bandit, pulling the run with the highest expected relevance."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from trecbench.pooling.strategies.base import RunArms, register


@register
@dataclass
class MaxMean(RunArms):
    """MaxMean (MM), the Bayesian bandit of Losada, Parapar & Barreiro (SAC 2016; IP&M 2017), adaptive.

    Each run is an arm whose reward is the relevance of its next document. With a Beta(1, 1) prior the
    expected reward of a run is (relevant + 1) / (judged + 2) over the documents of its ranking seen
    so far; the next document judged is the top unjudged one of the run with the highest mean (ties:
    the run given first). A document already judged through another run is seen at no cost and
    counts for every run that reaches it.
    """

    name = "maxmean"
    summary = "adaptive, the run with the best mean so far"
    citation = ("D. E. Losada, J. Parapar and A. Barreiro. Feeling lucky? Multi-armed bandits for ordering judgements "
                "in pooling-based evaluation. SAC 2016; Multi-armed bandits for adjudicating documents in "
                "pooling-based evaluation of information retrieval systems. IP&M 53(5), 2017.")

    def start(self, runs: Mapping[str, Sequence[str]], topic: str) -> None:
        super().start(runs, topic)
        self._relevant = [0] * len(self._lists)
        self._seen = [0] * len(self._lists)

    def next(self) -> tuple[str, str] | None:
        best, best_mean = None, -1.0
        for r in range(len(self._lists)):
            free = self._front(r)  # free observations
            self._relevant[r] += sum(free)
            self._seen[r] += len(free)
            if self._has_next(r):
                mean = (self._relevant[r] + 1) / (self._seen[r] + 2)
                if mean > best_mean:
                    best, best_mean = r, mean
        return None if best is None else self._pull(best)
