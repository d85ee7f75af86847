"""Corrected scores on TREC RAG 2025 (docs/correction.md): NIST's qrels as the people, UMBRELA's as the model.

The two qrels files in ../shared/data/rag grade the same 10,284 (topic, segment) pairs of 22 topics (the
2024 file has no UMBRELA twin, so the 2025 pair is used). Five runs are simulated: each ranks every judged
segment of a topic by its NIST grade plus normal noise (sd 1, 2, 3, 4, 6) and lists the top 100. Their
true means are their scores under NIST's qrels; the plain figure is under UMBRELA's. Then, over `--repeats`
draws of what people judge:
- label-level P@10 and DCG@10 with n single pairs: drawn uniformly, or by the `uncertainty` strategy's rule
  (`judging.lara`: rank-weighted uncertainty of UMBRELA's grade, by rank band);
- topic-level nDCG@10 with every pair of n topics graded by NIST.
It prints, per measure, method and n: the mean over runs and draws of |corrected - NIST|, the same for the
plain UMBRELA figure, the coverage of the 95% intervals and their mean width; then date, commit and load.

    python benchmarks/ppi_rag.py [--repeats 20] [--data ../shared/data/rag]
"""
from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from trecbench import read_qrels  # noqa: E402
from trecbench.evaluation import evaluate  # noqa: E402
from trecbench.evaluation.correction import Design, correct  # noqa: E402
from trecbench.judging.lara import proportional, rank_weight, systematic, threshold_probability  # noqa: E402
from trecbench.judging.validate import rank_band  # noqa: E402

NOISE = (1.0, 2.0, 3.0, 4.0, 6.0)


def simulated_runs(nist: pd.DataFrame, seed: int = 7) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    runs = {}
    for sd in NOISE:
        frame = nist[["query_id", "doc_id"]].assign(score=nist["relevance"].to_numpy() + rng.normal(0, sd, len(nist)))
        frame = frame.sort_values(["query_id", "score"], ascending=[True, False]).groupby("query_id").head(100)
        runs[f"noise{sd:g}"] = frame.reset_index(drop=True)
    return runs


def dcg_truth(qrels: pd.DataFrame, runs: dict, k: int = 10) -> dict[str, float]:
    grades = dict(zip(zip(qrels["query_id"], qrels["doc_id"]), qrels["relevance"]))
    out = {}
    for name, run in runs.items():
        total = 0.0
        for q, group in run.groupby("query_id"):
            top = group.sort_values(["score", "doc_id"], ascending=[False, False]).head(k)["doc_id"]
            total += sum(max(grades.get((q, d), 0), 0) / np.log2(r + 2) for r, d in enumerate(top))
        out[name] = total / qrels["query_id"].nunique()
    return out


def uncertainty_design(umbrela: pd.DataFrame, runs: dict, n: int, rng) -> pd.DataFrame:
    """n pairs drawn as `judge validate --strategy uncertainty` draws them (no human grades yet: rule 3)."""
    ranks: dict[tuple[str, str], list[int]] = {}
    for run in runs.values():
        ordered = run.sort_values(["query_id", "score"], ascending=[True, False])
        position = ordered.groupby("query_id").cumcount() + 1
        for q, d, r in zip(ordered["query_id"], ordered["doc_id"], position):
            ranks.setdefault((q, d), []).append(int(r))
    keys = list(zip(umbrela["query_id"], umbrela["doc_id"]))
    best = [min(ranks.get(k, [1000])) for k in keys]
    weight = np.array([rank_weight(";".join(map(str, ranks.get(k, []))), b) for k, b in zip(keys, best)])
    p = np.array([threshold_probability(float(g), 1) for g in umbrela["relevance"]])
    frame = umbrela[["query_id", "doc_id"]].assign(stratum=[rank_band(b) for b in best],
                                                   score=weight * np.sqrt(p * (1 - p)))
    totals = frame.groupby("stratum")["score"].sum()
    parts = []
    for band, group in frame.groupby("stratum"):
        k = min(len(group), max(2, int(round(n * totals[band] / totals.sum()))))
        pi = proportional(group["score"].to_numpy(), k)
        chosen = systematic(pi, rng)
        parts.append(group.iloc[chosen].assign(pi=pi[chosen]))
    return pd.concat(parts)[["query_id", "doc_id", "pi", "stratum"]].reset_index(drop=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "rag"))
    ap.add_argument("--pairs", type=int, nargs="*", default=[250, 500, 1000, 2000])
    ap.add_argument("--topics", type=int, nargs="*", default=[3, 6, 11])
    args = ap.parse_args()
    started = time.process_time()
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()  # the code this run imported
    data = Path(args.data)
    nist = read_qrels(str(data / "qrels.rag25.test.txt"))[["query_id", "doc_id", "relevance"]]
    umbrela = read_qrels(str(data / "qrels.rag25.test-umbrela2.txt"))[["query_id", "doc_id", "relevance"]]
    umbrela = umbrela.merge(nist[["query_id", "doc_id"]], on=["query_id", "doc_id"])
    runs = simulated_runs(nist)
    truth = {m: evaluate(nist, runs, [m])[m].to_dict() for m in ("P@10", "nDCG@10")}
    truth["DCG@10"] = dcg_truth(nist, runs)
    rows = []
    for kind, sizes in (("uniform", args.pairs), ("uncertainty", args.pairs), ("topics", args.topics)):
        for n in sizes:
            for rep in range(args.repeats):
                rng = np.random.default_rng(1000 * rep + n)
                if kind == "topics":
                    chosen = rng.choice(sorted(nist["query_id"].unique()), size=n, replace=False)
                    got = correct(umbrela, nist[nist["query_id"].isin(set(chosen))], runs, ["nDCG@10"])
                else:
                    if kind == "uniform":
                        rows_ = rng.choice(len(umbrela), size=n, replace=False)
                        design = umbrela.iloc[rows_][["query_id", "doc_id"]].assign(pi=n / len(umbrela), stratum="all")
                    else:
                        design = uncertainty_design(umbrela, runs, n, rng)
                    people = design.merge(nist, on=["query_id", "doc_id"])
                    got = correct(umbrela, people, runs, ["P@10", "DCG@10"], design=Design(design, True))
                for s in got.scores:
                    t = truth[s.measure][s.run]
                    e = s.estimate
                    rows.append({"measure": s.measure, "sample": kind, "n": n, "run": s.run, "truth": t,
                                 "plain_err": abs(s.plain - t), "err": abs(e.value - t),
                                 "covers": e.low <= t <= e.high, "width": e.width})
    table = pd.DataFrame(rows)
    print(f"TREC RAG 2025: 22 topics, {len(nist)} pairs graded by NIST and UMBRELA; 5 simulated runs; "
          f"{args.repeats} draws per size")
    print("NIST (truth) and UMBRELA (plain) means of the runs:")
    plain = {m: evaluate(umbrela, runs, [m])[m].to_dict() for m in ("P@10", "nDCG@10")}
    for m in ("P@10", "DCG@10", "nDCG@10"):
        line = ", ".join(f"{r} {truth[m][r]:.3f}" + (f"/{plain[m][r]:.3f}" if m in plain else "") for r in runs)
        print(f"  {m}: {line}")
    print("| measure | people judged | draw | mean abs error, corrected | mean abs error, UMBRELA only "
          "| 95% coverage | mean width |")
    print("|---|---|---|---|---|---|---|")
    for (m, kind, n), g in table.groupby(["measure", "sample", "n"], sort=False):
        unit = "topics" if kind == "topics" else "pairs"
        print(f"| {m} | {n} {unit} | {kind} | {g['err'].mean():.4f} | {g['plain_err'].mean():.4f} "
              f"| {g['covers'].mean():.3f} | {g['width'].mean():.4f} |")
    print(f"\n{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {commit}, "
          f"load {os.getloadavg()[0]:.2f}, CPU {time.process_time() - started:.1f} s")


if __name__ == "__main__":
    main()
