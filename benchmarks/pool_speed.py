"""Pooling speed: trecbench's depth-k pool vs trectools' TrecPoolMaker on the same run files.

50 runs x 500 topics x 1,000 documents (synthetic, seeded; the runs of a topic share documents, as
real systems do), depth 100. Each tool runs in its own process and is timed end to end: reading the
run files and forming the pool in memory (trecbench's writing of the pool file is timed apart).
Peak memory is the process's peak RSS (resource.getrusage). Both pools are then compared as sets of
(topic, docid): by default the scores have no ties (so tie-breaking cannot differ); with --ties they
are rounded to one decimal, and the candidates on which the two differ are counted (trectools breaks
ties by docid ascending, trec_eval and trecbench by docid descending).

    python benchmarks/pool_speed.py [--runs 50 --topics 500 --docs 1000 --depth 100 --repeat 1 --ties]
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def make_runs(folder: Path, runs: int, topics: int, docs: int, ties: bool, seed: int = 7) -> list[Path]:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    rng = np.random.default_rng(seed)
    universe = 4 * docs  # each topic's documents; runs retrieve overlapping subsets of them
    # numeric docids, as in MS MARCO; distinct within a topic
    topic_docs = np.stack([rng.choice(9_000_000, size=universe, replace=False) + 1 for _ in range(topics)])
    quality = rng.gamma(2.0, 1.0, size=(topics, universe))
    paths = []
    for r in range(runs):
        picks = np.argsort(rng.random((topics, universe)), axis=1)[:, :docs]
        noisy = np.take_along_axis(quality, picks, axis=1) + rng.normal(0, 1.0, size=(topics, docs))
        order = np.argsort(-noisy, axis=1, kind="stable")
        ranked = np.take_along_axis(picks, order, axis=1)
        docids = np.take_along_axis(topic_docs, ranked, axis=1).ravel()
        if ties:
            scores = np.round(np.take_along_axis(noisy, order, axis=1), 1).ravel()
        else:  # strictly decreasing and exact in float32 and float64: no ties anywhere
            scores = np.tile(np.arange(docs, 0, -1, dtype=np.float64) + 0.5, topics)
        n = topics * docs
        table = pa.table({
            "qid": pc.cast(pa.array(np.repeat(np.arange(1000, 1000 + topics), docs)), pa.string()),
            "q0": pa.array(["Q0"] * n),
            "docid": pc.cast(pa.array(docids), pa.string()),
            "rank": pa.array(np.tile(np.arange(1, docs + 1), topics)),
            "score": pa.array(scores),
            "tag": pa.array([f"run{r:02d}"] * n),
        })
        path = folder / f"run{r:02d}.txt"
        pcsv.write_csv(table, path, pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none"))
        paths.append(path)
    return paths


def run_trecbench(runs: list[str], depth: int, out: str) -> tuple[float, list[tuple[str, str]]]:
    from trecbench.pooling import build_pool

    pool = build_pool(runs, depth=depth)
    start = time.perf_counter()
    pool.write(out)
    write = time.perf_counter() - start
    return write, list(zip(pool.candidates["query_id"], pool.candidates["doc_id"]))


def run_trectools(runs: list[str], depth: int, out: str) -> tuple[float, list[tuple[str, str]]]:
    from trectools import TrecPoolMaker

    pool = TrecPoolMaker().make_pool_from_files(runs, strategy="topX", topX=depth)
    return 0.0, [(str(q), str(d)) for q, docs in pool.pool.items() for d in docs]


TOOLS = {"trecbench": run_trecbench, "trectools": run_trectools}


def child(tool: str, depth: int, pairs_file: str, runs: list[str]) -> None:
    start, cpu_start = time.perf_counter(), time.process_time()
    extra, pairs = TOOLS[tool](runs, depth, pairs_file + ".pool.tsv")
    wall = time.perf_counter() - start - extra
    cpu = time.process_time() - cpu_start  # both cores' CPU seconds (the pool file's writing included)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MiB on Linux
    Path(pairs_file).write_text("".join(f"{q}\t{d}\n" for q, d in pairs))
    print(json.dumps({"wall": wall, "cpu": cpu, "write": extra, "peak_mib": peak, "candidates": len(pairs)}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--topics", type=int, default=500)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=1, help="runs of each tool; the best wall time is kept")
    ap.add_argument("--ties", action="store_true", help="round scores to one decimal (many ties)")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        tool, depth, pairs, *runs = args.child
        child(tool, int(depth), pairs, runs)
        return
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        runs = make_runs(Path(tmp), args.runs, args.topics, args.docs, args.ties)
        print(f"data: {args.runs} runs x {args.topics} topics x {args.docs} docs, depth {args.depth}, "
              f"{'with' if args.ties else 'no'} tied scores "
              f"({sum(p.stat().st_size for p in runs) / 1e6:.0f} MB) in {time.perf_counter() - t0:.1f}s")
        results, pair_sets = {}, {}
        for tool in TOOLS:
            best = None
            pairs = str(Path(tmp) / f"{tool}.pairs")
            for _ in range(args.repeat):
                proc = subprocess.run([sys.executable, __file__, "--child", tool, str(args.depth), pairs,
                                       *map(str, runs)], capture_output=True, text=True)
                if proc.returncode:
                    sys.exit(f"{tool} failed:\n{proc.stderr}")
                rec = json.loads(proc.stdout.strip().splitlines()[-1])
                if best is None or rec["wall"] < best["wall"]:
                    best = rec
            results[tool] = best
            pair_sets[tool] = set(Path(pairs).read_text().splitlines())
        base = results["trecbench"]
        print(f"{'tool':<10} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9} {'candidates':>11} "
              f"{'x slower than trecbench':>24}")
        for tool, rec in results.items():
            print(f"{tool:<10} {rec['wall']:>8.2f} {rec['cpu']:>8.2f} {rec['peak_mib']:>9.0f} {rec['candidates']:>11} "
                  f"{rec['wall'] / base['wall']:>24.2f}")
        print(f"trecbench also wrote the pool file in {base['write']:.2f}s")
        ours, theirs = pair_sets["trecbench"], pair_sets["trectools"]
        if ours == theirs:
            print(f"pools identical as sets of (topic, docid): {len(ours)} candidates")
        else:
            print(f"pools differ: {len(ours - theirs)} candidates only in trecbench's, {len(theirs - ours)} only in "
                  f"trectools' (of {len(ours)}); tie-breaking: trectools docid ascending, trec_eval descending")
        ratio = results["trectools"]["wall"] / base["wall"]
        print(f"trectools / trecbench = {ratio:.1f} (target >= 10); trecbench peak {base['peak_mib']:.0f} MiB "
              f"(target < 1024)")


if __name__ == "__main__":
    main()
