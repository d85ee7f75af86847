"""The report's support section: weighted support precision and recall of the answers registered for support
assessment (`trecbench eval support`'s numbers, `evaluation.support.evaluate_support`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trecbench.report.missing import Missing
from trecbench.report.scores import ScoreTable, score_table

if TYPE_CHECKING:
    from trecbench.store.workspace import Workspace

# higher is better for both, as the table's marks assume; the shares (Unsupported, Contradicts) go in the notes
TABLE_MEASURES = ("SupportP", "SupportR")


@dataclass
class SupportSection:
    table: ScoreTable | None = None
    notes: list[str] = field(default_factory=list)
    missing: Missing | None = None


def support_section(ws: Workspace, options: Any) -> SupportSection:
    """SupportP and SupportR per run with intervals and significance, the shares of unsupported sentences and
    contradicting citations, and what was not judged; a `Missing` when no sentence is registered or graded."""
    from trecbench.evaluation.support import evaluate_support
    from trecbench.evaluation.topic_scores import summary

    section = SupportSection()
    scores = evaluate_support(ws)
    if not scores.answers:
        section.missing = Missing("No answer sentences are registered for support assessment (does each cited "
                                  "passage back its sentence?).", "trecbench support add -w BENCH rag-run.jsonl")
        return section
    if not any(a.judged_pairs for a in scores.answers):
        section.missing = Missing("No sentence-citation pair has a support grade yet.",
                                  "trecbench support import -w BENCH support.jsonl")
        return section
    section.table = score_table(scores.frame[list(TABLE_MEASURES)], iterations=options.iterations, seed=options.seed,
                                alpha=options.alpha)
    shares = [m for m in ("Unsupported", "Contradicts") if m in scores.frame.columns]
    for run, row in summary(scores.frame).iterrows():
        # NaN: nothing to count (a run citing nothing has no pair to judge), shown as `eval support` shows it
        values = ", ".join(f"{m} {row[m]:.4f}" if row[m] == row[m] else f"{m} -" for m in shares + ["Judged"])
        section.notes.append(f"{run}: {values} (mean over topics)")
    section.notes.append(f"Grades: {scores.policy}. Weights full 1, partial 0.5, none and contradicts 0 "
                         "(Thakur et al., SIGIR 2025); docs/support.md.")
    section.notes.extend(scores.messages())
    return section
