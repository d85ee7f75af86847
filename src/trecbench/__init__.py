"""trecbench: build TREC-style benchmarks for private corpora and score systems against them.

Every command is a function here; names are imported when first used, so `import trecbench` is instant.
docs/api.md shows them in use. The API, stage by stage:

Files (each reader raises InputError listing every problem as `path:line: what is wrong`)
    read_run, write_run, validate_run, trec_order    TREC runs (trec_order: trec_eval's ranking)
    read_qrels, write_qrels, validate_qrels          TREC qrels
    read_topics, Topic                               topics: TSV, TREC RAG 2024/2025, JSONL, irds:
    open_corpus, Document                            JSONL/TSV corpora (offset index) and irds:
    read_answers                                     RAG answers (TREC RAG 2024/2025 JSONL)
    read_nuggets, write_nuggets                      nuggets files
    InputError, Problem                              bad input, one problem per `Problem`

Scoring retrieval (identical to trec_eval 9.0.8 or 10.0)
    evaluate, score_runs                             runs x measures (ir-measures or trec_eval names)
    compare_runs, write_comparisons                  paired significance tests against a baseline, printed
    bm25_run                                         a BM25 baseline run (bm25s or pyserini)

Pooling
    build_pool, read_pool                            depth-k, fused (rrf, rbp) and adaptive (mtf, maxmean)
    pool_runs, resume_adaptive                       pooling into a workspace; resuming an adaptive pool
    leave_one_out, workspace_leave_one_out           is the collection reusable for new systems?

The workspace and its qrels
    Workspace                                        the bench: judgments, pools, nuggets, model cache
    workspace_qrels, WorkspaceQrels                  judgments -> qrels (selection + duplicate propagation)
    propagated_qrels                                 a pool file's duplicates given their group's grade
    import_qrels                                     record a qrels file as a judge's judgments
    agreement                                        two judges: kappa, confusion matrix, ranking agreement
    draw_sample, validate_judges                     is a model judge good enough? (`judge validate`)
    audit_qrels, read_audit                          old qrels re-judged by a model, disagreements queued (`judge llm --audit`)
    update_corpus, corpus_versions, corpus_changes   a new corpus version: judgments and links carried by span (`corpus update`)

Models
    ModelConfig, LLM, Budget                         which model and how; the client; a --max-cost limit
    judge_pool                                       grade a workspace's pool with a model (`judge llm`)
    draft_nuggets                                    draft nuggets with a model or extractively (`nuggets draft`)

Nuggets
    NuggetStore, workspace_nuggets                   nuggets with history in the workspace
    draft_extractive                                 draft nuggets from judged documents without a model

Scoring answers, evidence and contexts
    evaluate_answers, score_assignments              V_strict, V, A_strict, A, W_strict, W
    score_answers                                    answer files or assignments scored (`eval answers`)
    read_assignment_files, write_assignments         nugget assignments (ours, AutoNuggetizer's, NIST's)
    evaluate_evidence, evidence_from_nuggets         EvidenceRecall@k, CompleteEvidence@k, the funnel
    evaluate_context_recall, read_contexts           context recall by ids, strings or a model
    duplicate_groups                                 the pool's duplicate groups, one document each

Reports and releases
    ReportOptions, build_report, write_report        the self-contained HTML report
    make_release                                     a frozen, hashed benchmark folder

    >>> import trecbench
    >>> trecbench.evaluate("qrels.txt", ["run1.txt", "run2.txt"], ["nDCG@10", "R@100"])
"""
from __future__ import annotations

from typing import Any

from trecbench.helpers.lazy import attribute

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
    "evaluate_answers": "trecbench.evaluation.answers.scoring",
    "score_answers": "trecbench.evaluation.answers.scoring",
    "evaluate_evidence": "trecbench.evaluation.evidence.recall",
    "evidence_from_nuggets": "trecbench.evaluation.evidence.recall",
    "NuggetStore": "trecbench.nuggets.store",
    "workspace_nuggets": "trecbench.nuggets.store",
    "draft_extractive": "trecbench.nuggets.drafting.extractive",
    "bm25_run": "trecbench.runs.baselines",
    "ReportOptions": "trecbench.report",
    "build_report": "trecbench.report",
    "write_report": "trecbench.report",
    "make_release": "trecbench.release",
    "score_assignments": "trecbench.evaluation.answers.scoring",
    "read_assignment_files": "trecbench.evaluation.answers.assign",
    "write_assignments": "trecbench.evaluation.answers.assign",
    "evaluate_context_recall": "trecbench.evaluation.evidence.context_recall",
    "read_contexts": "trecbench.evaluation.evidence.contexts",
    "duplicate_groups": "trecbench.evaluation.evidence.duplicates",
    "compare_runs": "trecbench.evaluation.significance",
    "write_comparisons": "trecbench.evaluation.significance",
    "agreement": "trecbench.qrels.agreement",
    "judge_pool": "trecbench.judging.pool",
    "ModelConfig": "trecbench.llm",
    "LLM": "trecbench.llm",
    "Budget": "trecbench.llm",
    "draft_nuggets": "trecbench.nuggets.drafting",
    "draw_sample": "trecbench.judging.validate",
    "validate_judges": "trecbench.judging.validate",
    "audit_qrels": "trecbench.judging.audit",
    "read_audit": "trecbench.judging.audit",
    "workspace_qrels": "trecbench.qrels.select",
    "import_qrels": "trecbench.qrels.imports",
    "update_corpus": "trecbench.versions", "corpus_versions": "trecbench.versions", "corpus_changes": "trecbench.versions",
    "WorkspaceQrels": "trecbench.qrels.select",
    "propagated_qrels": "trecbench.qrels.select",
    "InputError": "trecbench.errors",
    "Problem": "trecbench.errors",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    return attribute(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return __all__
