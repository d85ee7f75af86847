"""Depth-k pooling: the union of every run's top k documents, the TREC pool."""
from __future__ import annotations

from dataclasses import dataclass

from trecbench.pooling.strategies.base import StaticStrategy, register


@register
@dataclass
class Depth(StaticStrategy):
    """The union of each run's top-k documents per topic (Spärck Jones & van Rijsbergen 1975; TREC, Harman 1993).

    Judging order: best rank in any run first (all rank-1 documents, then rank 2, ...), then documents
    retrieved by more runs, then the first run given. With a budget N, the first N per topic are kept.
    """

    name = "depth"
    summary = "TREC depth-k union"
    citation = ("K. Spärck Jones and C. J. van Rijsbergen. Report on the need for and provision of an 'ideal' "
                "information retrieval test collection. 1975; D. Harman. Overview of the first TREC conference. 1993.")
