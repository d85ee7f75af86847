"""Peak RSS of `runs validate` and `qrels validate` on ~100 MB files, beside `eval retrieval` on the same run.

Validation used to hold the whole file as Python objects (9-11x its size, issue 21); it now streams,
keeping what a problem needs, and of a clean file its counts and topics (not its columns). Inputs are benchmarks/read_speed.py's
synthetic run (1,000 documents per topic) and qrels (500 judgments per topic), written once into
`--folder`, plus a copy of the run with a bad score on every 1,000th line (so the line-by-line path
runs and its problems are capped). Each command is its own child process; os.wait4 gives its peak
RSS (whatever its exit status: the bad run's is 2), and the largest peak RSS of `--rounds` runs is printed, with its ratio to the
file's size last.

    PYTHONPATH=src python benchmarks/validate_memory.py [--mb 100] [--rounds 1] [--folder /tmp/trecbench-validate-memory]

Run on 2026-12-01 (2 cores shared, load 5-7), `--mb 100 --rounds 1`, at commit b63825a and, for the
first column, at dd6003f (before issue 21's streaming; PYTHONPATH pointed at that tree), peak MiB:

    command                                        file MB   before   after   after / file
    runs validate                                     96.1      723     256           2.66
    runs validate (a bad score every 1,000 lines)     96.1     1016     125           1.30
    qrels validate                                    94.9     1019     386           4.07
    eval retrieval (unchanged)                        96.1      569     569           5.93

A file with problems is now checked in about the interpreter's own memory (~110 MiB with numpy and
pandas). The run at commit aec656c (the same day and machine, `--mb 100 --rounds 1`), after clean files'
columns stopped being kept, printed: runs validate 115 MiB, qrels validate 119, the bad run 113, eval
retrieval 570 (docs/files.md).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from read_speed import make_qrels, make_run  # noqa: E402


def make_bad_run(clean: Path, path: Path) -> None:
    """The clean run with the score of every 1,000th line replaced by a word (a problem each)."""
    with open(clean, "rb") as src, open(path, "wb") as out:
        for number, line in enumerate(src, 1):
            if number % 1000 == 0:
                fields = line.split()
                fields[4] = b"high"
                line = b" ".join(fields) + b"\n"
            out.write(line)


def peak_mib(cmd: list[str], env: dict) -> float:
    """The child's peak resident set size in MiB (ru_maxrss is in KiB on Linux)."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0  # reaped here, so Popen must not wait for it again
    return usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100, help="size of the run and of the qrels, in MB")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/trecbench-validate-memory"))
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    run, qrels = args.folder / f"run-{args.mb}mb.txt", args.folder / f"qrels-{args.mb}mb.txt"
    bad = args.folder / f"run-{args.mb}mb-bad-scores.txt"
    if not run.exists():
        make_run(run, args.mb)
    if not qrels.exists():
        make_qrels(qrels, args.mb)
    if not bad.exists():
        make_bad_run(run, bad)
    trecbench = [sys.executable, "-m", "trecbench"]
    cases = [
        ("runs validate", [*trecbench, "runs", "validate", str(run)], run),
        ("runs validate (a bad score every 1,000 lines)", [*trecbench, "runs", "validate", str(bad)], bad),
        ("qrels validate", [*trecbench, "qrels", "validate", str(qrels)], qrels),
        ("eval retrieval", [*trecbench, "eval", "retrieval", "--qrels", str(qrels), str(run), "-m", "map"], run),
    ]
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")
    print(f"{'command':<48} {'file MB':>8} {'peak MiB':>9} {'x file':>7}")
    for name, cmd, path in cases:
        peak = max(peak_mib(cmd, env) for _ in range(args.rounds))
        size = path.stat().st_size / 2**20
        print(f"{name:<48} {size:>8.1f} {peak:>9.0f} {peak / size:>7.2f}")


if __name__ == "__main__":
    main()
