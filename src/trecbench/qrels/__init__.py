"""Qrels files: read (fast, vectorised), validate (every problem, with line numbers), write, per-topic stats."""
from trecbench.qrels.stats import qrels_stats
from trecbench.qrels.trec import QRELS_FORMAT, check_qrels, read_qrels, validate_qrels, write_qrels

__all__ = ["QRELS_FORMAT", "check_qrels", "qrels_stats", "read_qrels", "validate_qrels", "write_qrels"]
