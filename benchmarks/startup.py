"""Start-up: how soon each command starts working, and what a run with nothing to do costs.

Every command runs in a fresh process (as a user types it), `--repeat` times; the table shows the
smallest and the median of each figure:

  help          `trecbench --help`: CPU seconds
  tiny eval     `trecbench eval retrieval` on 1 run x 3 topics x 3 documents, beside `ir_measures` and
                trec_eval (if `--trec-eval` names a binary): CPU seconds, start-up included
  first line    the model commands on the bundled sample's workspace (`trecbench demo`), against a
                loopback OpenAI-compatible server: seconds of wall time (and of CPU, read from /proc) until
                the command prints the line saying what it will do (`judge llm`, `nuggets draft --dry-run`,
                `eval answers --assigner llm`), and until it ends
  dry runs      `judge llm --dry-run` and `nuggets draft --dry-run` (openai/gpt-4o-mini, no server): CPU
                seconds, and whether litellm or the openai SDK was imported
  before a call what a model command costs before its first request: CPU seconds of `judge llm` up to the
                import of the model library that sends it (an audit hook stops the process there), and
                the CPU of importing that library (the openai SDK for OpenAI-compatible servers given by
                --api-base, litellm for every other model)
  nothing left  `judge llm` again once every candidate is judged: wall and CPU seconds, and whether
                litellm was imported (`python -X importtime`)

Targets: tiny eval <= 0.3 s CPU; first line <= 1 s; dry runs < 1 s CPU with no model library imported;
nothing left < 2 s and no litellm import. The date, the commit and the load average are printed.

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
sys.path.insert(0, str(ROOT / "tests" / "support"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import measure  # noqa: E402

TRECBENCH = [sys.executable, "-m", "trecbench.cli"]
# Compiled once, as an installed trecbench is (pip writes the .pyc files): into a folder of its own, not the checkout.
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "LITELLM_LOCAL_MODEL_COST_MAP": "True",
       "PYTHONPATH": str(ROOT / "src"), "PYTHONPYCACHEPREFIX": tempfile.mkdtemp(prefix="trecbench-pyc-")}
# `trecbench ARGS` that stops at the first import of a model library and prints its CPU seconds so far.
UNTIL_MODEL_LIBRARY = """
import os, sys, time
def stop(event, args):
    if event == "import" and args[0].partition(".")[0] in ("litellm", "openai", "anthropic", "httpx"):
        print("CPU", time.process_time(), args[0], flush=True)
        os._exit(0)
sys.addaudithook(stop)
from trecbench.cli import cli
cli(sys.argv[1:])
"""


def cpu_so_far(pid: int) -> float:
    """CPU seconds (user + system) a running process has used, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def first_line(argv: list[str], cwd: Path) -> tuple[float, float, str, float]:
    """Seconds until the first non-empty line (stdout or stderr) and until the process ends; that line; the CPU
    seconds the process had used when it printed it (a figure the machine's load inflates less than wall time)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    first, line, cpu = None, "", float("nan")
    for text in proc.stdout:
        if first is None and text.strip():
            first, line = time.perf_counter() - start, text.strip()
            cpu = cpu_so_far(proc.pid)
    if proc.wait():  # the first line is what is measured; a run that then fails is said so
        line = f"{line} [exit {proc.returncode}]"
    return first if first is not None else float("nan"), time.perf_counter() - start, line, cpu


def cpu_before_model_library(argv: list[str], cwd: Path) -> tuple[float, str]:
    """CPU seconds of `trecbench ARGV` up to its first import of a model library, and that library's name."""
    proc = subprocess.run([sys.executable, "-c", UNTIL_MODEL_LIBRARY, *argv], cwd=cwd, env=ENV, capture_output=True,
                          text=True, check=False)
    line = next((x for x in proc.stdout.splitlines() if x.startswith("CPU ")), "")
    if not line:
        sys.exit(f"{' '.join(argv[:2])} imported no model library: {proc.stdout[-300:]}{proc.stderr[-300:]}")
    _, seconds, library = line.split()
    return float(seconds), library


def imports(argv: list[str], cwd: Path) -> list[str]:
    """The model libraries the command imports (from `python -X importtime`'s trace)."""
    proc = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], cwd=cwd, env=ENV, capture_output=True, text=True,
                          check=False)
    names = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time")}
    return sorted(names & {"litellm", "openai", "anthropic", "httpx"})


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
    return f"{name:<52} {min(values):8.2f} {statistics.median(values):8.2f} {unit}"


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

        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=False).stdout.strip() or "?"
        print(f"commit {commit}; {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC; load {os.getloadavg()[0]:.1f}")
        print(f"{'':<52} {'min':>8} {'median':>8}")
        print(row("trecbench --help, CPU", [measure([[*TRECBENCH, "--help"]], env=ENV)["cpu"] for _ in range(args.repeat)]))
        qrels, run = str(folder / "qrels.txt"), str(folder / "run.txt")
        evals = {"trecbench eval retrieval": [*TRECBENCH, "eval", "retrieval", "-m", "nDCG@10", "-m", "R@100", "-m", "AP",
                                              "--qrels", qrels, run],
                 "ir_measures": [sys.executable, "-m", "ir_measures", qrels, run, "nDCG@10 R@100 AP"]}
        if args.trec_eval:
            evals["trec_eval"] = [args.trec_eval, "-m", "ndcg_cut.10", "-m", "recall.100", "-m", "map", qrels, run]
        for name, argv in evals.items():
            print(row(f"tiny eval, {name}, CPU", [measure([argv], env=ENV)["cpu"] for _ in range(args.repeat)]))

        sample = ROOT / "src" / "trecbench" / "sample"
        commands = {
            "judge llm": [*TRECBENCH, "judge", "llm", "-w", bench, *model, "--quiet", "--limit", "20"],
            "nuggets draft": [*TRECBENCH, "nuggets", "draft", "-w", bench, *model, "--dry-run"],
            "eval answers --assigner llm": [*TRECBENCH, "eval", "answers", "--nuggets", str(sample / "nuggets.jsonl"),
                                            str(sample / "answers" / "good.jsonl"), "--assigner", "llm", *model,
                                            "--cache", str(folder / "assign.sqlite")],
        }
        for name, argv in commands.items():
            firsts, ends, cpus = [], [], []
            first_line(argv, demo)  # a first run compiles what the others import
            for _ in range(args.repeat):
                first, end, line, cpu = first_line(argv, demo)
                firsts.append(first)
                ends.append(end)
                cpus.append(cpu)
            print(row(f"{name}: first line, wall", firsts))
            print(row(f"{name}: first line, CPU", cpus))
            print(row(f"{name}: whole run, wall", ends))
            print(f"  first line: {line[:100]}")

        dry = {"judge llm --dry-run": [*TRECBENCH, "judge", "llm", "-w", bench, "--model", "openai/gpt-4o-mini",
                                       "--dry-run"],
               "nuggets draft --dry-run": [*TRECBENCH, "nuggets", "draft", "-w", bench, "--model", "openai/gpt-4o-mini",
                                           "--dry-run"]}
        for name, argv in dry.items():
            print(row(f"{name}: CPU", [measure([argv], env=ENV)["cpu"] for _ in range(args.repeat)]))
            print(f"  {name} imports: {imports(argv, demo) or 'no model library'}")
        for name, argv in {"judge llm, openai SDK (--api-base)": ["judge", "llm", "-w", bench, *model, "--quiet"],
                           "judge llm, litellm (anthropic/...)": ["judge", "llm", "-w", bench, "--model",
                                                                 "anthropic/claude-sonnet-4-5", "--quiet"]}.items():
            got = [cpu_before_model_library(argv, demo) for _ in range(args.repeat)]
            print(row(f"{name}: CPU before {got[0][1]}", [g[0] for g in got]))
        for library, code in {"openai": "import openai", "litellm": "from trecbench.llm._litellm import load; load()"}.items():
            print(row(f"importing {library}, CPU", [measure([[sys.executable, "-c", code]], env=ENV)["cpu"]
                                                    for _ in range(args.repeat)]))

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
