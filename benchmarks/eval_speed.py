"""Retrieval evaluation cost: trecbench's CLI vs trec_eval 9.0.8, pytrec_eval (with its parsing), ir-measures.

Cases (synthetic, seeded: scores rounded to two decimals, so many ties; 300 graded judgments per topic):
  mid      20 runs x 500 topics x 1,000 documents
  marco    5 runs x 6,980 topics x 1,000 documents (MS MARCO dev scale)
  small    1 run x 50 topics x 1,000 documents (start-up and reading dominate)
  tiny     1 run x 3 topics x 3 documents (start-up only)
Measures nDCG@10, R@100, AP. Each tool runs in its own process, timed end to end (start-up, reading
every file, scoring every run) by /usr/bin/time: CPU seconds (user + system of the child) and peak
RSS. trecbench runs twice: with one thread (`--threads 1`) and with one per core. The tools run
interleaved (A B C ... A B C ...) for `--repeat` rounds; each round prints every tool's CPU, peak RSS
and the load average beside it, then the medians, and last each tool's median ratio of CPU seconds
to trecbench's (one thread) within a round: on a shared machine absolute times are inflated by the
load, ratios within a round are what to compare. Byte code is compiled before the first round (as
an installed package has it), so no tool pays for compiling.

    python benchmarks/eval_speed.py [--cases mid,marco,small] [--repeat 3] [--tools trec_eval,pytrec_eval,trecbench]
        [--data DIR]   # keep the generated files in DIR and reuse them (marco's take minutes to write)

Where the time and the bytes went before 2026-12-02 (docs/speed.md has the current profile, -m all_trec's
included). On one 500-topic run of 500k lines (cProfile and per-step
process_time; pytrec_eval reads and scores it in about 0.7 s CPU): pandas' factorize on Arrow
strings and pyarrow's CSV reader used to cost 0.6 s and pandas' import 0.7 s; now splitting the
bytes into fields and parsing scores takes 0.20 s, the duplicate (topic, docid) check 0.04 s,
sorting (only tied rows are sorted by docid) 0.09 s, the qrels lookup through a hash table 0.03 s,
the measures 0.07 s. Start-up (python, click, numpy with one OpenBLAS thread) is about 0.25 s CPU.
On one MS MARCO-scale run (6.98M lines; 2.09M qrels lines), per step: reading the qrels 1.0 s and
indexing them 1.1 s, reading the run 3.3 s (of which the duplicate check 0.7 s), ranking and
measuring it in blocks of topics 1.7 s. Its memory (tracemalloc) was: qrels columns 66 MiB and
their index 113 MiB, the run's columns 213 MiB, then 213 MiB more for the duplicate check's keys of
all lines at once, 53 MiB for the lines of each block of topics, and 250 MiB per block of 1M lines
(74 MiB of it docid strings no measure reads): 772 MiB at the peak, 1.6 GiB with two runs in
flight. Now the duplicate check takes a stretch of 1M lines of whole topics at a time, a block is a
stretch of the file (a view, when each topic's lines are together, as runs are written) of 256k
lines, and docids are not copied as strings: the peak is 417 MiB traced, 485 MiB RSS for 5 runs on
one thread, 795 MiB on two.
"""
from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from timing import measure

MEASURES = ["nDCG@10", "R@100", "AP"]
TREC_EVAL = {"nDCG@10": "ndcg_cut_10", "R@100": "recall_100", "AP": "map"}
CASES = {"mid": (20, 500, 1000), "marco": (5, 6980, 1000), "small": (1, 50, 1000), "tiny": (1, 3, 3)}
ROOT = Path(__file__).resolve().parent.parent


def make_data(folder: Path, runs: int, topics: int, docs: int, seed: int = 13) -> tuple[Path, list[Path]]:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    rng = np.random.default_rng(seed)
    corpus = 200_000
    judged = min(300, docs)

    def write(path: Path, columns: dict) -> None:
        pcsv.write_csv(pa.table(columns), path, pcsv.WriteOptions(include_header=False, delimiter=" ",
                                                                   quoting_style="none"))

    def docids(numbers: np.ndarray):
        return pc.binary_join_element_wise("doc", pc.cast(pa.array(numbers.ravel()), pa.string()), "")

    qids = pc.cast(pa.array(np.arange(1000, 1000 + topics)), pa.string())
    qrels = folder / "qrels.txt"
    picked = np.stack([rng.choice(corpus, size=judged, replace=False) for _ in range(topics)])
    write(qrels, {"qid": qids.take(pa.array(np.repeat(np.arange(topics), judged))), "iter": ["0"] * picked.size,
                  "docid": docids(picked), "grade": rng.choice([0, 0, 0, 1, 1, 2, 3], size=picked.size)})
    paths = []
    for r in range(runs):
        ids = np.stack([rng.choice(corpus, size=docs, replace=False) for _ in range(topics)])
        # scores rounded to 2 decimals: many ties, broken by docid as trec_eval does
        scores = np.round(-np.sort(-rng.gamma(2.0, 2.0, size=(topics, docs)), axis=1), 2)
        path = folder / f"run{r:02d}.txt"
        write(path, {"qid": qids.take(pa.array(np.repeat(np.arange(topics), docs))), "q0": ["Q0"] * ids.size,
                     "docid": docids(ids), "rank": np.tile(np.arange(1, docs + 1), topics), "score": scores.ravel(),
                     "tag": [f"run{r:02d}"] * ids.size})
        paths.append(path)
    return qrels, paths


def trec_eval_binary(work: Path) -> Path:
    """/work/bin/trec_eval-9.0.8 if present, else built from the shared source tarball."""
    for given in (os.environ.get("TREC_EVAL"), "/work/bin/trec_eval-9.0.8"):
        if given and Path(given).is_file():
            return Path(given)
    tarball = ROOT.parent / "shared" / "tools" / "trec_eval-9.0.8-src.tar.gz"
    with tarfile.open(tarball) as tar:
        tar.extractall(work, filter="data")
    subprocess.run(["make", "-C", str(work / "te908")], check=True, capture_output=True)
    return work / "te908" / "trec_eval"


PYTREC_EVAL = """
import json, sys, pytrec_eval
qrels, *runs = sys.argv[1:]
with open(qrels) as f:
    q = pytrec_eval.parse_qrel(f)
evaluator = pytrec_eval.RelevanceEvaluator(q, {"ndcg_cut.10", "recall.100", "map"})
out = {}
for path in runs:
    with open(path) as f:
        per_topic = evaluator.evaluate(pytrec_eval.parse_run(f))
    n = len(per_topic)
    out[path] = {m: sum(v[k] for v in per_topic.values()) / n for m, k in %r.items()}
print(json.dumps(out))
""" % TREC_EVAL

IR_MEASURES = """
import json, sys, ir_measures
qrels, *runs = sys.argv[1:]
measures = [ir_measures.parse_measure(m) for m in %r]
q = list(ir_measures.read_trec_qrels(qrels))
out = {}
for path in runs:
    agg = ir_measures.calc_aggregate(measures, q, ir_measures.read_trec_run(path))
    out[path] = {str(m): float(v) for m, v in agg.items()}
print(json.dumps(out))
""" % MEASURES


def tools(qrels: Path, runs: list[Path], trec_eval: Path) -> dict[str, list[list[str]]]:
    py = sys.executable
    tb = [py, "-m", "trecbench.cli", "eval", "retrieval", "--qrels", str(qrels), *map(str, runs),
          *[a for m in MEASURES for a in ("-m", m)], "--format", "json", "--quiet"]
    return {
        "trec_eval 9.0.8": [[str(trec_eval), "-m", "ndcg_cut.10", "-m", "recall.100", "-m", "map", str(qrels), str(r)]
                            for r in runs],
        "pytrec_eval": [[py, "-c", PYTREC_EVAL, str(qrels), *map(str, runs)]],
        "ir_measures": [[py, "-c", IR_MEASURES, str(qrels), *map(str, runs)]],
        "trecbench, 1 thread": [tb + ["--threads", "1"]],
        f"trecbench, {os.cpu_count()} threads": [tb],
    }


def means(tool: str, outputs: list[str], runs: list[Path]) -> dict[str, dict[str, float]]:
    """{run stem: {measure: mean}} from each tool's output."""
    if tool.startswith("trec_eval"):
        got = {}
        for run, text in zip(runs, outputs):
            fields = [line.split() for line in text.splitlines()]
            values = {f[0]: float(f[2]) for f in fields if f[0] in TREC_EVAL.values()}
            got[run.stem] = {m: values[k] for m, k in TREC_EVAL.items()}
        return got
    data = json.loads(outputs[0])
    if tool.startswith("trecbench"):
        return {r["run"]: {m: r["all"][m] for m in MEASURES} for r in data}
    return {Path(k).stem: v for k, v in data.items()}


def case_data(root: Path, case: str, keep: bool) -> tuple[Path, list[Path]]:
    """The case's qrels and runs under `root`: made (seeded), or reused when `keep` and already there."""
    n_runs, n_topics, n_docs = CASES[case]
    folder = root / case
    runs = [folder / f"run{r:02d}.txt" for r in range(n_runs)]
    if keep and (folder / "done").exists():
        return folder / "qrels.txt", runs
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    qrels, runs = make_data(folder, n_runs, n_topics, n_docs)
    (folder / "done").write_text(f"made in {time.perf_counter() - t0:.0f} s\n")
    return qrels, runs


def child_env() -> dict[str, str]:
    """The environment every tool runs in: trecbench from this tree, byte code as an installed package has it."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(ROOT / "src")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    compileall.compile_dir(str(ROOT / "src"), quiet=1)
    return env


def interleaved(chosen: dict[str, list[list[str]]], env: dict, rounds: int) -> dict[str, list[dict]]:
    """Each tool once per round, in turn (A B C, A B C ...); a row per tool and round as it ends."""
    print(f"{'round':>5} {'tool':<24} {'CPU s':>8} {'wall s':>8} {'peak MiB':>9} {'load':>5}", flush=True)
    results: dict[str, list[dict]] = {tool: [] for tool in chosen}
    for i in range(rounds):
        for tool, argv in chosen.items():
            load = os.getloadavg()[0]
            rec = measure(argv, env)
            rec["load"] = round((load + os.getloadavg()[0]) / 2, 1)
            results[tool].append(rec)
            print(f"{i + 1:>5} {tool:<24} {rec['cpu']:>8.2f} {rec['wall']:>8.2f} {rec['peak_mib']:>9.0f} "
                  f"{rec['load']:>5}", flush=True)
    print("medians:")
    for tool, recs in results.items():
        print(f"{'':>5} {tool:<24} {statistics.median(r['cpu'] for r in recs):>8.2f} "
              f"{statistics.median(r['wall'] for r in recs):>8.2f} "
              f"{statistics.median(r['peak_mib'] for r in recs):>9.0f} "
              f"{statistics.median(r['load'] for r in recs):>5}")
    return results


def median_ratios(results: dict[str, list[dict]], base: str) -> None:
    """Each tool's CPU over `base`'s, per round, and their median (printed last)."""
    for tool, recs in results.items():
        if tool == base:
            continue
        ratios = [rec["cpu"] / ours["cpu"] for rec, ours in zip(recs, results[base])]
        rss = statistics.median(rec["peak_mib"] / ours["peak_mib"] for rec, ours in zip(recs, results[base]))
        print(f"{tool} / {base}: CPU x{statistics.median(ratios):.2f} median of {len(ratios)} rounds "
              f"({', '.join(f'{r:.2f}' for r in ratios)}), peak RSS x{rss:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="mid,marco,small", help="comma-separated: " + ", ".join(CASES))
    ap.add_argument("--repeat", type=int, default=3, help="interleaved rounds (at least 3 for a figure)")
    ap.add_argument("--tools", default="", help="comma-separated prefixes of the tools to run (default: all); "
                    "trecbench on one thread always runs")
    ap.add_argument("--data", default=None, help="keep the generated files here and reuse them")
    args = ap.parse_args()
    env = child_env()
    wanted = [t for t in args.tools.split(",") if t]
    base = "trecbench, 1 thread"
    print(f"eval_speed {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit()}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        trec_eval = trec_eval_binary(Path(tmp))
        for case in args.cases.split(","):
            qrels, runs = case_data(Path(args.data or tmp), case, args.data is not None)
            mb = sum(p.stat().st_size for p in runs) / 1e6
            n_runs, n_topics, n_docs = CASES[case]
            print(f"\n{case}: {n_runs} runs x {n_topics} topics x {n_docs} docs ({mb:.0f} MB of runs)", flush=True)
            chosen = {tool: argv for tool, argv in tools(qrels, runs, trec_eval).items()
                      if not wanted or tool == base or tool.startswith(tuple(wanted))}
            results = interleaved(chosen, env, args.repeat)
            ours = means(base, results[base][-1]["out"], runs)
            for tool, recs in results.items():
                worst = max(abs(values[m] - ours[run][m]) for run, values in means(tool, recs[-1]["out"], runs).items()
                            for m in MEASURES)
                note = " (it prints 4 decimals)" if tool.startswith("trec_eval") else ""
                print(f"largest difference of {tool}'s means from trecbench's: {worst:.1e}{note}")
            median_ratios(results, base)
            if args.data is None:
                shutil.rmtree(Path(tmp) / case)


def commit() -> str:
    """The commit of this tree (with `+` when it has changes), for the figures quoted from a run."""
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True)
    return head.stdout.strip() + ("+" if dirty.stdout.strip() else "")


if __name__ == "__main__":
    main()
