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
    build_pool, read_pool, Pool                      depth-k, fused (rrf, rbp) and adaptive (mtf, maxmean)
    pool_runs, resume_adaptive                       pooling into a workspace; resuming an adaptive pool
    leave_one_out, workspace_leave_one_out           is the collection reusable for new systems?

The workspace and its qrels
    Workspace                                        the bench: judgments, pools, nuggets, model cache
    workspace_qrels, WorkspaceQrels                  judgments -> qrels (selection + duplicate propagation)
    propagated_qrels                                 a pool file's duplicates given their group's grade
    import_qrels                                     record a qrels file as a judge's judgments
    update_corpus, corpus_versions, corpus_changes   a new corpus version: judgments and links carried by span (`corpus update`)
    agreement                                        two judges: kappa, confusion matrix, ranking agreement
    draw_sample, validate_judges                     is a model judge good enough? (`judge validate`)
    corrected_scores, workspace_correction           model qrels corrected by people's sample: PPI means, intervals
    audit_qrels, read_audit                          old qrels re-judged by a model, disagreements queued (`judge llm --audit`)

Models
    ModelConfig, LLM, Budget                         which model and how; the client; a --max-cost limit
    judge_pool                                       grade a workspace's pool with a model (`judge llm`)
    judge_support, support_agreement                 grade answers' citations with a model; its agreement with people
    run_holes, judge_holes, hole_scores              a new run's holes, filled by a model, scored three ways (`judge holes`)
    tau_ap, new_run_bias, workspace_label_stability  knowing a judge: tau_AP, new-run bias, label stability
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

Support of answers' citations (does the cited passage back the sentence?)
    register_answers                                 answers' sentences registered for judging, with an inventory (`support add`)
    evaluate_support, score_support                  SupportP, SupportR, Unsupported, Contradicts (`eval support`)
    chosen_grades                                    one support grade per sentence-citation pair (a person's first)
    import_support, export_support                   support judgments as JSONL (`support import`, `support export`)

Reports and releases
    ReportOptions, build_report, write_report        the self-contained HTML report
    make_release                                     a frozen, hashed benchmark folder
    register_release                                 a release registered with ir_datasets (PyTerrier, ir_measures)

    >>> import trecbench
    >>> trecbench.evaluate("qrels.txt", ["run1.txt", "run2.txt"], ["nDCG@10", "R@100"])
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trecbench.helpers.lazy import attribute, by_module

__version__ = "0.1.0"

# What type checkers and editors see; at run time `_EXPORTS` imports each name on first use (helpers/lazy.py).
if TYPE_CHECKING:
    from trecbench.runs import (
        read_run as read_run, write_run as write_run, validate_run as validate_run, trec_order as trec_order,
    )
    from trecbench.qrels import read_qrels as read_qrels, write_qrels as write_qrels, validate_qrels as validate_qrels
    from trecbench.topics import read_topics as read_topics, Topic as Topic
    from trecbench.corpus import open_corpus as open_corpus, Document as Document
    from trecbench.answers import read_answers as read_answers
    from trecbench.nuggets.io import read_nuggets as read_nuggets, write_nuggets as write_nuggets
    from trecbench.errors import InputError as InputError, Problem as Problem
    from trecbench.evaluation import evaluate as evaluate, score_runs as score_runs
    from trecbench.evaluation.significance import compare_runs as compare_runs, write_comparisons as write_comparisons
    from trecbench.runs.baselines import bm25_run as bm25_run
    from trecbench.pooling import (
        build_pool as build_pool, read_pool as read_pool, Pool as Pool, pool_runs as pool_runs,
        resume_adaptive as resume_adaptive, leave_one_out as leave_one_out,
        workspace_leave_one_out as workspace_leave_one_out,
    )
    from trecbench.store import Workspace as Workspace
    from trecbench.qrels.select import (
        workspace_qrels as workspace_qrels, WorkspaceQrels as WorkspaceQrels, propagated_qrels as propagated_qrels,
    )
    from trecbench.qrels.imports import import_qrels as import_qrels
    from trecbench.versions import (
        update_corpus as update_corpus, corpus_versions as corpus_versions, corpus_changes as corpus_changes,
    )
    from trecbench.qrels.agreement import agreement as agreement
    from trecbench.judging.validate import draw_sample as draw_sample, validate_judges as validate_judges
    from trecbench.evaluation.correction import (
        corrected_scores as corrected_scores, workspace_correction as workspace_correction,
    )
    from trecbench.judging.audit import audit_qrels as audit_qrels, read_audit as read_audit
    from trecbench.llm import ModelConfig as ModelConfig, LLM as LLM, Budget as Budget
    from trecbench.judging.pool import judge_pool as judge_pool
    from trecbench.judging.support import judge_support as judge_support
    from trecbench.judging.support_agreement import support_agreement as support_agreement
    from trecbench.judging.holes import (
        run_holes as run_holes, judge_holes as judge_holes, hole_scores as hole_scores,
    )
    from trecbench.judging.judge_checks import (
        tau_ap as tau_ap, new_run_bias as new_run_bias, workspace_label_stability as workspace_label_stability,
    )
    from trecbench.nuggets.drafting import draft_nuggets as draft_nuggets
    from trecbench.nuggets.store import NuggetStore as NuggetStore, workspace_nuggets as workspace_nuggets
    from trecbench.nuggets.drafting.extractive import draft_extractive as draft_extractive
    from trecbench.evaluation.answers.scoring import (
        evaluate_answers as evaluate_answers, score_assignments as score_assignments, score_answers as score_answers,
    )
    from trecbench.evaluation.answers.assign import (
        read_assignment_files as read_assignment_files, write_assignments as write_assignments,
    )
    from trecbench.evaluation.evidence.recall import (
        evaluate_evidence as evaluate_evidence, evidence_from_nuggets as evidence_from_nuggets,
    )
    from trecbench.evaluation.evidence.contexts import read_contexts as read_contexts
    from trecbench.evaluation.evidence.context_recall import evaluate_context_recall as evaluate_context_recall
    from trecbench.evaluation.evidence.duplicates import duplicate_groups as duplicate_groups
    from trecbench.answers.support import register_answers as register_answers
    from trecbench.evaluation.support import (
        evaluate_support as evaluate_support, score_support as score_support, chosen_grades as chosen_grades,
        import_support as import_support, export_support as export_support,
    )
    from trecbench.report import ReportOptions as ReportOptions, build_report as build_report, write_report as write_report
    from trecbench.release import make_release as make_release, register_release as register_release

_EXPORTS = by_module({
    "trecbench.runs": ("read_run", "write_run", "validate_run", "trec_order"),
    "trecbench.qrels": ("read_qrels", "write_qrels", "validate_qrels"),
    "trecbench.topics": ("read_topics", "Topic"),
    "trecbench.corpus": ("open_corpus", "Document"),
    "trecbench.answers": ("read_answers",),
    "trecbench.nuggets.io": ("read_nuggets", "write_nuggets"),
    "trecbench.errors": ("InputError", "Problem"),
    "trecbench.evaluation": ("evaluate", "score_runs"),
    "trecbench.evaluation.significance": ("compare_runs", "write_comparisons"),
    "trecbench.runs.baselines": ("bm25_run",),
    "trecbench.pooling": ("build_pool", "read_pool", "Pool", "pool_runs", "resume_adaptive", "leave_one_out",
                          "workspace_leave_one_out"),
    "trecbench.store": ("Workspace",),
    "trecbench.qrels.select": ("workspace_qrels", "WorkspaceQrels", "propagated_qrels"),
    "trecbench.qrels.imports": ("import_qrels",),
    "trecbench.versions": ("update_corpus", "corpus_versions", "corpus_changes"),
    "trecbench.qrels.agreement": ("agreement",),
    "trecbench.judging.validate": ("draw_sample", "validate_judges"),
    "trecbench.evaluation.correction": ("corrected_scores", "workspace_correction"),
    "trecbench.judging.audit": ("audit_qrels", "read_audit"),
    "trecbench.llm": ("ModelConfig", "LLM", "Budget"),
    "trecbench.judging.pool": ("judge_pool",),
    "trecbench.judging.support": ("judge_support",),
    "trecbench.judging.support_agreement": ("support_agreement",),
    "trecbench.judging.holes": ("run_holes", "judge_holes", "hole_scores"),
    "trecbench.judging.judge_checks": ("tau_ap", "new_run_bias", "workspace_label_stability"),
    "trecbench.nuggets.drafting": ("draft_nuggets",),
    "trecbench.nuggets.store": ("NuggetStore", "workspace_nuggets"),
    "trecbench.nuggets.drafting.extractive": ("draft_extractive",),
    "trecbench.evaluation.answers.scoring": ("evaluate_answers", "score_assignments", "score_answers"),
    "trecbench.evaluation.answers.assign": ("read_assignment_files", "write_assignments"),
    "trecbench.evaluation.evidence.recall": ("evaluate_evidence", "evidence_from_nuggets"),
    "trecbench.evaluation.evidence.contexts": ("read_contexts",),
    "trecbench.evaluation.evidence.context_recall": ("evaluate_context_recall",),
    "trecbench.evaluation.evidence.duplicates": ("duplicate_groups",),
    "trecbench.answers.support": ("register_answers",),
    "trecbench.evaluation.support": ("evaluate_support", "score_support", "chosen_grades", "import_support",
                                     "export_support"),
    "trecbench.report": ("ReportOptions", "build_report", "write_report"),
    "trecbench.release": ("make_release", "register_release"),
})

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    return attribute(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return __all__
