"""Retrieval evaluation speed: trecbench vs pytrec_eval (with its parsing) vs ir-measures.

20 runs x 500 topics x 1,000 documents (synthetic, seeded, with tied scores), qrels with graded
judgments; measures nDCG@10, R@100, AP. Each tool runs in its own process (so peak memory is its own)
and is timed end to end: reading the files and scoring all runs. Prints wall time, peak RSS, and
ratios against trecbench.

    python benchmarks/eval_speed.py [--runs 20 --topics 500 --docs 1000 --repeat 3]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MEASURES = ["nDCG@10", "R@100", "AP"]


def make_data(folder: Path, runs: int, topics: int, docs: int, seed: int = 13) -> tuple[Path, list[Path]]:
    import numpy as np

    rng = np.random.default_rng(seed)
    corpus = 200_000
    qrels = folder / "qrels.txt"
    with qrels.open("w") as f:
        for t in range(topics):
            judged = rng.choice(corpus, size=300, replace=False)
            grades = rng.choice([0, 0, 0, 1, 1, 2, 3], size=300)
            f.writelines(f"{1000 + t} 0 doc{d} {g}\n" for d, g in zip(judged, grades))
    paths = []
    for r in range(runs):
        path = folder / f"run{r:02d}.txt"
        lines = []
        for t in range(topics):
            ids = rng.choice(corpus, size=docs, replace=False)
            # scores rounded to 2 decimals: many ties, broken by docid as trec_eval does
            scores = np.round(np.sort(rng.gamma(2.0, 2.0, size=docs))[::-1], 2)
            lines.extend(f"{1000 + t} Q0 doc{d} {i + 1} {s:.2f} run{r:02d}\n" for i, (d, s) in enumerate(zip(ids, scores)))
        path.write_text("".join(lines))
        paths.append(path)
    return qrels, paths


def run_trecbench(qrels: str, runs: list[str]) -> dict:
    import trecbench

    df = trecbench.evaluate(qrels, runs, MEASURES)
    return {name: {m: float(df.loc[name, m]) for m in MEASURES} for name in df.index}


def run_pytrec_eval(qrels: str, runs: list[str]) -> dict:
    import pytrec_eval

    with open(qrels) as f:
        q = pytrec_eval.parse_qrel(f)
    evaluator = pytrec_eval.RelevanceEvaluator(q, {"ndcg_cut.10", "recall.100", "map"})
    out = {}
    for path in runs:
        with open(path) as f:
            run = pytrec_eval.parse_run(f)
        per_topic = evaluator.evaluate(run)
        n = len(per_topic)
        out[Path(path).stem] = {
            "nDCG@10": sum(v["ndcg_cut_10"] for v in per_topic.values()) / n,
            "R@100": sum(v["recall_100"] for v in per_topic.values()) / n,
            "AP": sum(v["map"] for v in per_topic.values()) / n,
        }
    return out


def run_ir_measures(qrels: str, runs: list[str]) -> dict:
    import ir_measures

    measures = [ir_measures.parse_measure(m) for m in MEASURES]
    q = list(ir_measures.read_trec_qrels(qrels))
    out = {}
    for path in runs:
        agg = ir_measures.calc_aggregate(measures, q, ir_measures.read_trec_run(path))
        out[Path(path).stem] = {str(m): float(v) for m, v in agg.items()}
    return out


TOOLS = {"trecbench": run_trecbench, "pytrec_eval": run_pytrec_eval, "ir_measures": run_ir_measures}


def child(tool: str, qrels: str, runs: list[str]) -> None:
    start = time.perf_counter()
    result = TOOLS[tool](qrels, runs)
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MiB on Linux
    print(json.dumps({"wall": wall, "peak_mib": peak, "result": result}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--topics", type=int, default=500)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each tool; the best wall time is kept")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        tool, qrels, *runs = args.child
        child(tool, qrels, runs)
        return
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        qrels, runs = make_data(Path(tmp), args.runs, args.topics, args.docs)
        print(f"data: {args.runs} runs x {args.topics} topics x {args.docs} docs "
              f"({sum(p.stat().st_size for p in runs) / 1e6:.0f} MB) in {time.perf_counter() - t0:.1f}s")
        results = {}
        for tool in TOOLS:
            best = None
            for _ in range(args.repeat):
                proc = subprocess.run([sys.executable, __file__, "--child", tool, str(qrels), *map(str, runs)],
                                      capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
                if proc.returncode:
                    sys.exit(f"{tool} failed:\n{proc.stderr}")
                rec = json.loads(proc.stdout.strip().splitlines()[-1])
                if best is None or rec["wall"] < best["wall"]:
                    best = rec
            results[tool] = best
        base = results["trecbench"]
        print(f"{'tool':<12} {'wall s':>8} {'peak MiB':>9} {'x slower than trecbench':>24}")
        for tool, rec in results.items():
            print(f"{tool:<12} {rec['wall']:>8.2f} {rec['peak_mib']:>9.0f} {rec['wall'] / base['wall']:>24.2f}")
        # the three tools must agree on the numbers (ir-measures and pytrec_eval are trec_eval 9)
        worst = 0.0
        for tool in ("pytrec_eval", "ir_measures"):
            for name, values in results[tool]["result"].items():
                ours = base["result"][name]
                worst = max(worst, *(abs(values[m] - ours[m]) for m in MEASURES))
        print(f"largest difference from trecbench's means: {worst:.2e}")
        print(f"pytrec_eval / trecbench = {results['pytrec_eval']['wall'] / base['wall']:.2f} (target >= 1)")
        print(f"ir_measures / trecbench = {results['ir_measures']['wall'] / base['wall']:.2f} (target >= 2)")


if __name__ == "__main__":
    main()
