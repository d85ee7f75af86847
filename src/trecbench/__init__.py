"""trecbench: build TREC-style benchmarks for private corpora and score systems against them.

The public API is imported lazily so that `import trecbench` (and the CLI) start instantly:

    >>> import trecbench
    >>> trecbench.evaluate("qrels.txt", ["run1.txt", "run2.txt"], ["nDCG@10", "R@100"])
"""
from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "evaluate": "trecbench.evaluation",
    "score_runs": "trecbench.evaluation",
    "read_run": "trecbench.runs",
    "write_run": "trecbench.runs",
    "validate_run": "trecbench.runs",
    "trec_order": "trecbench.runs",
    "read_qrels": "trecbench.qrels",
    "write_qrels": "trecbench.qrels",
    "validate_qrels": "trecbench.qrels",
    "read_topics": "trecbench.topics",
    "Topic": "trecbench.topics",
    "open_corpus": "trecbench.corpus",
    "Document": "trecbench.corpus",
    "build_pool": "trecbench.pooling",
    "read_pool": "trecbench.pooling",
    "pool_runs": "trecbench.pooling",
    "resume_adaptive": "trecbench.pooling",
    "leave_one_out": "trecbench.pooling",
    "workspace_leave_one_out": "trecbench.pooling",
    "Workspace": "trecbench.store",
    "read_nuggets": "trecbench.nuggets.io",
    "write_nuggets": "trecbench.nuggets.io",
    "read_answers": "trecbench.answers",
    "evaluate_answers": "trecbench.evaluation.answers",
    "evaluate_evidence": "trecbench.evaluation.evidence",
    "evidence_from_nuggets": "trecbench.evaluation.evidence",
    "NuggetStore": "trecbench.nuggets.store",
    "workspace_nuggets": "trecbench.nuggets.store",
    "draft_extractive": "trecbench.nuggets.draft_extractive",
    "bm25_run": "trecbench.runs.baselines",
    "ReportOptions": "trecbench.report",
    "build_report": "trecbench.report",
    "write_report": "trecbench.report",
    "make_release": "trecbench.release",
    "score_assignments": "trecbench.evaluation.answers",
    "read_assignment_files": "trecbench.evaluation.assign",
    "write_assignments": "trecbench.evaluation.assign",
    "evaluate_context_recall": "trecbench.evaluation.context_recall",
    "read_contexts": "trecbench.evaluation.contexts",
    "duplicate_groups": "trecbench.evaluation.duplicates",
    "compare_runs": "trecbench.evaluation.significance",
    "agreement": "trecbench.qrels.agreement",
    "draw_sample": "trecbench.qrels.validate",
    "validate_judges": "trecbench.qrels.validate",
    "workspace_qrels": "trecbench.qrels.select",
    "import_qrels": "trecbench.qrels.imports",
    "WorkspaceQrels": "trecbench.qrels.select",
    "propagated_qrels": "trecbench.qrels.select",
    "InputError": "trecbench.errors",
    "Problem": "trecbench.errors",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'trecbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
