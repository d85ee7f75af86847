"""Significance against a baseline: paired t and randomisation tests, Holm, bootstrap, the CI regression gate."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ttest_rel

from trecbench.evaluation.significance import bootstrap_interval, compare_runs, holm, paired_t, randomisation


def frame(runs: dict[str, list[float]], measure: str = "M") -> pd.DataFrame:
    rows = [((run, f"t{i}"), v) for run, values in runs.items() for i, v in enumerate(values)]
    index = pd.MultiIndex.from_tuples([r for r, _ in rows], names=["run", "query_id"])
    return pd.DataFrame({measure: [v for _, v in rows]}, index=index)


def test_holm_adjusts_step_down_and_keeps_order():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, float("nan")])[0] == 0.5


def test_randomisation_is_exact_for_few_topics():
    # five equal positive differences: only the two all-same-sign flips are as extreme, 2 of 32
    assert randomisation(np.ones(5), np.zeros(5)) == pytest.approx(2 / 32)
    assert randomisation(np.zeros(5), np.zeros(5)) == 1.0


def test_randomisation_with_many_topics_is_seeded_and_reproducible():
    rng = np.random.default_rng(1)
    a, b = rng.random(40), rng.random(40)
    p1 = randomisation(a, b, iterations=2000, seed=7)
    assert p1 == randomisation(a, b, iterations=2000, seed=7)
    assert 0 < p1 <= 1


def test_paired_t_is_scipys_and_handles_constant_differences():
    a, b = np.array([0.2, 0.5, 0.9, 0.4]), np.array([0.1, 0.5, 0.7, 0.1])
    assert paired_t(a, b) == pytest.approx(ttest_rel(a, b).pvalue)
    assert paired_t(a, a) == 1.0


def test_bootstrap_interval_is_seeded_and_brackets_the_mean():
    d = np.array([0.1, -0.05, 0.2, 0.0, 0.15, 0.05, 0.1, -0.1])
    low, high = bootstrap_interval(d, iterations=5000, seed=3)
    assert (low, high) == bootstrap_interval(d, iterations=5000, seed=3)
    assert low < d.mean() < high


def test_compare_runs_lists_topics_better_and_worse_and_gates_significant_drops():
    scores = frame({"base": [0.5] * 12, "worse": [0.3] * 11 + [0.6], "same": [0.5] * 11 + [0.49]})
    results = {c.run: c for c in compare_runs(scores, "base", max_drop={"M": 0.01}, iterations=2000)}
    worse = results["worse"]
    assert worse.difference == pytest.approx((11 * -0.2 + 0.1) / 12)
    assert worse.better == ["t11"] and len(worse.worse) == 11
    assert worse.regression and worse.p_randomisation_holm < 0.05
    assert not results["same"].regression  # a drop within the allowance
    # Holm over the two comparisons
    assert worse.p_t_holm == pytest.approx(min(1, 2 * worse.p_t) if worse.p_t < results["same"].p_t
                                           else max(worse.p_t, 2 * results["same"].p_t))


def test_a_large_but_not_significant_drop_does_not_fail_the_gate():
    scores = frame({"base": [0.9, 0.1, 0.9, 0.1], "new": [0.1, 0.3, 0.5, 0.2]})
    [c] = compare_runs(scores, "base", max_drop={"M": 0.01})
    assert c.difference < -0.01 and not c.regression


def write(tmp_path: Path, lines: list[str], name: str) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_eval_compare_is_a_regression_gate_on_retrieval_runs(tmp_path, cli_run):
    topics = [f"q{i}" for i in range(15)]
    qrels = write(tmp_path, [f"{q} 0 good 1" for q in topics], "qrels.txt")
    main = write(tmp_path, [f"{q} Q0 good 1 2 main" for q in topics] + [f"{q} Q0 bad 2 1 main" for q in topics],
                 "main.txt")
    branch = write(tmp_path, [f"{q} Q0 bad 1 2 branch" for q in topics] + [f"{q} Q0 good 2 1 branch" for q in topics],
                   "branch.txt")
    result = cli_run("eval", "compare", "--qrels", qrels, "--baseline", main, branch, "--max-drop", "nDCG@10=0.01")
    assert result.exit_code == 1
    assert "REGRESSION" in result.stdout
    assert result.stderr.splitlines()[-1].startswith("regression: branch nDCG@10 0.6309 vs baseline 1.0000 (-0.3691, "
                                                     "allowed -0.01)")
    same = write(tmp_path, main.read_text().replace(" main", " same").splitlines(), "same.txt")
    fine = cli_run("eval", "compare", "--qrels", qrels, "--baseline", main, same, "--max-drop", "nDCG@10=0.01")
    assert fine.exit_code == 0


def test_eval_compare_reads_per_topic_scores_of_other_commands(tmp_path, cli_run):
    lines = []
    for run, supported in (("v1", 2), ("v2", 0)):
        for q in range(6):
            lines.append(json.dumps({"qid": f"q{q}", "run_id": run, "nuggets": [
                {"text": "a", "importance": "vital", "assignment": "support" if supported else "not_support"},
                {"text": "b", "importance": "vital", "assignment": "support" if supported > 1 else "not_support"}]}))
    assignments = write(tmp_path, lines, "assignments.jsonl")
    scores = tmp_path / "scores.csv"
    assert cli_run("eval", "answers", "--assignments", assignments, "-q", "--format", "csv", "-o", scores).exit_code == 0
    result = cli_run("eval", "compare", "--scores", scores, "--baseline", "v1", "-m", "V_strict", "--format", "json",
                     "-q")
    assert result.exit_code == 0, result.output
    [c] = json.loads(result.stdout)["comparisons"]
    assert (c["run"], c["measure"], c["topics"], c["diff"], c["worse"]) == ("v2", "V_strict", 6, -1.0,
                                                                            [f"q{i}" for i in range(6)])
    assert c["p_rand"] == pytest.approx(2 / 64)
    gate = cli_run("eval", "compare", "--scores", scores, "--baseline", "v1", "--max-drop", "V_strict=0.1")
    assert gate.exit_code == 1


def test_eval_compare_rejects_unknown_runs_and_bad_drops(tmp_path, cli_run):
    scores = write(tmp_path, ["run,query_id,measure,value", "a,q1,M,0.5", "b,q1,M,0.4"], "s.csv")
    assert "not in the score files: zz" in cli_run("eval", "compare", "--scores", scores, "--baseline", "zz").output
    bad = cli_run("eval", "compare", "--scores", scores, "--baseline", "a", "--max-drop", "M")
    assert bad.exit_code == 2 and "expected MEASURE=DROP" in bad.output
