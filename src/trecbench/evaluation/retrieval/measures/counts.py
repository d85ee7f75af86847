"""Counting measures: runid, num_q, num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret, unj, relstring."""
from __future__ import annotations

import numpy as np

from trecbench.evaluation.retrieval.rankings import NONPOOL, UNJUDGED

from .base import (
    LONG, NUM_Q, RUNID, STRING, SUM, NONE, Derived, Family, Output, RawParams, c_atof, long_cutoffs, no_params,
    register,
)


def _empty(d: Derived, _p) -> list[Output]:
    return []


register(Family("runid", "The run's tag (sixth column of its last line).", _empty, no_params,
                summary=RUNID, kind=STRING, per_topic=False))
register(Family("num_q", "Number of topics evaluated.", _empty, no_params,
                summary=NUM_Q, kind=LONG, per_topic=False))
register(Family("num_ret", "Number of documents retrieved (after the depth cut).",
                lambda d, p: [Output("num_ret", d.num_ret, LONG)], no_params, summary=SUM, kind=LONG))
register(Family("num_rel", "Number of relevant documents in the qrels.",
                lambda d, p: [Output("num_rel", d.num_rel, LONG)], no_params, summary=SUM, kind=LONG))
register(Family("num_rel_ret", "Number of relevant documents retrieved.",
                lambda d, p: [Output("num_rel_ret", d.num_rel_ret, LONG)], no_params, summary=SUM, kind=LONG))


def _nonrel_judged(d: Derived, _p) -> list[Output]:
    judged_nonrel = (d.rel >= 0) & (d.rel < d.level)
    return [Output("num_nonrel_judged_ret", judged_nonrel.sum(axis=1).astype(np.int64), LONG)]


register(Family("num_nonrel_judged_ret", "Number of retrieved documents judged non-relevant.",
                _nonrel_judged, no_params, summary=SUM, kind=LONG))


def _unj(d: Derived, cutoffs) -> list[Output]:
    unjudged = np.cumsum((d.rel == NONPOOL) | (d.rel == UNJUDGED), axis=1, dtype=np.int64)
    out = []
    for k in cutoffs:
        # below the cutoff trec_eval divides by the cutoff, as if non-relevant documents filled the rest
        num = d.at(unjudged, k)
        out.append(Output(f"unj_{k}", num / float(k)))
    return out


register(Family("unj", "Fraction of the top k documents that are not judged (trec_eval 10).",
                _unj, long_cutoffs((5, 10, 20)), versions=(10,)))


def _relstring(d: Derived, params: RawParams) -> list[Output]:
    length = max(int(params.values[0]), 0)
    chars = np.full(d.rel.shape, "<", dtype="<U1")
    digits = (d.rel >= 0) & (d.rel <= 9)
    chars[digits] = d.rel[digits].astype(str)
    chars[d.rel > 9] = ">"
    chars[d.rel == NONPOOL] = "-"
    chars[d.rel == UNJUDGED] = "."
    strings = np.array(["".join(row[: min(length, n)]) for row, n in zip(chars, d.num_ret)], dtype=object)
    return [Output(params.suffix("relstring"), strings, STRING)]


def _relstring_params(raw: str | None) -> RawParams:
    return RawParams(raw, (c_atof(raw.split(",")[0]),) if raw else (10.0,))


register(Family("relstring", "Relevance of the top N (default 10) documents as a string (per topic only).",
                _relstring, _relstring_params, summary=NONE, kind=STRING))
