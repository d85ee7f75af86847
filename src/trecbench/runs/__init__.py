"""Run files: read (fast, vectorised), validate (every problem, with line numbers), write in trec_eval order."""
from trecbench.runs.trec import RUN_FORMAT, check_run, read_run, validate_run
from trecbench.runs.write import trec_order, write_run

__all__ = ["RUN_FORMAT", "check_run", "read_run", "trec_order", "validate_run", "write_run"]
