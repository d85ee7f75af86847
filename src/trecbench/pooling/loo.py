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
from pathlib import Path
from typing import Iterable, Mapping, Sequence, TYPE_CHECKING

import numpy as np
import pandas as pd

from trecbench.errors import InputError, Problem
from trecbench.pooling.pool import DEFAULT_DEPTH, build_pool
from trecbench.pooling.rank import RunLike, named_runs

if TYPE_CHECKING:
    from trecbench.store.workspace import Workspace, WorkspaceLike

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
    qkey = pd.MultiIndex.from_arrays([qrels_df["query_id"].astype(str), qrels_df["doc_id"].astype(str)])
    full = evaluate(qrels_df, frames, measures, rel_level=rel_level)
    columns = list(full.columns)
    rows = []
    for name in names:
        mine = own_pairs(c, name)
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


def own_pairs(candidates: pd.DataFrame, run: str) -> pd.DataFrame:
    """The pool candidates only `run` contributed (in its top depth, in no other run's): what leaving it out
    of the pool removes (`build_pool(...).candidates`; `trecbench.judging.judge_checks` fills them)."""
    return candidates[(candidates["n_runs"] == 1) & (candidates["runs"] == run)]


def workspace_leave_one_out(
    ws: WorkspaceLike,
    measures: Sequence[str] = DEFAULT_MEASURES,
    *,
    pool: str | None = None,
    qrels: RunLike | None = None,
    depth: int | None = None,
    rel_level: int = 1,
) -> LooResult:
    """Leave-one-run-out on a stored pool: its runs, at its depth, against the workspace's qrels.

    ws: a `Workspace` or its path; pool: the stored pool (default: the newest). qrels: a qrels file or
    frame instead of the workspace's (`trecbench.workspace_qrels`). depth: another depth than the
    pool's, reported in `problems` since the pool was not made that way. InputError when the workspace
    has no pool, the pool does not record its runs, or a run file is no longer there.
    """
    from trecbench.qrels.select import workspace_qrels
    from trecbench.release.bundle import file_sha256
    from trecbench.store import as_workspace
    from trecbench.store.workspace import load_pool

    ws = as_workspace(ws)
    frame = load_pool(ws, pool)
    if frame is None:
        raise InputError(str(ws.path), 0, "no pool is stored: pool the runs with `trecbench pool RUN... -w BENCH`")
    name, info = frame.attrs["name"], frame.attrs["info"]
    runs = {r["name"]: r for r in info.get("runs", []) if isinstance(r, dict)}
    if len(runs) < 2 or not all(r.get("path") for r in runs.values()):
        raise InputError(str(ws.path), 0, f"pool {name!r} does not record two or more run files: "
                                          "give --qrels and the RUN files instead")
    problems: list[Problem] = []
    paths = {}
    for run_name, record in runs.items():
        path = pooled_run_file(ws, record["path"])
        if path is None:
            problems.append(Problem(record["path"], 0, f"run {run_name!r} of pool {name!r} is no longer there"))
            continue
        paths[run_name] = path
        if record.get("sha256") and file_sha256(Path(path)) != record["sha256"]:
            problems.append(Problem(path, 0, f"run {run_name!r} changed since pool {name!r} was made "
                                             "(its sha256 differs)"))
    missing = [p for p in problems if "no longer there" in p.message]
    if missing:
        raise InputError.of(missing)
    pooled_depth = info.get("depth")
    if depth is not None and depth != pooled_depth:
        problems.append(Problem(str(ws.path), 0, f"depth {depth} is not the depth of pool {name!r} "
                                                 f"({pooled_depth}): unique documents are counted at {depth}"))
    else:
        depth = pooled_depth
    if qrels is None:
        made = workspace_qrels(ws, pool=name)
        if made.empty:
            raise InputError(str(ws.path), 0, "no judgments yet: judge the pool, or give --qrels")
        qrels = made.qrels[["query_id", "iteration", "doc_id", "relevance"]]
    result = leave_one_out(qrels, paths, measures, depth=depth, rel_level=rel_level)
    return LooResult(result.runs, result.summary, problems + result.problems)


def pooled_run_file(ws: Workspace, path: str) -> str | None:
    """A pooled run's file: as recorded (relative to where the pool was made), else beside the workspace;
    None when it is in neither place (the one rule `pool loo` and the report find pooled runs by)."""
    import os

    for candidate in (path, ws.resolve(path), os.path.join(ws.path, "runs", os.path.basename(path))):
        if candidate and os.path.isfile(candidate):
            return candidate
    return None


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
