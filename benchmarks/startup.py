"""Start-up: how soon each command starts working, and what a run with nothing to do costs.

Every command runs in a fresh process (as a user types it), `--repeat` times; the table shows the
smallest and the median of each figure:

  help          `trecbench --help`: CPU seconds
  tiny eval     `trecbench eval retrieval` on 1 run x 3 topics x 3 documents, beside `ir_measures` and
                trec_eval (if `--trec-eval` names a binary): CPU seconds, start-up included
  first line    the model commands on the bundled sample's workspace (`trecbench demo`), against a
                loopback OpenAI-compatible server: seconds of wall time until the command prints the line
                saying what it will do (`judge llm`, `nuggets draft`), and until it ends
  nothing left  `judge llm` again once every candidate is judged: wall and CPU seconds, and whether
                litellm was imported (`python -X importtime`)

Targets: tiny eval <= 0.3 s CPU; first line <= 1 s; nothing left < 2 s and no litellm import.

    python benchmarks/startup.py [--repeat 5] [--trec-eval /path/to/trec_eval]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import measure  # noqa: E402

TRECBENCH = [sys.executable, "-m", "trecbench.cli"]
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(ROOT / "src")}


def first_line(argv: list[str], cwd: Path) -> tuple[float, float, str]:
    """Seconds until the first non-empty line (stdout or stderr) and until the process ends; that line."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    first, line = None, ""
    for text in proc.stdout:
        if first is None and text.strip():
            first, line = time.perf_counter() - start, text.strip()
    if proc.wait():
        sys.exit(f"{' '.join(argv[3:6])} exited {proc.returncode}")
    return first if first is not None else float("nan"), time.perf_counter() - start, line


def imports_litellm(argv: list[str], cwd: Path) -> bool:
    """Whether the command imports litellm (from `python -X importtime`'s trace)."""
    proc = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], cwd=cwd, env=ENV, capture_output=True, text=True,
                          check=False)
    return any(line.rstrip().endswith(" litellm") for line in proc.stderr.splitlines() if line.startswith("import time"))


def grader(body: dict) -> str:
    """The loopback model: grade 2 for every passage, a fact list for a drafting request."""
    text = json.dumps(body)
    if "nugget" in text.lower():
        return json.dumps({"nuggets": ["the first fact", "the second fact"]})
    return json.dumps({"grade": 2})


def row(name: str, values: list[float], unit: str = "s") -> str:
    return f"{name:<48} {min(values):8.2f} {statistics.median(values):8.2f} {unit}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--trec-eval", default=None, help="a trec_eval binary to time beside trecbench")
    args = ap.parse_args()

    from llm_server import LLMServer

    with tempfile.TemporaryDirectory() as tmp, LLMServer() as server:
        server.script(grader)
        folder = Path(tmp)
        (folder / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\nq3 0 d1 1\n")
        (folder / "run.txt").write_text("".join(f"q{t} Q0 d{d} {d} {4 - d} tiny\n" for t in (1, 2, 3) for d in (1, 2, 3)))
        subprocess.run([*TRECBENCH, "demo", "--dir", str(folder / "demo")], env=ENV, check=True, capture_output=True)
        demo = folder / "demo"
        bench = str(demo / "bench")
        model = ["--model", "openai/judge", "--api-base", server.base_url, "--api-key", "x"]

        print(f"{'':<48} {'min':>8} {'median':>8}")
        print(row("trecbench --help, CPU", [measure([[*TRECBENCH, "--help"]], env=ENV)["cpu"] for _ in range(args.repeat)]))
        qrels, run = str(folder / "qrels.txt"), str(folder / "run.txt")
        evals = {"trecbench eval retrieval": [*TRECBENCH, "eval", "retrieval", "-m", "nDCG@10", "-m", "R@100", "-m", "AP",
                                              "--qrels", qrels, run],
                 "ir_measures": [sys.executable, "-m", "ir_measures", qrels, run, "nDCG@10 R@100 AP"]}
        if args.trec_eval:
            evals["trec_eval"] = [args.trec_eval, "-m", "ndcg_cut.10", "-m", "recall.100", "-m", "map", qrels, run]
        for name, argv in evals.items():
            print(row(f"tiny eval, {name}, CPU", [measure([argv], env=ENV)["cpu"] for _ in range(args.repeat)]))

        commands = {
            "judge llm": [*TRECBENCH, "judge", "llm", "-w", bench, *model, "--quiet", "--limit", "20"],
            "nuggets draft": [*TRECBENCH, "nuggets", "draft", "-w", bench, *model, "--dry-run"],
        }
        for name, argv in commands.items():
            firsts, ends = [], []
            for _ in range(args.repeat):
                first, end, line = first_line(argv, demo)
                firsts.append(first)
                ends.append(end)
            print(row(f"{name}: first line, wall", firsts))
            print(row(f"{name}: whole run, wall", ends))
            print(f"  first line: {line[:100]}")

        judge = [*TRECBENCH, "judge", "llm", "-w", bench, *model, "--quiet"]
        subprocess.run(judge, cwd=demo, env=ENV, check=True, capture_output=True)
        runs = [measure([judge], env=ENV) for _ in range(args.repeat)]
        walls, cpus = [m["wall"] for m in runs], [m["cpu"] for m in runs]
        print(row("judge llm, nothing left: wall", walls))
        print(row("judge llm, nothing left: CPU", cpus))
        print(f"judge llm imports litellm: with work {imports_litellm(commands['judge llm'], demo)}, "
              f"with nothing left {imports_litellm(judge, demo)}")
        print(f"load average during the run: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
