"""Pools that are not pools of runs: their strategy names, one home.

`judge validate` stores its blind sample as a pool of strategy "validation", `judge llm --audit` its queue of
old qrels as "audit" (both judged blind: people do not see a model's grade), and `corpus update` the passages
people must look at again as "corpus-review". Grade propagation and pool defaults skip all three: their
duplicate groups are the source pool's, and they are not what a team pooled.
"""
from __future__ import annotations

VALIDATION = "validation"
AUDIT = "audit"
CORPUS_REVIEW = "corpus-review"
SAMPLES = (VALIDATION, AUDIT)  # judged blind
NOT_OF_RUNS = (*SAMPLES, CORPUS_REVIEW)


def is_sample(strategy: str) -> bool:
    """True for a validation sample or an audit queue, False for a pool of runs."""
    return strategy in SAMPLES


def is_pool_of_runs(strategy: str) -> bool:
    """False for a validation sample, an audit queue or a corpus update's review pool; True for a pool of runs."""
    return strategy not in NOT_OF_RUNS
