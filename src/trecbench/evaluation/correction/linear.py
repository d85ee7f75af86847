"""Measures whose per-topic value is a weighted sum of the ranked documents' gains, and those weights.

A topic's value of such a measure is sum over ranks r <= k of w(r) * gain(grade of the document at r):
- P@k (Cleverdon's precision at a cut-off, trec_eval's P.k): w = 1/k, gain = 1 when grade >= the
  relevance level (`P(rel=2)@10` sets it), else 0; trec_eval divides by k however many documents a run has.
- DCG@k (Jarvelin and Kekalainen, "Cumulated gain-based evaluation of IR techniques", TOIS 2002, with
  trec_eval's ndcg gains and discount): w = 1/log2(r + 1), gain = the grade when above 0.
Unjudged documents have gain 0 under either judge, as trec_eval scores them. nDCG@k (the ideal ranking's
DCG divides it, and that depends on every label), AP, R@k (the number relevant divides it), RR and
success@k (the first relevant one only) are not linear: they are corrected at topic level or not at all.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

_NAME = re.compile(r"(P|DCG)(?:\(rel=([0-9]+)\))?@([1-9][0-9]*)")


@dataclass(frozen=True)
class Linear:
    """A linear measure: its name, family (P or DCG), cut-off and relevance level (None: the run-wide one)."""

    name: str
    family: str
    k: int
    rel: int | None = None

    def weights(self, ranks: np.ndarray) -> np.ndarray:
        """w(r) of each rank (1-based); 0 beyond the cut-off."""
        ranks = np.asarray(ranks, dtype=np.float64)
        inside = ranks <= self.k
        if self.family == "P":
            return np.where(inside, 1.0 / self.k, 0.0)
        return np.where(inside, 1.0 / np.log2(ranks + 1), 0.0)

    def gains(self, grades: np.ndarray, rel_level: int) -> np.ndarray:
        """gain(grade) of each grade (NaN: unjudged, gain 0)."""
        g = np.nan_to_num(np.asarray(grades, dtype=np.float64), nan=0.0)
        if self.family == "P":
            return (g >= (self.rel if self.rel is not None else rel_level)).astype(np.float64)
        return np.where(g > 0, g, 0.0)


def linear_measure(name: str) -> Linear | None:
    """The linear measure a name asks for (`P@10`, `P(rel=2)@5`, `DCG@10`; trec_eval's `P.10`, `P_10`), or None."""
    text = name.strip()
    te = re.fullmatch(r"P[._]([1-9][0-9]*)", text)
    if te:
        return Linear(name, "P", int(te.group(1)))
    m = _NAME.fullmatch(text)
    if not m:
        return None
    return Linear(name, m.group(1), int(m.group(3)), int(m.group(2)) if m.group(2) else None)

