"""`-m all_trec` cost: trecbench's CLI vs trec_eval 9.0.8 on every measure family, output compared byte for byte.

Cases (eval_speed.py's synthetic data: scores rounded to two decimals, 300 graded judgments per topic):
  one      1 run x 500 topics x 1,000 documents
  mid      20 runs x 500 topics x 1,000 documents
trec_eval runs once per run file (`trec_eval [-q] -m all_trec qrels run`), trecbench once for all of
them (`trecbench eval retrieval --format trec_eval -m all_trec [-q] --threads 1`, and with one thread
per core). The tools run interleaved for `--repeat` rounds; each round prints every tool's CPU seconds
(user + system of the child, start-up included), peak RSS and the load average beside it; then the
medians, and last trec_eval's median ratio of CPU seconds to trecbench's within a round (above 1:
trecbench is cheaper). Every round's output of trecbench is checked to be trec_eval's, run by run.

    python benchmarks/all_trec_speed.py [--cases one,mid] [--repeat 5] [-q] [--data DIR]

Where the time goes (cProfile and per-family process_time on the `one` case, see docs/speed.md):
the measures took 0.19 s CPU, 0.11 s of it Rndcg's walk topic by topic in Python; now they take
about 0.06 s (Rndcg over all topics at once, bpref, infAP, G and binG computed only at the documents
that add a term, shared arrays computed once). What is left is start-up (python, numpy, click:
about 0.15 s), reading the run (files/columns.py) and ranking it (ties sorted by docid).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from eval_speed import child_env, commit, interleaved, make_data, median_ratios, trec_eval_binary

CASES = {"one": (1, 500, 1000), "mid": (20, 500, 1000)}


def case_files(root: Path, case: str) -> tuple[Path, list[Path]]:
    """The case's qrels and runs, made (seeded) under `root` unless already there."""
    n_runs, n_topics, n_docs = CASES[case]
    folder = root / f"all_trec_{case}"
    if (folder / "done").exists():
        return folder / "qrels.txt", [folder / f"run{r:02d}.txt" for r in range(n_runs)]
    folder.mkdir(parents=True, exist_ok=True)
    qrels, runs = make_data(folder, n_runs, n_topics, n_docs)
    (folder / "done").write_text("made\n")
    return qrels, runs


def tools(qrels: Path, runs: list[Path], trec_eval: Path, per_topic: bool) -> dict[str, list[list[str]]]:
    q = ["-q"] if per_topic else []
    tb = [sys.executable, "-m", "trecbench.cli", "eval", "retrieval", "--qrels", str(qrels), *map(str, runs),
          "-m", "all_trec", *q, "--format", "trec_eval", "--quiet"]
    return {
        "trec_eval 9.0.8": [[str(trec_eval), *q, "-m", "all_trec", str(qrels), str(r)] for r in runs],
        "trecbench, 1 thread": [tb + ["--threads", "1"]],
        f"trecbench, {os.cpu_count()} threads": [tb],
    }


def by_run(text: str) -> dict[str, str]:
    """trec_eval's output of one or more runs, split into each run's lines: its per-topic lines (-q) then its
    `all` lines, which include its runid."""
    blocks: dict[str, str] = {}
    current: list[str] = []
    runid = None
    for line in text.splitlines(keepends=True):
        summary = line.split("\t")[1] == "all"
        next_run = not summary or line.startswith("runid ")  # the next run's first per-topic line, or its runid
        if current and next_run and runid is not None:
            blocks[runid], current, runid = "".join(current), [], None
        if summary and line.startswith("runid "):
            runid = line.split()[-1]
        current.append(line)
    if runid is not None:
        blocks[runid] = "".join(current)
    return blocks


def check_identical(results: dict[str, list[dict]]) -> None:
    """Every round's trecbench output is trec_eval's, byte for byte, run by run (trecbench lists the runs
    best first; trec_eval prints one run per process)."""
    theirs: dict[str, str] = {}
    for text in results["trec_eval 9.0.8"][0]["out"]:
        theirs.update(by_run(text))
    for tool, recs in results.items():
        if tool.startswith("trecbench"):
            for rec in recs:
                if by_run(rec["out"][0]) != theirs:
                    raise SystemExit(f"{tool}'s output differs from trec_eval's")
    print(f"trecbench's output is trec_eval's, byte for byte, in every round ({len(theirs)} runs)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="one,mid", help="comma-separated: " + ", ".join(CASES))
    ap.add_argument("--repeat", type=int, default=5, help="interleaved rounds (at least 3 for a figure)")
    ap.add_argument("-q", "--per-topic", action="store_true", help="per-topic values too (trec_eval -q)")
    ap.add_argument("--data", default=None, help="keep the generated files here and reuse them")
    args = ap.parse_args()
    env = child_env()
    print(f"all_trec_speed {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit()}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}{', -q' if args.per_topic else ''}")
    with tempfile.TemporaryDirectory() as tmp:
        trec_eval = trec_eval_binary(Path(tmp))
        for case in args.cases.split(","):
            qrels, runs = case_files(Path(args.data or tmp), case)
            n_runs, n_topics, n_docs = CASES[case]
            print(f"\n{case}: {n_runs} runs x {n_topics} topics x {n_docs} docs, -m all_trec", flush=True)
            results = interleaved(tools(qrels, runs, trec_eval, args.per_topic), env, args.repeat)
            check_identical(results)
            median_ratios(results, "trecbench, 1 thread")


if __name__ == "__main__":
    main()
