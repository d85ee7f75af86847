"""Rank-order measures: map, gm_map, map_cut, bpref, gm_bpref, infAP, recip_rank, iprec_at_recall, 11pt_avg."""
from __future__ import annotations

import math

import numpy as np

from trecbench.evaluation.retrieval.rankings import UNJUDGED

from .base import (
    GEOMETRIC, Derived, Family, Output, RawParams, double_cutoffs, doubles_params, long_cutoffs, no_params,
    divide_once_found, register, safe_divide, sums_at,
)

CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
INFAP_EPSILON = 0.00001
RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _prec_at_rel(d: Derived) -> np.ndarray:
    return np.where(d.isrel, d.precision, 0.0)


def _ap_running(d: Derived) -> np.ndarray:
    cache = d.__dict__
    if "_ap_running" not in cache:
        cache["_ap_running"] = np.cumsum(_prec_at_rel(d), axis=1)
    return cache["_ap_running"]


def _map(d: Derived, _p) -> list[Output]:
    total = d.at(_ap_running(d), d.r.depth) if d.r.depth else np.zeros(len(d.r.qids))
    found = d.isrel.any(axis=1) if d.r.depth else np.zeros(len(d.r.qids), dtype=bool)
    return [Output("map", divide_once_found(total, d.num_rel, found))]


def _map_cut(d: Derived, cutoffs) -> list[Output]:
    running = _ap_running(d)
    return [Output(f"map_cut_{k}", safe_divide(d.at(running, k), d.num_rel)) for k in cutoffs]


def _recip_rank(d: Derived, _p) -> list[Output]:
    if d.r.depth == 0:
        return [Output("recip_rank", np.zeros(len(d.r.qids)))]
    first = np.argmax(d.isrel, axis=1)
    found = d.isrel.any(axis=1)
    return [Output("recip_rank", np.where(found, 1.0 / (first + 1.0), 0.0))]


def _judged_walk(d: Derived) -> tuple[np.ndarray, np.ndarray]:
    """Counts trec_eval's bpref/infAP loop keeps: judged non-relevant and pooled-unjudged seen before each rank."""
    cache = d.__dict__
    if "_judged_walk" not in cache:
        cache["_judged_walk"] = _judged_counts(d)
    return cache["_judged_walk"]


def _judged_counts(d: Derived) -> tuple[np.ndarray, np.ndarray]:
    rel = d.rel
    nonrel = (rel >= 0) & (rel < d.level)
    unjudged = rel == UNJUDGED
    nonrel_before: np.ndarray = np.cumsum(nonrel, axis=1) - nonrel
    unjudged_before = np.cumsum(unjudged, axis=1) - unjudged
    return nonrel_before, unjudged_before


def _bpref(d: Derived, _p) -> list[Output]:
    cache = d.__dict__
    if "_bpref" not in cache:  # gm_bpref is its geometric mean
        cache["_bpref"] = _bpref_values(d)
    return [Output("bpref", cache["_bpref"])]


def _bpref_values(d: Derived) -> np.ndarray:
    nonrel_before, _ = _judged_walk(d)
    R = d.num_rel.astype(np.float64)
    N = d.num_nonrel.astype(np.float64)

    def term(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        before = nonrel_before[rows, cols]
        r = R[rows]
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.minimum(before, r) / np.minimum(N[rows], r)
        return np.where(before > 0, 1.0 - frac, 1.0)

    return safe_divide(sums_at(d.judged_rel, term), d.num_rel)


def _gm_bpref(d: Derived, p) -> list[Output]:
    return [Output("gm_bpref", _bpref(d, p)[0].values)]


def _infap(d: Derived, _p) -> list[Output]:
    nonrel_before, unjudged_before = _judged_walk(d)
    rel_so_far_all = np.cumsum(d.judged_rel, axis=1, dtype=np.float64)  # includes the document itself

    def term(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        rel_so_far = rel_so_far_all[rows, cols]
        nonrel = nonrel_before[rows, cols]
        j = cols.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            seen = rel_so_far - 1 + nonrel + unjudged_before[rows, cols]
            value = (1.0 / (j + 1.0)
                     + (j / (j + 1.0)) * (seen / j)
                     * ((rel_so_far - 1 + INFAP_EPSILON) / (rel_so_far - 1 + nonrel + 2 * INFAP_EPSILON)))
        return np.where(cols == 0, 1.0, value)

    return [Output("infAP", safe_divide(sums_at(d.judged_rel, term), d.num_rel))]


def _recall_cutoff(p: float, num_rel: np.ndarray, version: int) -> np.ndarray:
    x = p * num_rel.astype(np.float64)
    if version >= 10:
        return np.floor(x + 0.5).astype(np.int64)  # lround, x >= 0
    return (x + 0.9).astype(np.int64)  # (long)(x + 0.9)


def _interpolated(d: Derived) -> np.ndarray:
    """max precision at or below each rank (trec_eval's Int_Prec)."""
    cache = d.__dict__
    if "_interp" not in cache:
        prec = np.where(d.rel == -3, -1.0, d.precision)  # padding never raises the max
        cache["_interp"] = np.maximum.accumulate(prec[:, ::-1], axis=1)[:, ::-1]
    return cache["_interp"]


def _rank_of_nth_rel(d: Derived, n: np.ndarray) -> np.ndarray:
    """0-based rank of the n-th relevant document (n >= 1 and n <= num_rel_ret)."""
    rows = np.arange(len(n))
    out = np.zeros(len(n), dtype=np.int64)
    ok = (n >= 1) & (n <= d.num_rel_ret)
    if ok.any():
        # first rank where relcum reaches n
        pos = np.array([np.searchsorted(d.relcum[i], n[i]) for i in rows[ok]], dtype=np.int64)
        out[ok] = pos
    return out


def _iprec_values(d: Derived, points, version: int) -> list[np.ndarray]:
    if d.level < 0:
        return _iprec_walked(d, points, version)
    interp = _interpolated(d) if d.r.depth else np.zeros((len(d.r.qids), 1))
    overall = interp[:, 0] if d.r.depth else np.zeros(len(d.r.qids))
    overall = np.where(d.num_rel_ret > 0, overall, 0.0)
    values = []
    for p in points:
        cut = _recall_cutoff(p, d.num_rel, version)
        rank = _rank_of_nth_rel(d, cut)
        at_cut = interp[np.arange(len(cut)), rank] if d.r.depth else np.zeros(len(cut))
        v = np.where(cut <= 0, overall, np.where(cut <= d.num_rel_ret, at_cut, 0.0))
        # nothing retrieved (-J can leave a topic empty): trec_eval's precision there is 0/0
        values.append(np.where((d.num_ret == 0) & (cut <= 0), np.nan, v))
    return values


def _iprec_walked(d: Derived, points, version: int) -> list[np.ndarray]:
    """trec_eval's own loop, topic by topic, for a negative -l: it starts from num_rel_ret (judged documents)
    and counts down at each document its list test takes (`isrel`, unjudged ones too), so the two differ."""
    values = np.zeros((len(points), len(d.r.qids)), dtype=np.float64)
    cutoffs = np.array([_recall_cutoff(p, d.num_rel, version) for p in points]).reshape(len(points), -1)
    for t in range(len(d.r.qids)):
        num_ret, rel_so_far = int(d.num_ret[t]), int(d.num_rel_ret[t])
        cut = len(points) - 1
        while cut >= 0 and cutoffs[cut, t] > rel_so_far:
            cut -= 1
        int_precis = rel_so_far / num_ret if num_ret else math.nan  # C's 0.0 / 0.0
        for i in range(num_ret, 0, -1):
            if rel_so_far <= 0:
                break
            precis = rel_so_far / i
            if int_precis < precis:
                int_precis = precis
            if d.isrel[t, i - 1]:
                while cut >= 0 and rel_so_far == cutoffs[cut, t]:
                    values[cut, t] = int_precis
                    cut -= 1
                rel_so_far -= 1
        values[: cut + 1, t] = int_precis
    return list(values)


def _iprec_at_recall(d: Derived, points) -> list[Output]:
    values = _iprec_values(d, points, d.version)
    return [Output(f"iprec_at_recall_{p:3.2f}", v) for p, v in zip(points, values)]


def _11pt_avg(d: Derived, params: RawParams) -> list[Output]:
    points = params.values
    values = _iprec_values(d, points, d.version)
    total = np.zeros(len(d.r.qids))
    for v in reversed(values):  # trec_eval adds from the highest recall point down
        total = total + v
    return [Output(params.suffix("11pt_avg"), total / float(len(points)))]


def _recall_points(raw: str | None) -> RawParams:
    params = doubles_params(RECALL_POINTS)(raw)
    if list(params.values) != sorted(params.values):
        # trec_eval walks the points from the last given down: out of order, its numbers mean nothing
        raise ValueError(f"recall points must be in increasing order: {raw!r}")
    return params


def _gm_map(d: Derived, p) -> list[Output]:
    return [Output("gm_map", _map(d, p)[0].values)]


register(Family("map", "Mean average precision (AP per topic).", _map, no_params))
register(Family("gm_map", "Geometric mean of AP over topics (AP floored at 0.00001).", _gm_map, no_params,
                summary=GEOMETRIC, per_topic=False))
register(Family("bpref", "Binary preference (Buckley and Voorhees, SIGIR 2004).", _bpref, no_params))
register(Family("recip_rank", "Reciprocal rank of the first relevant document.", _recip_rank, no_params))
register(Family("iprec_at_recall", "Interpolated precision at recall points.", _iprec_at_recall,
                double_cutoffs(RECALL_POINTS)))
register(Family("infAP", "Inferred AP (Yilmaz and Aslam, CIKM 2006).", _infap, no_params))
register(Family("gm_bpref", "Geometric mean of bpref over topics.", _gm_bpref, no_params,
                summary=GEOMETRIC, per_topic=False))
register(Family("11pt_avg", "Interpolated precision averaged over 11 recall points.", _11pt_avg,
                _recall_points))
register(Family("map_cut", "AP over the top k documents (divided by all relevant).", _map_cut, long_cutoffs(CUTS)))
