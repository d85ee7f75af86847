"""Run x measure tables for the report: each mean with a 95% bootstrap interval and a mark against a baseline.

The interval is the seeded percentile bootstrap of the run's mean over topics: the draws of
`trecbench.evaluation.significance.bootstrap_interval`, made once and applied to every run and measure
defined on the same topics (one matrix product instead of a resampling per column). The mark says whether the run differs from the
baseline (the best run by the first measure, or the one asked for) by the paired randomisation test of
`compare_runs`, with Holm's correction across every comparison of the table; the same seed gives the
same table.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

BETTER, WORSE, SAME, BASELINE = "better", "worse", "same", "baseline"
DIFFERENCE_COLUMNS = ["run", "baseline", "measure", "run_mean", "baseline_mean", "difference", "ci_low", "ci_high",
                      "p_holm", "result"]


@dataclass(frozen=True)
class Cell:
    """One run's score on one measure, and how it compares with the baseline's."""

    mean: float
    low: float  # 95% bootstrap interval of the mean over topics
    high: float
    topics: int  # topics with a value
    mark: str = SAME  # better | worse | same | baseline
    diff: float = math.nan  # run - baseline over their common topics
    diff_low: float = math.nan  # 95% bootstrap interval of that difference
    diff_high: float = math.nan
    p: float = math.nan  # Holm-adjusted p of the paired randomisation test


@dataclass
class ScoreTable:
    """Runs (best first by the first measure) x measures; `per_topic` keeps the topic rows it came from."""

    measures: list[str]
    runs: list[str]
    baseline: str | None
    cells: dict[tuple[str, str], Cell]
    per_topic: pd.DataFrame
    alpha: float = 0.05
    iterations: int = 10000
    seed: int = 0
    comparisons: int = 0
    notes: list[str] = field(default_factory=list)

    def cell(self, run: str, measure: str) -> Cell:
        return self.cells[(run, measure)]

    def differences(self) -> pd.DataFrame:
        """Every comparison with the baseline, one row per (run, measure), runs best first: the means, the
        difference, its 95% interval, the Holm-adjusted p and the result (better, worse, same)."""
        rows = [{"run": r, "baseline": self.baseline, "measure": m, "run_mean": self.cells[(r, m)].mean,
                 "baseline_mean": self.cells[(self.baseline, m)].mean, "difference": self.cells[(r, m)].diff,
                 "ci_low": self.cells[(r, m)].diff_low, "ci_high": self.cells[(r, m)].diff_high,
                 "p_holm": self.cells[(r, m)].p, "result": self.cells[(r, m)].mark}
                for r in self.runs if self.baseline is not None and r != self.baseline for m in self.measures]
        return pd.DataFrame(rows, columns=DIFFERENCE_COLUMNS)

    def frame(self) -> pd.DataFrame:
        """A flat table: run, measure, mean, low, high, topics, mark, diff, p."""
        return pd.DataFrame([{"run": r, "measure": m, **vars(self.cells[(r, m)])}
                             for r in self.runs for m in self.measures])


def score_table(scores: pd.DataFrame, *, baseline: str | None = None, iterations: int = 10000, seed: int = 0,
                alpha: float = 0.05, progress: Callable[[str], None] | None = None) -> ScoreTable:
    """Build the table from per-topic scores (index (run, query_id), a column per measure).

    `all` rows, when present, give the means shown (trec_eval's own averages for retrieval runs);
    otherwise the mean is over the topics with a value. `progress` is called once per run.
    """
    from trecbench.evaluation.significance import compare_runs, holm
    from trecbench.evaluation.topic_scores import ALL

    measures = [str(m) for m in scores.columns]
    qids = scores.index.get_level_values("query_id")
    topic_rows = scores[qids != ALL]
    all_rows = scores[qids == ALL]
    runs = list(dict.fromkeys(topic_rows.index.get_level_values("run")))
    means: dict[tuple[str, str], float] = {}
    for run in runs:
        for m in measures:
            if (run, ALL) in all_rows.index:
                means[(run, m)] = float(all_rows.loc[(run, ALL), m])
            else:
                values = topic_rows.loc[run, m].dropna()
                means[(run, m)] = float(values.mean()) if len(values) else math.nan
    first = measures[0] if measures else None

    def order(run: str) -> tuple:
        value = means.get((run, first), math.nan) if first else math.nan
        return (math.isnan(value), -value if not math.isnan(value) else 0.0, runs.index(run))

    runs = sorted(runs, key=order)
    if baseline is not None and baseline not in runs:
        raise KeyError(f"baseline {baseline!r} is not among the runs: {', '.join(runs)}")
    if baseline is None and len(runs) > 1:
        baseline = runs[0]
    cells: dict[tuple[str, str], Cell] = {}
    columns = [(run, m) for run in runs for m in measures]
    intervals = bootstrap_intervals([topic_rows.loc[run, m].dropna().to_numpy(np.float64) for run, m in columns],
                                    iterations=iterations, seed=seed)
    for (run, m), (low, high, n) in zip(columns, intervals):
        cells[(run, m)] = Cell(means[(run, m)], low, high, n, BASELINE if run == baseline else SAME)
    comparisons = []
    for run in runs:
        if progress is not None:
            progress(run)
        if baseline is not None and run != baseline:
            comparisons.extend(compare_runs(topic_rows, baseline, runs=[run], measures=measures,
                                            iterations=iterations, seed=seed))
    # Holm across the whole table: every (run, measure) comparison made against the baseline
    for c, p in zip(comparisons, holm([c.p_randomisation for c in comparisons])):
        mark = SAME
        if not math.isnan(p) and p < alpha and c.difference != 0:
            mark = BETTER if c.difference > 0 else WORSE
        old = cells[(c.run, c.measure)]
        cells[(c.run, c.measure)] = Cell(old.mean, old.low, old.high, old.topics, mark, c.difference, c.ci_low,
                                         c.ci_high, p)
    return ScoreTable(measures, runs, baseline, cells, topic_rows, alpha, iterations, seed, len(comparisons))


def bootstrap_intervals(columns: list[np.ndarray], *, iterations: int = 10000, seed: int = 0,
                        level: float = 0.95) -> list[tuple[float, float, int]]:
    """(low, high, topics) of each column's mean, as `bootstrap_interval` gives them column by column.

    Columns of the same length share `bootstrap_interval`'s draws (the same seed, the same chunks), turned
    into a count of each topic per draw, so each mean is one row of a matrix product.
    """
    from trecbench.evaluation.significance import bootstrap_interval

    out: list[tuple[float, float, int] | None] = [None] * len(columns)
    by_length: dict[int, list[int]] = {}
    for i, values in enumerate(columns):
        n = len(values)
        if n <= 1 or np.all(values == values[0]):
            low, high = bootstrap_interval(values, iterations=iterations, seed=seed, level=level)
            out[i] = (low, high, n)
        else:
            by_length.setdefault(n, []).append(i)
    tail = (1 - level) / 2 * 100
    for n, members in by_length.items():
        values = np.column_stack([columns[i] for i in members])  # topics x columns
        means = np.empty((iterations, len(members)))
        rng = np.random.default_rng(seed)
        step = max(1, 2_000_000 // n)  # bootstrap_interval's chunks: the same draws in the same order
        for start in range(0, iterations, step):
            m = min(step, iterations - start)
            draws = rng.integers(0, n, size=(m, n))
            flat = (draws + (np.arange(m) * n)[:, None]).ravel()
            counts = np.bincount(flat, minlength=m * n).reshape(m, n).astype(np.float64)
            means[start:start + m] = counts @ values / n
        low, high = np.percentile(means, [tail, 100 - tail], axis=0)
        for k, i in enumerate(members):
            out[i] = (float(low[k]), float(high[k]), n)
    return out  # type: ignore[return-value]


def differences_csv(table: ScoreTable) -> str:
    """`ScoreTable.differences` as CSV (full precision; an undefined value is empty)."""
    return table.differences().to_csv(index=False, lineterminator="\n", na_rep="")


_LATEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"} | {"~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                                                       "\\": r"\textbackslash{}"}


def latex_text(text: object) -> str:
    """Text with LaTeX's special characters escaped, so a run name cannot break the table."""
    return "".join(_LATEX_SPECIAL.get(c, c) for c in str(text))


def differences_latex(table: ScoreTable, caption: str) -> str:
    """`ScoreTable.differences` as a LaTeX tabular (booktabs), significant differences in bold."""

    def num(v: float) -> str:
        return "--" if v != v else f"{v:.4f}"

    def p(v: float) -> str:
        return "--" if v != v else ("$<$0.0001" if v < 1e-4 else f"{v:.4f}")

    lines = [r"\begin{table}", r"\centering", r"\caption{" + latex_text(caption) + "}",
             r"\begin{tabular}{llrrrrl}", r"\toprule",
             r"run & measure & mean & difference & 95\% interval & Holm $p$ & result \\", r"\midrule"]
    for row in table.differences().itertuples(index=False):
        diff = f"{row.difference:+.4f}" if row.difference == row.difference else "--"
        if row.result in (BETTER, WORSE):
            diff = r"\textbf{" + diff + "}"
        lines.append(f"{latex_text(row.run)} & {latex_text(row.measure)} & {num(row.run_mean)} & {diff} & "
                     f"[{num(row.ci_low)}, {num(row.ci_high)}] & {p(row.p_holm)} & {row.result} \\\\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)
