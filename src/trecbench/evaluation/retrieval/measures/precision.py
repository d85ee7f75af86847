"""Set and cutoff measures: P, relative_P, recall, success, Rprec, Rprec_mult, utility, set_*."""
from __future__ import annotations

import numpy as np

from .base import (
    Derived, Family, Output, RawParams, c_atof, double_cutoffs, long_cutoffs, no_params, register, safe_divide,
)

CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


def _p(d: Derived, cutoffs) -> list[Output]:
    return [Output(f"P_{k}", d.at(d.relcum, k) / float(k)) for k in cutoffs]


def _relative_p(d: Derived, cutoffs) -> list[Output]:
    return [Output(f"relative_P_{k}", safe_divide(d.at(d.relcum, k), np.minimum(d.num_rel, k)))
            for k in cutoffs]


def _recall(d: Derived, cutoffs) -> list[Output]:
    return [Output(f"recall_{k}", safe_divide(d.at(d.relcum, k), d.num_rel)) for k in cutoffs]


def _success(d: Derived, cutoffs) -> list[Output]:
    return [Output(f"success_{k}", (d.at(d.relcum, k) > 0).astype(np.float64)) for k in cutoffs]


def _rprec(d: Derived, _p) -> list[Output]:
    return [Output("Rprec", safe_divide(d.at(d.relcum, d.num_rel), d.num_rel))]


def _rprec_mult(d: Derived, mults) -> list[Output]:
    if d.level < 0:
        return _rprec_mult_walked(d, mults)
    out = []
    for m in mults:
        cut = (m * d.num_rel + 0.9).astype(np.int64)  # (long)(m * R + 0.9)
        out.append(Output(f"Rprec_mult_{m:3.2f}", safe_divide(d.at(d.relcum, cut), cut)))
    return out


def _rprec_mult_walked(d: Derived, mults) -> list[Output]:
    """trec_eval's own loop, topic by topic, for a negative -l: precision from num_rel_ret (judged documents)
    down, one less at each document its list test takes (`isrel`, unjudged ones too)."""
    values = np.zeros((len(mults), len(d.r.qids)), dtype=np.float64)
    for t in range(len(d.r.qids)):
        num_ret, rel_so_far = int(d.num_ret[t]), int(d.num_rel_ret[t])
        cutoffs = [int(m * int(d.num_rel[t]) + 0.9) for m in mults]  # (long)(m * R + 0.9)
        cut = len(mults) - 1
        while cut >= 0 and cutoffs[cut] > num_ret:
            values[cut, t] = rel_so_far / cutoffs[cut]
            cut -= 1
        for i in range(num_ret, 0, -1):
            if rel_so_far <= 0:
                break
            while cut >= 0 and i == cutoffs[cut]:
                values[cut, t] = rel_so_far / i
                cut -= 1
            if d.isrel[t, i - 1]:
                rel_so_far -= 1
    return [Output(f"Rprec_mult_{m:3.2f}", values[i]) for i, m in enumerate(mults)]


def _utility(d: Derived, params: RawParams) -> list[Output]:
    a, b, c, dd = params.values
    rel_ret = d.num_rel_ret.astype(np.float64)
    nonrel_ret = (d.num_ret - d.num_rel_ret).astype(np.float64)
    rel_nonret = (d.num_rel - d.num_rel_ret).astype(np.float64)
    # no collection size is known: nonrel_nonret is 0 + rel_ret - ret - rel, as trec_eval computes it without -N
    nonrel_nonret = (d.num_rel_ret - d.num_ret - d.num_rel).astype(np.float64)
    value = a * rel_ret + b * nonrel_ret + c * rel_nonret + dd * nonrel_nonret
    return [Output(params.suffix("utility"), value)]


def _utility_params(raw: str | None) -> RawParams:
    if not raw:
        return RawParams(None, (1.0, -1.0, 0.0, 0.0))
    values = tuple(c_atof(v) for v in raw.split(","))
    if len(values) != 4:
        raise ValueError(f"utility takes four coefficients a,b,c,d: {raw!r}")
    return RawParams(raw, values)


def _set_p(d: Derived, _p) -> list[Output]:
    return [Output("set_P", safe_divide(d.num_rel_ret, d.num_ret))]


def _set_relative_p(d: Derived, _p) -> list[Output]:
    return [Output("set_relative_P", safe_divide(d.num_rel_ret, np.minimum(d.num_ret, d.num_rel)))]


def _set_recall(d: Derived, _p) -> list[Output]:
    return [Output("set_recall", safe_divide(d.num_rel_ret, d.num_rel))]


def _set_map(d: Derived, _p) -> list[Output]:
    rr = d.num_rel_ret.astype(np.float64)
    return [Output("set_map", safe_divide(rr * rr, d.num_ret.astype(np.float64) * d.num_rel))]


def _set_f(d: Derived, params: RawParams) -> list[Output]:
    # trec_eval's set_F.x: (x + 1) P R / (x P + R), x as given (not squared), named set_F_<x as written>
    x = params.values[0]
    p = safe_divide(d.num_rel_ret, d.num_ret)
    r = safe_divide(d.num_rel_ret, d.num_rel)
    value = np.where(d.num_rel_ret > 0, safe_divide((x + 1.0) * p * r, x * p + r), 0.0)
    return [Output(params.suffix("set_F"), value)]


def _set_f_params(raw: str | None) -> RawParams:
    return RawParams(raw, (c_atof(raw.split(",")[0]),) if raw else (1.0,))


register(Family("P", "Precision at cutoffs: relevant in the top k / k.", _p, long_cutoffs(CUTS)))
register(Family("recall", "Recall at cutoffs: relevant in the top k / relevant.", _recall, long_cutoffs(CUTS)))
register(Family("Rprec", "Precision after R documents, R = number relevant.", _rprec, no_params))
register(Family("Rprec_mult", "Precision after (long)(m*R + 0.9) documents for multiples m of R.", _rprec_mult,
                double_cutoffs((0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0))))
register(Family("utility", "a*rel_ret + b*nonrel_ret + c*rel_nonret (defaults 1,-1,0,0).", _utility, _utility_params))
register(Family("relative_P", "Relevant in the top k / min(k, R).", _relative_p, long_cutoffs(CUTS)))
register(Family("success", "1 if a relevant document is in the top k.", _success, long_cutoffs((1, 5, 10))))
register(Family("set_P", "Relevant retrieved / retrieved.", _set_p, no_params))
register(Family("set_relative_P", "Relevant retrieved / min(retrieved, R).", _set_relative_p, no_params))
register(Family("set_recall", "Relevant retrieved / R.", _set_recall, no_params))
register(Family("set_map", "set_P * set_recall.", _set_map, no_params))
register(Family("set_F", "(x + 1) P R / (x P + R) of set_P and set_recall (x = 1 by default).", _set_f,
                _set_f_params))
