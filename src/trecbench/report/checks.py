"""The report's checks of the collection itself: leave-one-run-out reusability, judges compared (their
confusion matrix and the rank correlation of the system orderings their grades give), and the audit."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence, TYPE_CHECKING

import pandas as pd

from trecbench.errors import InputError
from trecbench.report.missing import Missing

if TYPE_CHECKING:
    from trecbench.store.workspace import Workspace


@dataclass
class ReuseSection:
    """`workspace_leave_one_out` on the report's pool and qrels: per measure, the verdict; per run, its drop."""

    pool: str = ""
    summary: pd.DataFrame | None = None  # measure, max_drop, max_drop_run, mean_drop, kendall_tau, safe
    runs: pd.DataFrame | None = None  # run, measure, full, left_out, drop, relative_drop, unique
    verdict: str = ""
    safe: bool = False
    notes: list[str] = field(default_factory=list)
    missing: Missing | None = None


@dataclass(frozen=True)
class JudgePair:
    """Two judges on the pairs both graded: who gave which grade, and whether their grades rank systems alike."""

    a: str
    b: str
    pairs: int
    confusion: pd.DataFrame  # rows: A's grade, columns: B's grade
    measure: str = ""
    runs: int = 0
    kendall_tau: float = math.nan
    spearman_rho: float = math.nan


def reuse_section(ws: Workspace, qrels: pd.DataFrame | None, options: Any) -> ReuseSection:
    """Leave one run out on the report's pool (`options.pool`, default the newest) with the report's qrels."""
    from trecbench.pooling.loo import workspace_leave_one_out

    section = ReuseSection()
    if qrels is None:
        section.missing = Missing("No judgments yet: leave-one-run-out rescores each pooled run without the "
                                  "documents only it contributed.", "trecbench qrels import qrels.txt -w BENCH "
                                  "--judge nist")
        return section
    try:
        result = workspace_leave_one_out(ws, list(options.measures), pool=options.pool,
                                         qrels=qrels[["query_id", "iteration", "doc_id", "relevance"]],
                                         rel_level=max(1, options.threshold))
    except InputError as e:
        section.missing = Missing(f"Reusability is not measured: {e.problems[0].message}.",
                                  "trecbench pool RUN... -w BENCH (a pool that records its run files)")
        return section
    section.summary, section.safe, section.verdict = result.summary, result.safe, result.verdict().splitlines()[-1]
    section.runs = result.runs[["run", "measure", "full", "left_out", "drop", "relative_drop", "unique"]]
    section.notes = [p.message for p in result.problems]
    return section


def judge_pairs(by_judge: dict[str, pd.DataFrame], compared: Sequence[tuple[str, str]], runs: dict[str, str],
                measure: str, threshold: int) -> list[JudgePair]:
    """For each compared pair of judges: the confusion matrix of their grades and, with two or more runs, the
    Kendall tau and Spearman rho between the orderings of the runs by `measure` under each judge's grades,
    both restricted to the pairs both judged (so a judge is not rewarded for judging more)."""
    from trecbench.qrels.agreement import agreement, judged_pairs, ranking_agreement

    out = []
    for a, b in compared:
        result = agreement(by_judge[a], by_judge[b], threshold=threshold)
        pair = JudgePair(a, b, result.pairs, result.confusion)
        if len(runs) >= 2:
            both, _, _ = judged_pairs(by_judge[a], by_judge[b])
            common_a = both.rename(columns={"a": "relevance"})[["query_id", "doc_id", "relevance"]]
            common_b = both.rename(columns={"b": "relevance"})[["query_id", "doc_id", "relevance"]]
            ranking = ranking_agreement(common_a, common_b, runs, [measure],  # type: ignore[arg-type]  # a {name: file} mapping, as evaluate takes
                                        rel_level=max(1, threshold))[0]
            pair = JudgePair(a, b, result.pairs, result.confusion, measure, len(ranking.scores),
                             ranking.kendall_tau, ranking.spearman_rho)
        out.append(pair)
    return out


@dataclass
class AuditSection:
    """The newest audit queue (`judge llm --audit`): agreement of the model with the old grades, and the
    disagreements with the grade people gave since."""

    audit: Any = None  # trecbench.judging.audit.Audit
    rejudged: int = 0  # disagreements people have graded again since the queue was made
    shown: int = 0  # disagreements listed (the largest first)
    missing: Missing | None = None


AUDIT_ROWS = 50  # disagreements listed in the report; the rest are counted


def audit_section(ws: Workspace) -> AuditSection:
    from trecbench.judging.audit import read_audit

    section = AuditSection()
    try:
        audit = read_audit(ws)
    except InputError:
        section.missing = Missing("No audit in this workspace: an audit has a model re-judge the old qrels and "
                                  "queues the pairs it disagrees with most for people.",
                                  "trecbench judge llm -w BENCH --audit --model openai/gpt-4o-mini")
        return section
    section.audit = audit
    section.rejudged = sum(p.new is not None for p in audit.disagreements)
    section.shown = min(AUDIT_ROWS, len(audit.disagreements))
    return section
