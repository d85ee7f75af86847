"""Leave-one-run-out: would the judgments score a run fairly had that run not been pooled?

For each run, the documents only it contributed to the pool (in its top `depth`, in no other run's
top `depth`) are removed from the qrels and the run is scored again (Zobel 1998; Büttcher et al.
2007). A run that loses much, or moves in the ranking of systems, shows that a new system like it
would be underrated by these qrels.

The collection is called safe to reuse when, for every measure, the Kendall tau between the system
ranking with full qrels and the ranking in which each run has its left-out score is at least
SAFE_TAU (0.9), and the largest relative drop of any run is below SAFE_MAX_DROP (5%).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from trecbench.errors import Problem
from trecbench.pooling.pool import DEFAULT_DEPTH, build_pool
from trecbench.pooling.rank import RunLike, named_runs

SAFE_TAU = 0.9
SAFE_MAX_DROP = 0.05
DEFAULT_MEASURES = ("nDCG@10", "R@100")


@dataclass(frozen=True)
class LooResult:
    """Per (run, measure) scores with and without the run's own documents, and a summary per measure."""

    runs: pd.DataFrame  # run, measure, full, left_out, drop, relative_drop, rank, left_out_rank, unique, unique_judged
    summary: pd.DataFrame  # measure, max_drop, max_drop_run, mean_drop, kendall_tau, safe
    problems: list[Problem] = field(default_factory=list)

    @property
    def safe(self) -> bool:
        return bool(self.summary["safe"].all()) if len(self.summary) else False

    def verdict(self) -> str:
        """One line per measure with the numbers, and the verdict."""
        lines = []
        for row in self.summary.itertuples(index=False):
            tau = "n/a" if np.isnan(row.kendall_tau) else f"{row.kendall_tau:.3f}"
            lines.append(f"{row.measure}: max drop {row.max_drop:.1%} ({row.max_drop_run}), mean drop "
                         f"{row.mean_drop:.1%}, Kendall tau {tau} -> {'safe' if row.safe else 'NOT safe'}")
        rule = f"safe = tau >= {SAFE_TAU} and max relative drop < {SAFE_MAX_DROP:.0%} for every measure"
        word = "SAFE to reuse for new systems" if self.safe else "NOT safe to reuse for new systems"
        lines.append(f"verdict: {word} ({rule})")
        return "\n".join(lines)


def leave_one_out(
    qrels: RunLike,
    runs: RunLike | Iterable[RunLike] | Mapping[str, RunLike],
    measures: Sequence[str] = DEFAULT_MEASURES,
    *,
    depth: int = DEFAULT_DEPTH,
    rel_level: int = 1,
) -> LooResult:
    """Score each run with and without the judgments of the documents only it contributed (see the module doc)."""
    from trecbench.evaluation import evaluate
    from trecbench.qrels import read_qrels

    qrels_df = qrels if isinstance(qrels, pd.DataFrame) else read_qrels(qrels)
    frames = named_runs(runs)
    if len(frames) < 2:
        raise ValueError("leave-one-run-out needs at least two runs")
    pool = build_pool(frames, depth=depth)
    names = list(frames)
    c = pool.candidates
    only = c[c["n_runs"] == 1]
    qkey = pd.MultiIndex.from_arrays([qrels_df["query_id"].astype(str), qrels_df["doc_id"].astype(str)])
    full = evaluate(qrels_df, frames, measures, rel_level=rel_level)
    columns = list(full.columns)
    rows = []
    for name in names:
        mine = only[only["runs"] == name]
        drop_keys = pd.MultiIndex.from_arrays([mine["query_id"], mine["doc_id"]])
        removed = qkey.isin(drop_keys)
        reduced = qrels_df[~removed]
        left = evaluate(reduced, {name: frames[name]}, measures, rel_level=rel_level)
        judged = qrels_df["relevance"].to_numpy()[removed]
        for m in columns:
            rows.append({"run": name, "measure": m, "unique": len(mine), "unique_judged": int((judged >= 0).sum()),
                         "unique_relevant": int((judged >= rel_level).sum()),
                         "full": float(full.loc[name, m]), "left_out": float(left.loc[name, m])})
    table = pd.DataFrame(rows)
    table["drop"] = table["full"] - table["left_out"]
    table["relative_drop"] = np.where(table["full"] > 0, table["drop"] / table["full"].where(table["full"] > 0, 1), 0.0)
    table["rank"] = 0
    table["left_out_rank"] = 0
    summary = []
    for m in columns:
        part = table[table["measure"] == m]
        scores = part["full"].to_numpy()
        # rank among all runs with full qrels; and the run's rank had it been scored without its documents
        table.loc[part.index, "rank"] = [int((scores > s).sum()) + 1 for s in scores]
        table.loc[part.index, "left_out_rank"] = [
            int((np.delete(scores, i) > left).sum()) + 1 for i, left in enumerate(part["left_out"].to_numpy())]
        summary.append(_summary(m, part))
    table = table[["run", "measure", "full", "left_out", "drop", "relative_drop", "rank", "left_out_rank",
                   "unique", "unique_judged", "unique_relevant"]]
    return LooResult(table, pd.DataFrame(summary), [p for p in pool.problems])


def _summary(measure: str, part: pd.DataFrame) -> dict:
    from scipy.stats import kendalltau

    full = part["full"].to_numpy()
    left = part["left_out"].to_numpy()
    tau = float("nan")
    if len(full) > 1:
        tau = float(kendalltau(full, left).statistic)
        if np.isnan(tau):  # a constant ranking: unchanged if both are constant
            from scipy.stats import rankdata

            tau = 1.0 if np.array_equal(rankdata(full), rankdata(left)) else float("nan")
    worst = int(np.argmax(part["relative_drop"].to_numpy()))
    max_drop = float(part["relative_drop"].iloc[worst])
    mean_drop = float(part["relative_drop"].mean())
    safe = (not np.isnan(tau)) and tau >= SAFE_TAU and max_drop < SAFE_MAX_DROP
    return {"measure": measure, "max_drop": max_drop, "max_drop_run": part["run"].iloc[worst],
            "mean_drop": mean_drop, "kendall_tau": tau, "safe": bool(safe)}
