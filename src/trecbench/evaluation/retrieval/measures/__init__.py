"""trec_eval's measures, one registered family each, in trec_eval's printing order.

Each family computes trec_eval's own definition (gm_map's 0.00001 floor, relstring, 10.0's rbp
included), since the engine must print what trec_eval prints: engine.py says why that is not left to a
library.
"""
from __future__ import annotations

from . import average_precision, counts, gain, precision  # noqa: F401  (registration)
from .base import REGISTRY, TABLE_ORDER, Derived, Family, Output

TABLE_ORDER[:] = [
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
    "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
    "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj",
]

OFFICIAL = ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
            "recip_rank", "iprec_at_recall", "P"]
SETS = {
    "official": OFFICIAL,
    "all_trec": [name for name in TABLE_ORDER],
    "set": ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"],
}

__all__ = ["REGISTRY", "TABLE_ORDER", "SETS", "OFFICIAL", "Derived", "Family", "Output"]
