"""Scoring: retrieval measures with trec_eval's exact numbers (answers and evidence build on the same shapes)."""
from .retrieval import DEFAULT_MEASURES, evaluate, score_runs, to_frame

__all__ = ["DEFAULT_MEASURES", "evaluate", "score_runs", "to_frame"]
