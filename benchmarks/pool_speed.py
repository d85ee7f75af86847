"""Pooling cost: trecbench's depth-k pool vs trectools' TrecPoolMaker on the same run files.

Cases (synthetic, seeded; the runs of a topic share documents, as real systems do), depth 100:
  wide   50 runs x 500 topics x 1,000 documents
  many   200 runs x 50 topics x 1,000 documents
Each tool runs in its own process under /usr/bin/time, timed end to end (start-up, reading the run
files, forming the pool, writing the (topic, docid) pairs): CPU seconds (user + system), wall time
and peak RSS. trecbench runs twice: pinned to one core (`taskset -c 0`, what one thread costs) and on
all cores. The pools are then compared as sets of (topic, docid): by default the scores have no ties
(so tie-breaking cannot differ); with --ties they are rounded to one decimal, and the candidates on
which the two differ are counted (trectools breaks ties by docid ascending, trec_eval and trecbench
by docid descending).

Where the time goes (per 500,000-line run, process_time): reading the whole file into numpy
columns took 0.17 s (splitting fields 0.05, docids 0.05, scores 0.07), the duplicate check 0.03,
the top-100 cut with ties 0.02, the sha256 0.01. A pool needs only each topic's top `depth`: now
the topics and scores of every line are parsed, and docids (and the duplicate check) only on the
lines that can make the cut (a tenth of them at depth 100); scores are parsed with one multiply and
one add per character. What is left: splitting the bytes into lines and fields, the scores, and
pyarrow's dictionary encoding of the pooled ids.

trectools takes tens of minutes on the wide case, so its measurement is kept in
benchmarks/pool_speed_peers.json, keyed by the case (runs, topics, documents, depth, ties, seed), with
the date and machine load it was measured at; later runs reuse it (printed with that date) and
`--remeasure` measures it again. The ratio printed is this run's trecbench CPU time against that
figure.

    python benchmarks/pool_speed.py [--cases wide,many] [--ties] [--remeasure]
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from timing import measure

SEED = 7


def make_runs(folder: Path, runs: int, topics: int, docs: int, ties: bool, seed: int = SEED) -> list[Path]:
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


def run_trecbench(runs: list[str], depth: int) -> list[tuple[str, str]]:
    from trecbench.pooling import build_pool

    pool = build_pool(runs, depth=depth)
    # the columns as Python lists at once (iterating an arrow-backed column costs a call per value)
    return list(zip(pool.candidates["query_id"].tolist(), pool.candidates["doc_id"].tolist()))


def run_trectools(runs: list[str], depth: int) -> list[tuple[str, str]]:
    from trectools import TrecPoolMaker

    pool = TrecPoolMaker().make_pool_from_files(runs, strategy="topX", topX=depth)
    return [(str(q), str(d)) for q, docs in pool.pool.items() for d in docs]


TOOLS = {"trecbench": run_trecbench, "trectools": run_trectools}
CASES = {"wide": (50, 500, 1000), "many": (200, 50, 1000)}
PEERS = Path(__file__).resolve().parent / "pool_speed_peers.json"


def case_key(n_runs: int, n_topics: int, n_docs: int, depth: int, ties: bool) -> str:
    return f"{n_runs}x{n_topics}x{n_docs} depth {depth} {'ties' if ties else 'no ties'} seed {SEED}"


def cached(key: str) -> dict | None:
    """trectools' earlier measurement of this case (CPU, wall, peak RSS, date, load), if there is one."""
    if not PEERS.exists():
        return None
    return json.loads(PEERS.read_text()).get(key)


def pool_digest(pairs: set[str]) -> str:
    """sha256 of the pool's (topic, docid) pairs, sorted: pools compared without keeping them."""
    return hashlib.sha256("\n".join(sorted(pairs)).encode()).hexdigest()


def remember(key: str, rec: dict, pairs: set[str]) -> None:
    known = json.loads(PEERS.read_text()) if PEERS.exists() else {}
    known[key] = {"cpu": round(rec["cpu"], 2), "wall": round(rec["wall"], 1), "peak_mib": round(rec["peak_mib"]),
                  "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                  "load": rec["load"], "candidates": len(pairs), "pool_sha256": pool_digest(pairs)}
    PEERS.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")


def child(tool: str, depth: int, pairs_file: str, runs: list[str]) -> None:
    pairs = TOOLS[tool](runs, depth)
    Path(pairs_file).write_text("".join(f"{q}\t{d}\n" for q, d in pairs))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="wide,many", help="comma-separated: " + ", ".join(CASES))
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--ties", action="store_true", help="round scores to one decimal (many ties)")
    ap.add_argument("--remeasure", action="store_true", help="measure trectools again instead of reusing "
                    f"{PEERS.name}")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        tool, depth, pairs, *runs = args.child
        child(tool, int(depth), pairs, runs)
        return
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")}
    for case in args.cases.split(","):
        n_runs, n_topics, n_docs = CASES[case]
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            runs = make_runs(Path(tmp), n_runs, n_topics, n_docs, args.ties)
            print(f"\n{case}: {n_runs} runs x {n_topics} topics x {n_docs} docs, depth {args.depth}, "
                  f"{'with' if args.ties else 'no'} tied scores "
                  f"({sum(p.stat().st_size for p in runs) / 1e6:.0f} MB, made in {time.perf_counter() - t0:.0f} s)")
            results, pair_sets = {}, {}
            key = case_key(n_runs, n_topics, n_docs, args.depth, args.ties)
            peer = None if args.remeasure else cached(key)
            tools = [("trecbench, 1 core", "trecbench", "0"), (f"trecbench, {os.cpu_count()} cores", "trecbench", None)]
            if peer is None:
                tools.insert(0, ("trectools", "trectools", None))
            for label, tool, cores in tools:
                pairs = str(Path(tmp) / f"{tool}.pairs")
                cmd = [sys.executable, __file__, "--child", tool, str(args.depth), pairs, *map(str, runs)]
                load = os.getloadavg()[0]
                results[label] = measure([cmd], env, cores)
                results[label]["load"] = round((load + os.getloadavg()[0]) / 2, 1)
                pair_sets[tool] = set(Path(pairs).read_text().splitlines())
                if tool == "trectools":
                    remember(key, results[label], pair_sets[tool])
            if peer is None:
                peer = cached(key)
                print(f"trectools measured now; kept in {PEERS.name}")
            else:
                print(f"trectools: measured by this script on {peer['date']} (load {peer['load']}), from {PEERS.name}")
            assert peer is not None
            results = {"trectools": {**peer, "when": peer["date"]}, **{k: v for k, v in results.items()
                                                                       if k != "trectools"}}
            print(f"{'tool':<20} {'CPU s':>8} {'wall s':>8} {'peak MiB':>9} {'load':>5}")
            for label, rec in results.items():
                print(f"{label:<20} {rec['cpu']:>8.2f} {rec['wall']:>8.2f} {rec['peak_mib']:>9.0f} {rec['load']:>5}")
            ours, theirs = pair_sets["trecbench"], pair_sets.get("trectools")
            if theirs is None:
                same = pool_digest(ours) == peer["pool_sha256"]
                print(f"pools {'identical' if same else 'DIFFERENT'} (sha256 of the sorted (topic, docid) pairs against "
                      f"trectools' {peer['candidates']} candidates): {len(ours)} candidates")
            elif ours == theirs:
                print(f"pools identical as sets of (topic, docid): {len(ours)} candidates")
            else:
                print(f"pools differ: {len(ours - theirs)} candidates only in trecbench's, {len(theirs - ours)} "
                      f"only in trectools' (of {len(ours)}); tie-breaking: trectools docid ascending, trec_eval "
                      "descending")
            one = results["trecbench, 1 core"]
            print(f"trectools / trecbench CPU, one core: {results['trectools']['cpu'] / one['cpu']:.1f} (target >= 20; "
                  f"trectools measured {results['trectools']['when']})")


if __name__ == "__main__":
    main()
