"""Pooling cost: trecbench's depth-k pool vs trectools' TrecPoolMaker on the same run files, interleaved.

Cases (synthetic, seeded; the runs of a topic share documents, as real systems do), depth 100:
  wide   50 runs x 500 topics x 1,000 documents
  many   200 runs x 50 topics x 1,000 documents
Each tool runs in its own process under /usr/bin/time, timed end to end (start-up, reading the run
files, forming the pool, writing the (topic, docid) pairs): CPU seconds (user + system), wall time
and peak RSS, with the load average around it. trecbench runs pinned to one core (`taskset -c 0`,
what one thread costs) and on all cores. The tools take turns (trectools, trecbench 1 core, trecbench
all cores, then again, the order rotated each round), `--rounds` times (3 by default), so a change of
the machine's load falls on each alike; the median of each tool's rounds and the median ratio of
trectools' CPU to trecbench's one-core CPU (ratio within each round) are printed last. The pools are
compared as sets of (topic, docid): by default the scores have no ties (so tie-breaking cannot
differ); with --ties they are rounded to one decimal, and the candidates on which the two differ are
counted (trectools breaks ties by docid ascending, trec_eval and trecbench by docid descending).

trectools takes minutes per round on the wide case. `--quick` leaves it out and uses its figure kept in
benchmarks/pool_speed_peers.json (keyed by the case, with the date and load it was measured at, and
written by every full run): a quick check between changes, not a figure to quote. `--before SRC` adds
another trecbench source tree (e.g. a `git archive` of an earlier commit) as a third tool, for a
before/after of the same files. `--folder` keeps the generated runs between invocations.

    python benchmarks/pool_speed.py [--cases wide,many] [--rounds 3] [--ties] [--quick] [--before SRC] [--folder DIR]
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
    """Keep trectools' figure of this case (the median of a full run's rounds) for `--quick`."""
    known = json.loads(PEERS.read_text()) if PEERS.exists() else {}
    known[key] = {"cpu": round(rec["cpu"], 2), "wall": round(rec["wall"], 1), "peak_mib": round(rec["peak_mib"]),
                  "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                  "load": rec["load"], "candidates": len(pairs), "pool_sha256": pool_digest(pairs)}
    PEERS.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")


def child(tool: str, depth: int, pairs_file: str, runs: list[str]) -> None:
    pairs = TOOLS[tool](runs, depth)
    Path(pairs_file).write_text("".join(f"{q}\t{d}\n" for q, d in pairs))


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def run_case(case: str, folder: Path, args: argparse.Namespace) -> None:
    n_runs, n_topics, n_docs = CASES[case]
    where = folder / f"{case}-{'ties' if args.ties else 'noties'}-seed{SEED}"
    if not where.exists() or len(list(where.glob("run*.txt"))) != n_runs:
        where.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        make_runs(where, n_runs, n_topics, n_docs, args.ties)
        print(f"made the runs of {case} in {time.perf_counter() - t0:.0f} s")
    runs = sorted(where.glob("run*.txt"))
    print(f"\n{case}: {n_runs} runs x {n_topics} topics x {n_docs} docs, depth {args.depth}, "
          f"{'with' if args.ties else 'no'} tied scores ({sum(p.stat().st_size for p in runs) / 1e6:.0f} MB)")
    src = Path(__file__).resolve().parent.parent / "src"
    cores = str(os.cpu_count())
    tools = [] if args.quick else [("trectools", "trectools", src, None)]
    tools += [("trecbench, 1 core", "trecbench", src, "0"), (f"trecbench, {cores} cores", "trecbench", src, None)]
    if args.before:
        tools.append(("trecbench before, 1 core", "trecbench", Path(args.before).resolve(), "0"))
    key = case_key(n_runs, n_topics, n_docs, args.depth, args.ties)
    rounds: dict[str, list[dict]] = {label: [] for label, *_ in tools}
    pair_sets: dict[str, set[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            shift = r % len(tools)
            for label, tool, tree, pin in tools[shift:] + tools[:shift]:
                pairs = str(Path(tmp) / "pairs")
                cmd = [sys.executable, __file__, "--child", tool, str(args.depth), pairs, *map(str, runs)]
                load = os.getloadavg()[0]
                rec = measure([cmd], {**os.environ, "PYTHONPATH": str(tree)}, pin)
                rec["load"] = round((load + os.getloadavg()[0]) / 2, 1)
                rounds[label].append(rec)
                print(f"  round {r + 1} {label:<26} {rec['cpu']:7.2f} s CPU {rec['wall']:7.1f} s wall "
                      f"{rec['peak_mib']:6.0f} MiB load {rec['load']}", flush=True)
                got = set(Path(pairs).read_text().splitlines())
                if label in pair_sets and pair_sets[label] != got:
                    sys.exit(f"{label} gave another pool in round {r + 1}")
                pair_sets[label] = got
    if not args.quick:
        remember(key, {"cpu": median([x["cpu"] for x in rounds["trectools"]]),
                       "wall": median([x["wall"] for x in rounds["trectools"]]),
                       "peak_mib": max(x["peak_mib"] for x in rounds["trectools"]),
                       "load": median([x["load"] for x in rounds["trectools"]])}, pair_sets["trectools"])
    peer = cached(key)
    print(f"{'tool':<26} {'median CPU s':>12} {'wall s':>8} {'peak MiB':>9} {'loads':>16}")
    for label, recs in rounds.items():
        print(f"{label:<26} {median([x['cpu'] for x in recs]):>12.2f} {median([x['wall'] for x in recs]):>8.1f} "
              f"{max(x['peak_mib'] for x in recs):>9.0f} {' '.join(str(x['load']) for x in recs):>16}")
    ours = pair_sets["trecbench, 1 core"]
    theirs = pair_sets.get("trectools")
    if theirs is None:
        same = peer is not None and pool_digest(ours) == peer["pool_sha256"]
        print(f"pools {'identical' if same else 'DIFFERENT'} (sha256 of the sorted (topic, docid) pairs against "
              f"trectools' stored pool): {len(ours)} candidates")
    elif ours == theirs:
        print(f"pools identical as sets of (topic, docid): {len(ours)} candidates")
    else:
        print(f"pools differ: {len(ours - theirs)} candidates only in trecbench's, {len(theirs - ours)} only in "
              f"trectools' (of {len(ours)}); tie-breaking: trectools docid ascending, trec_eval descending")
    one = [x["cpu"] for x in rounds["trecbench, 1 core"]]
    if args.quick:
        if peer is not None:
            print(f"QUICK MODE, not a figure to quote: trectools' stored {peer['cpu']:.2f} s CPU ({peer['date']}, load "
                  f"{peer['load']}) / trecbench one core, median: {peer['cpu'] / median(one):.1f} (target >= 20)")
    else:
        ratios = [t["cpu"] / o for t, o in zip(rounds["trectools"], one)]
        print(f"trectools / trecbench CPU, one core, per round: {' '.join(f'{x:.1f}' for x in ratios)}; "
              f"median ratio: {median(ratios):.1f} (target >= 20)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="wide,many", help="comma-separated: " + ", ".join(CASES))
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ties", action="store_true", help="round scores to one decimal (many ties)")
    ap.add_argument("--quick", action="store_true", help=f"leave trectools out; use its figure kept in {PEERS.name}")
    ap.add_argument("--before", help="another trecbench src folder, timed beside this one (one core)")
    ap.add_argument("--folder", help="keep the generated runs here (default: a temporary folder)")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        tool, depth, pairs, *runs = args.child
        child(tool, int(depth), pairs, runs)
        return
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"pool_speed: commit {commit()}, {now}, {os.cpu_count()} cores, python {sys.version.split()[0]}")
    for case in args.cases.split(","):
        if args.folder:
            run_case(case, Path(args.folder), args)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                run_case(case, Path(tmp), args)


def commit() -> str:
    import subprocess

    root = Path(__file__).resolve().parent.parent

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False).stdout.strip()

    return git("rev-parse", "--short", "HEAD") + (" (with uncommitted changes)" if git("status", "--porcelain", "src") else "")


if __name__ == "__main__":
    main()
