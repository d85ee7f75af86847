"""Is a run really better or worse than the baseline? Paired tests over per-topic scores.

For each (run, measure) against the baseline, over the topics both have a score for:

- paired t-test (`scipy.stats.ttest_rel`, two-sided);
- paired randomisation test (two-sided): the signs of the per-topic differences are flipped at random
  and p is the share of flips whose |mean| is at least the observed one, (count + 1) / (n + 1);
  every flip is enumerated exactly when the 2^T sign patterns of the T non-zero differences number
  at most `iterations`;
- Holm's step-down correction of each test's p-values across all the comparisons made at once;
- a 95% percentile bootstrap interval of the mean difference (topics resampled with replacement);
- the topics that got better and worse.

Random draws come from `numpy.random.default_rng(seed)`: the same seed gives the same numbers.
A drop gate (`max_drop={"nDCG@10": 0.01}`) flags a run whose mean is below the baseline's by more than
the allowed drop while the difference is significant (Holm-adjusted p of the chosen test < alpha).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import IO, Any, Mapping

import numpy as np
import pandas as pd

from trecbench.files.shapes import per_topic_frame

TESTS = ("randomisation", "t")


def paired_t(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p of the paired t-test; 1.0 when every difference is 0."""
    from scipy.stats import ttest_rel

    d = a - b
    if len(d) < 2 or not np.any(d):
        return 1.0
    if np.all(d == d[0]):
        return 0.0  # a constant non-zero difference: t is infinite
    return float(ttest_rel(a, b).pvalue)


def randomisation(a: np.ndarray, b: np.ndarray, *, iterations: int = 10000, seed: int = 0) -> float:
    """Two-sided p of the paired randomisation (sign-flip) test of the mean difference."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = len(d)
    if n == 0 or not np.any(d):
        return 1.0
    observed = abs(d.mean())
    tolerance = 1e-12 * max(1.0, observed)  # equal means must count as "at least as extreme"
    nonzero = d[d != 0]  # a zero difference is the same under either sign
    m = len(nonzero)
    if m <= 20 and 2 ** m <= iterations:
        # exact: every sign pattern of the non-zero differences once
        patterns = ((np.arange(2 ** m)[:, None] >> np.arange(m)) & 1) * 2 - 1
        means = np.abs(patterns @ nonzero) / n
        return float(np.mean(means >= observed - tolerance))
    rng = np.random.default_rng(seed)
    count = 0
    done = 0
    while done < iterations:
        m = min(iterations - done, max(1, 2_000_000 // n))
        signs = rng.integers(0, 2, size=(m, n), dtype=np.int8) * 2 - 1
        count += int(np.sum(np.abs(signs @ d) / n >= observed - tolerance))
        done += m
    return (count + 1) / (iterations + 1)


def bootstrap_interval(d: np.ndarray, *, iterations: int = 10000, seed: int = 0,
                       level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `d` (topics resampled with replacement)."""
    d = np.asarray(d, dtype=np.float64)
    if len(d) == 0:
        return math.nan, math.nan
    if len(d) == 1 or np.all(d == d[0]):
        return float(d[0]), float(d[0])
    rng = np.random.default_rng(seed)
    means = np.empty(iterations)
    step = max(1, 2_000_000 // len(d))
    for start in range(0, iterations, step):
        m = min(step, iterations - start)
        means[start:start + m] = d[rng.integers(0, len(d), size=(m, len(d)))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def holm(pvalues: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values (NaN stays NaN and does not count as a comparison)."""
    indexed = [(p, i) for i, p in enumerate(pvalues) if not math.isnan(p)]
    indexed.sort()
    m = len(indexed)
    adjusted = [math.nan] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(indexed):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


@dataclass
class Comparison:
    """One run against the baseline on one measure."""

    run: str
    measure: str
    topics: int
    baseline_mean: float
    run_mean: float
    difference: float  # run - baseline, over the common topics
    ci_low: float
    ci_high: float
    p_t: float
    p_randomisation: float
    p_t_holm: float = math.nan
    p_randomisation_holm: float = math.nan
    better: list[str] = field(default_factory=list)
    worse: list[str] = field(default_factory=list)
    regression: bool = False
    allowed_drop: float | None = None

    def row(self) -> dict:
        return {"run": self.run, "measure": self.measure, "topics": self.topics, "baseline": self.baseline_mean,
                "mean": self.run_mean, "diff": self.difference, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "p_t": self.p_t, "p_t_holm": self.p_t_holm, "p_rand": self.p_randomisation,
                "p_rand_holm": self.p_randomisation_holm, "better": len(self.better), "worse": len(self.worse),
                "regression": self.regression}


def compare_runs(
    scores: pd.DataFrame | Mapping[str, Any],
    baseline: str,
    *,
    runs: list[str] | None = None,
    measures: list[str] | None = None,
    iterations: int = 10000,
    seed: int = 0,
    alpha: float = 0.05,
    test: str = "randomisation",
    max_drop: Mapping[str, float] | None = None,
) -> list[Comparison]:
    """Compare runs with the baseline on per-topic scores (index (run, query_id), a column per measure).

    `all` rows are ignored; topics where either side is NaN are left out of that comparison. The field's
    shapes of per-topic scores are taken too (`files.shapes.per_topic_frame`): PyTerrier's perquery table
    (name, qid, measure, value), {run: {qid: {measure: value}}} (pytrec_eval's, and `evaluate(...,
    shape="dict", per_topic=True)`), {run: ir_measures Metric records} (`ir_measures.iter_calc`).
    """
    scores = per_topic_frame(scores)
    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(TESTS)}, not {test!r}")
    scores = scores[scores.index.get_level_values("query_id") != "all"]
    present = list(dict.fromkeys(scores.index.get_level_values("run")))
    if baseline not in present:
        raise KeyError(f"baseline {baseline!r} is not among the runs: {', '.join(present)}")
    runs = [r for r in (runs or present) if r != baseline]
    measures = measures or list(scores.columns)
    base = scores.loc[baseline]
    out: list[Comparison] = []
    for run in runs:
        mine = scores.loc[run]
        for measure in measures:
            joined = pd.concat([base[measure].rename("b"), mine[measure].rename("a")], axis=1, join="inner").dropna()
            a, b = joined["a"].to_numpy(np.float64), joined["b"].to_numpy(np.float64)
            d = a - b
            low, high = bootstrap_interval(d, iterations=iterations, seed=seed)
            out.append(Comparison(
                run, measure, len(d), float(b.mean()) if len(b) else math.nan, float(a.mean()) if len(a) else math.nan,
                float(d.mean()) if len(d) else math.nan, low, high, paired_t(a, b),
                randomisation(a, b, iterations=iterations, seed=seed),
                better=[str(q) for q in joined.index[d > 0]], worse=[str(q) for q in joined.index[d < 0]]))
    for name in ("p_t", "p_randomisation"):
        for c, p in zip(out, holm([getattr(c, name) for c in out])):
            setattr(c, name + "_holm", p)
    for c in out:
        drop = (max_drop or {}).get(c.measure)
        if drop is None:
            continue
        c.allowed_drop = drop
        p = c.p_randomisation_holm if test == "randomisation" else c.p_t_holm
        c.regression = bool(c.difference < -drop and p < alpha)
    return out


def comparisons_frame(comparisons: list[Comparison]) -> pd.DataFrame:
    return pd.DataFrame([c.row() for c in comparisons])


def _num(value: float, digits: int = 4) -> str:
    return "-" if value != value else f"{value:.{digits}f}"


def write_comparisons(results: list[Comparison], stream: IO[str], fmt: str = "table", *, per_topic: bool = False,
                      baseline: str = "") -> None:
    """The comparisons as `eval compare` prints them: a table (with the topics that got better and worse when
    `per_topic`), CSV (`comparisons_frame`) or JSON."""
    from trecbench.evaluation.retrieval.output import aligned

    if fmt == "csv":
        stream.write(comparisons_frame(results).to_csv(index=False))
        return
    if fmt == "json":
        doc = {"baseline": baseline, "comparisons": [
            {**{k: (None if isinstance(v, float) and v != v else v) for k, v in c.row().items()},
             "better": c.better, "worse": c.worse, "allowed_drop": c.allowed_drop} for c in results]}
        json.dump(doc, stream, indent=2)
        stream.write("\n")
        return
    header = ["run", "measure", "topics", "baseline", "mean", "diff", "95% CI", "p t", "p t Holm", "p rand",
              "p rand Holm", "better", "worse", ""]
    rows = []
    for c in results:
        rows.append([c.run, c.measure, str(c.topics), _num(c.baseline_mean), _num(c.run_mean),
                     f"{c.difference:+.4f}" if c.difference == c.difference else "-",
                     f"[{_num(c.ci_low)}, {_num(c.ci_high)}]", _num(c.p_t), _num(c.p_t_holm),
                     _num(c.p_randomisation), _num(c.p_randomisation_holm), str(len(c.better)), str(len(c.worse)),
                     "REGRESSION" if c.regression else ""])
    stream.write(f"baseline: {baseline}\n")
    stream.write("".join(line + "\n" for line in aligned(header, rows, left=2)))
    if per_topic:
        for c in results:
            stream.write(f"\n{c.run} {c.measure}: better on {len(c.better)}: {' '.join(c.better) or '-'}\n")
            stream.write(f"{c.run} {c.measure}: worse on {len(c.worse)}: {' '.join(c.worse) or '-'}\n")
