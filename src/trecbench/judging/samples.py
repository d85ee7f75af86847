"""Pools that are judging samples drawn from another pool, not pools of runs: their strategy names, one home.

`judge validate` stores its blind sample as a pool of strategy "validation", `judge llm --audit` its queue of
old qrels as "audit". Grade propagation and pool defaults skip them: their duplicate groups are the source
pool's, and they are not what a team pooled.
"""
from __future__ import annotations

VALIDATION = "validation"
AUDIT = "audit"
SAMPLES = (VALIDATION, AUDIT)


def is_sample(strategy: str) -> bool:
    """True for a validation sample or an audit queue, False for a pool of runs."""
    return strategy in SAMPLES
