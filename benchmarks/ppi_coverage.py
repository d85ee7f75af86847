"""Do the corrected 95% intervals cover the truth? A simulation with known truth (docs/correction.md).

Each seed makes a synthetic collection (`trecbench.evaluation.correction.simulation`: 30 topics, 60 pooled
passages each, grades 0-3, 4 runs listing their top 20) whose people's grades are the truth, and a scripted
model judge that grades too high by a known confusion matrix (`BIASED_HIGH`). People then judge a sample:
n single pairs drawn uniformly or by `judge validate --strategy uncertainty`'s rule (label-level correction
of P@10 and DCG@10), or every pair of n topics (topic-level correction of nDCG@10 and P@10). For every
run the script checks whether the corrected interval holds the run's true mean (its mean under people's
grades of every pair), and whether the plain model-qrels interval (95% percentile bootstrap over topics,
1,000 draws) does. It prints, per (measure, n, draw): coverage of each over seeds x runs, mean widths, and
the mean absolute error of the point estimates, then the date, commit and load.

    python benchmarks/ppi_coverage.py [--seeds 200] [--pairs 100 200 400 800] [--topics 5 10 15]
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from trecbench.evaluation import evaluate  # noqa: E402
from trecbench.evaluation.correction import Design, correct  # noqa: E402
from trecbench.evaluation.correction.simulation import (  # noqa: E402
    collection,
    pair_sample,
    topic_sample,
    uncertainty_sample,
)
from trecbench.evaluation.significance import bootstrap_interval  # noqa: E402


def truth_of(c, measures):
    """The true means, and the model-qrels per-topic scores (for the plain bootstrap)."""
    exact = {}
    for m in measures:
        if m.startswith("DCG"):
            k = int(m.split("@")[1])
            exact[m] = {name: _dcg(c.truth, run, k) for name, run in c.runs.items()}
        else:
            frame = evaluate(c.truth, c.runs, [m])
            exact[m] = frame[m].to_dict()
    return exact


def _dcg(qrels, run, k):
    """Mean DCG@k (trec_eval's gains, 1/log2(rank+1)) of a run over the qrels' topics, written out."""
    grades = dict(zip(zip(qrels["query_id"], qrels["doc_id"]), qrels["relevance"]))
    total = 0.0
    for q, group in run.groupby("query_id"):
        ranked = group.sort_values(["score", "doc_id"], ascending=[False, False]).head(k)
        total += sum(max(grades.get((q, d), 0), 0) / np.log2(r + 2) for r, d in enumerate(ranked["doc_id"]))
    return total / qrels["query_id"].nunique()


def plain_intervals(c, measure):
    if measure.startswith("DCG"):
        return None
    per = evaluate(c.model, c.runs, [measure], per_topic=True)[measure]
    per = per[per.index.get_level_values("query_id") != "all"]
    return {name: bootstrap_interval(per.loc[name].to_numpy(), iterations=1000, seed=0) for name in c.runs}


def one_seed(seed, pairs, topics, tally):
    """Every sample size of one seed, on one collection (its truth and plain intervals computed once)."""
    c = collection(seed)
    measures = {"label": ["P@10", "DCG@10"], "topic": ["nDCG@10", "P@10"]}
    exact = truth_of(c, ["P@10", "DCG@10", "nDCG@10"])
    plain = {m: plain_intervals(c, m) for m in ("P@10", "DCG@10", "nDCG@10")}
    for kind, sizes in (("uniform", pairs), ("uncertainty", pairs), ("topics", topics)):
        for n in sizes:
            if kind == "topics":
                got = correct(c.model, topic_sample(c, n, seed + 10_000 + n), c.runs, measures["topic"])
            else:
                draw = pair_sample if kind == "uniform" else uncertainty_sample
                s = draw(c, n, seed + 10_000 + n)
                got = correct(c.model, s, c.runs, measures["label"],
                              design=Design(s[["query_id", "doc_id", "pi", "stratum"]], True))
            for row in got.scores:
                _count(tally.setdefault((row.measure, kind, n), {k: [] for k in KEYS}), row,
                       exact[row.measure][row.run], plain[row.measure])


KEYS = ("cov", "width", "err", "pcov", "pwidth", "perr")


def _count(cell, row, t, plain):
    e = row.estimate
    cell["cov"].append(e.low <= t <= e.high)
    cell["width"].append(e.width)
    cell["err"].append(abs(e.value - t))
    cell["perr"].append(abs(row.plain - t))
    if plain is not None:
        low, high = plain[row.run]
        cell["pcov"].append(low <= t <= high)
        cell["pwidth"].append(high - low)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--pairs", type=int, nargs="*", default=[100, 200, 400, 800])
    ap.add_argument("--topics", type=int, nargs="*", default=[5, 10, 15])
    args = ap.parse_args()
    started = time.process_time()
    # the commit of the code this run imported (not of whatever is checked out when it ends)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    tally: dict = {}
    for seed in range(args.seeds):
        one_seed(seed, args.pairs, args.topics, tally)
    print(f"{args.seeds} seeds x 4 runs; 30 topics x 60 pooled pairs; model judge BIASED_HIGH; 95% intervals")
    print("| measure | people judged | drawn | corrected covers | corrected width | corrected error "
          "| plain bootstrap covers | plain width | plain error |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (m, method, n), cell in tally.items():
        unit = "topics" if method == "topics" else "pairs"
        pcov = f"{np.mean(cell['pcov']):.3f}" if cell["pcov"] else "-"
        pwidth = f"{np.mean(cell['pwidth']):.3f}" if cell["pwidth"] else "-"
        print(f"| {m} | {n} {unit} | {method} | {np.mean(cell['cov']):.3f} | {np.mean(cell['width']):.3f} "
              f"| {np.mean(cell['err']):.3f} | {pcov} | {pwidth} | {np.mean(cell['perr']):.3f} |")
    print(f"\n{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {commit}, "
          f"load {os.getloadavg()[0]:.2f}, CPU {time.process_time() - started:.1f} s")


if __name__ == "__main__":
    main()
