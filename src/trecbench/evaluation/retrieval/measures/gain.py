"""Graded-gain measures: ndcg, ndcg_cut, ndcg_rel, Rndcg, G, binG, rbp, rbp_resid.

Gains default to the grade; `ndcg.1=3,2=9` style parameters override single grades, as in trec_eval.
"""
from __future__ import annotations

import numpy as np

from trecbench.evaluation.retrieval.rankings import PAD

from .base import (
    Derived, Family, Output, RawParams, long_cutoffs, log2_table, no_params, pad_to, pairs_params, register, stretched, sums_at,
    divide_once_found, row_sums, safe_divide,
)

CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


def _last(matrix: np.ndarray) -> np.ndarray:
    return matrix[:, -1] if matrix.shape[1] else np.zeros(matrix.shape[0])


def _ndcg(d: Derived, params: RawParams) -> list[Output]:
    g = d.gains(params.pairs)
    dcg = _last(g.dcg)
    ideal = _last(g.ideal_dcg)
    return [Output(params.suffix("ndcg"), safe_divide(dcg, ideal))]


def _ndcg_cut(d: Derived, cutoffs) -> list[Output]:
    g = d.gains()
    dcg = g.dcg
    ideal = g.ideal_dcg
    out = []
    for k in cutoffs:
        num = d.at(dcg, k) if dcg.shape[1] else np.zeros(len(d.r.qids))
        den = _at_clipped(ideal, k)
        out.append(Output(f"ndcg_cut_{k}", safe_divide(num, den)))
    return out


def _at_clipped(matrix: np.ndarray, k) -> np.ndarray:
    if matrix.shape[1] == 0:
        return np.zeros(matrix.shape[0])
    return matrix[:, min(k, matrix.shape[1]) - 1]


def _ndcg_rel(d: Derived, params: RawParams) -> list[Output]:
    g = d.gains(params.pairs)
    ideal = stretched(g.ideal_dcg, max(d.r.depth, g.ideal.shape[1], 1))
    positive = (g.results > 0) & (d.rel != PAD)
    with np.errstate(divide="ignore", invalid="ignore"):
        # only the ranks of positive gains add: the zeros after the ranking leave the sum as it is
        total = sums_at(positive, lambda rows, cols: g.dcg[rows, cols] / ideal[rows, cols])
        n_ideal = (g.ideal > 0).sum(axis=1)
        missed = (n_ideal - positive.sum(axis=1)).astype(np.float64)
        total = total + missed * _last(g.dcg) / _last(ideal)
    value = np.where(total > 0, total / np.where(n_ideal > 0, n_ideal, 1), 0.0)
    return [Output(params.suffix("ndcg_rel"), value)]


def _rndcg(d: Derived, params: RawParams) -> list[Output]:
    """trec_eval's walk, over all topics at once: the mean of nDCG at each rank i where the ideal gain changes
    (its drop to 0 after the last ideal document included; the DCG of the first min(i, retrieved) results over
    the ideal DCG of the first i), and, when more than one document is retrieved past that drop, once more
    with the whole ranking's DCG; a topic with no such rank is 0/0 (NaN), one without relevant documents 0."""
    g = d.gains(params.pairs)
    n = len(d.r.qids)
    ideal = g.ideal  # positive ideal gains first, zero padded
    width = ideal.shape[1]
    n_ideal = (ideal > 0).sum(axis=1)
    after = np.zeros((n, width + 1), dtype=np.float64)
    after[:, :width] = ideal
    change = after[:, 1:] != after[:, :-1]  # column c: the ideal gain changes at rank c + 1
    ideal_dcg = g.ideal_dcg  # column c: ideal DCG of the first c + 1
    dcg = g.dcg
    last = _last(dcg)
    if dcg.shape[1]:
        at = dcg[:, np.minimum(np.arange(1, width + 1), dcg.shape[1]) - 1]  # past the ranking it stays the same
    else:
        at = np.zeros((n, width))
    with np.errstate(divide="ignore", invalid="ignore"):
        total = row_sums(np.where(change, at / ideal_dcg, 0.0))
        count = change.sum(axis=1)
        extra = (d.num_ret > n_ideal + 1) & (n_ideal > 0)
        whole = last / ideal_dcg[np.arange(n), np.maximum(n_ideal - 1, 0)] if width else np.zeros(n)
        total = np.where(extra, total + whole, total)
        count = count + extra
        value = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return [Output(params.suffix("Rndcg"), np.where(d.num_rel > 0, value, 0.0))]


def _g(d: Derived, params: RawParams) -> list[Output]:
    g = d.gains(params.pairs)
    width = max(d.r.depth, 1)
    ideal = pad_to(g.ideal, width)[:, :width]
    cost = np.cumsum(np.where(ideal >= 1.0, ideal, 1.0), axis=1)
    results = pad_to(g.results, width)
    got = np.cumsum(results, axis=1)

    def term(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return results[rows, cols] / np.log2((2 + cost[rows, cols]) - got[rows, cols])

    total = sums_at(results != 0, term)
    sum_ideal = row_sums(np.where(g.ideal > 0, g.ideal, 0.0)) if g.ideal.shape[1] else np.zeros(len(total))
    return [Output(params.suffix("G"), safe_divide(total, sum_ideal))]


def _bing(d: Derived, _p) -> list[Output]:
    if d.r.depth == 0:
        return [Output("binG", np.zeros(len(d.r.qids)))]
    table = log2_table(d.r.depth + 3)
    # at a relevant document, 3 + rank - relevant so far = 2 + the non-relevant documents above it
    total = sums_at(d.isrel, lambda rows, cols: 1.0 / table[3 + cols - d.relcum[rows, cols]])
    return [Output("binG", divide_once_found(total, d.num_rel, d.isrel.any(axis=1)))]


def _powers(p: float, n: int) -> np.ndarray:
    """p^0 .. p^n by repeated multiplication, as trec_eval's loop does."""
    steps = np.full(n + 1, p)
    steps[0] = 1.0
    return np.cumprod(steps)


def _rbp_p(params: RawParams) -> float:
    return params.pairs.get("p", 0.9)


def _rbp(d: Derived, params: RawParams) -> list[Output]:
    p = _rbp_p(params)
    g = d.gains(params.pairs)
    rel = d.rel
    # per topic, gains are rescaled to [0, 1] when they leave that range (trec_eval 10)
    levels = d.r.rel_levels
    top = np.array([np.flatnonzero(row).max() if row.any() else 0 for row in levels])
    gains = g.results.copy()
    table = g.table
    for t in range(len(top)):
        used = table[: top[t] + 1]
        lo, hi = min(used.min(), 0.0), max(used.max(), 0.0)
        if lo < 0 or hi > 1:
            gains[t] = np.where(rel[t] >= 0, (gains[t] - lo) / (hi - lo), 0.0)
    pw = _powers(p, d.r.depth)[: d.r.depth]
    total = row_sums(np.where(gains != 0, gains * pw, 0.0)) if d.r.depth else np.zeros(len(top))
    return [Output(params.suffix("rbp"), (1.0 - p) * total)]


def _rbp_resid(d: Derived, params: RawParams) -> list[Output]:
    p = _rbp_p(params)
    pw = _powers(p, d.r.depth)
    unj = (d.rel < 0) & (d.rel != PAD)
    total = row_sums(np.where(unj, pw[None, : d.r.depth], 0.0)) if d.r.depth else np.zeros(len(d.r.qids))
    final = pw[d.num_ret]
    value = np.where(unj.any(axis=1) if d.r.depth else False, final + (1 - p) * total, 0.0)
    return [Output(params.suffix("rbp_resid"), value)]


register(Family("binG", "Binary G: mean over relevant documents of 1/log2(2 + non-relevant before it).",
                _bing, no_params))
register(Family("G", "Normalized gain G (experimental trec_eval measure).", _g, pairs_params))
register(Family("ndcg", "nDCG over the whole ranking (Jarvelin and Kekalainen, TOIS 2002); gain = grade.",
                _ndcg, pairs_params))
register(Family("ndcg_rel", "nDCG averaged over relevant documents (experimental).", _ndcg_rel, pairs_params))
register(Family("Rndcg", "nDCG averaged at the R-levels of each grade (experimental).", _rndcg, pairs_params))
register(Family("ndcg_cut", "nDCG at cutoffs.", _ndcg_cut, long_cutoffs(CUTS)))
register(Family("rbp", "Rank-biased precision (Moffat and Zobel, TOIS 2008), p = 0.9 by default.", _rbp,
                pairs_params, versions=(10,)))
register(Family("rbp_resid", "Residual of rank-biased precision from unjudged documents (p = 0.9 by default).",
                _rbp_resid, pairs_params, versions=(10,)))
