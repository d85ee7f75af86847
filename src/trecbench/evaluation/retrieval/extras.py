"""Measures ir-measures defines and trec_eval lacks: Judged@k and RR@k, on trec_eval's rankings."""
from __future__ import annotations

import numpy as np

from .measures.base import Derived, Output
from .rankings import NONPOOL, PAD


def judged_at(d: Derived, k: int | None) -> np.ndarray:
    """Share of the top k retrieved documents that appear in the qrels (any grade).

    As in ir-measures, a run with fewer than k documents is divided by its length.
    """
    top = d.rel if k is None else d.rel[:, :k]  # only the top k count
    judged = np.cumsum((top != NONPOOL) & (top != PAD), axis=1)
    n = len(d.r.qids)
    if d.r.depth == 0:
        return np.zeros(n)
    cut = d.num_ret if k is None else np.minimum(d.num_ret, k)
    got = judged[np.arange(n), np.clip(cut, 1, None) - 1]
    out = np.zeros(n)
    np.divide(got, cut, out=out, where=cut > 0)
    return out


def rr_at(d: Derived, k: int) -> np.ndarray:
    if d.r.depth == 0:
        return np.zeros(len(d.r.qids))
    first = np.argmax(d.isrel, axis=1)
    found = d.isrel.any(axis=1) & (first < k)
    return np.where(found, 1.0 / (first + 1.0), 0.0)


def extra_outputs(d: Derived, req) -> list[Output]:
    name, _, arg = req.extra.partition("@")
    k = int(arg) if arg else None
    if name == "Judged":
        return [Output(req.label or req.extra, judged_at(d, k))]
    if name == "RR":
        return [Output(req.label or req.extra, rr_at(d, k if k is not None else d.r.depth))]
    raise ValueError(f"unknown measure {req.extra}")
