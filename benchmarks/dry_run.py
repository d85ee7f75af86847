"""`trecbench judge llm --dry-run` on a manual-sized workspace: CPU seconds, and where they go (cProfile).

Issue 22's case: a product manual split into ~10,000 passages, 15 questions, a pool of ~870 candidates that
people have judged fully. Builds that workspace in a temporary folder (passages of ~90 words, ids like a
chunker's), then runs the dry run through the CLI, each run in a fresh process as a user runs it (imports
included), `--repeat` times, plain and with `--only-unjudged` (`--plain-only` for a trecbench without it),
and prints the CPU seconds of each run and the functions that took most of the last one.

    python benchmarks/dry_run.py [--passages 10000] [--topics 15] [--depth 58] [--repeat 2] [--top 25]

What it found (issue 22): of the ~7 s of CPU, ~5 s are litellm's import and ~1.7 s its tokenizers'
loading; counting and pricing the 870 calls takes ~0.2 s. A dry run with nothing left to ask (every
pair graded, `--only-unjudged`) now imports neither.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = ("release rollback payment dashboard incident access approval window audit service token retention "
         "backup region failover latency quota invoice customer ledger schedule review escalation owner policy "
         "manual chapter section config parameter default value limit timeout retry cluster node replica").split()


def make_bench(folder: Path, passages: int, topics: int, depth: int) -> Path:
    """A workspace: the corpus, the topics, a depth pool and people's grades of every pooled pair."""
    import pandas as pd

    from trecbench.store import Judge, Judgment, Workspace
    from trecbench.store.workspace import save_pool

    rng = random.Random(22)
    corpus = folder / "corpus.jsonl"
    with corpus.open("w") as out:
        for i in range(passages):
            text = " ".join(rng.choice(WORDS) for _ in range(90))
            out.write(json.dumps({"id": f"manual-p{i // 9:04d}-c{i % 9}", "title": f"Section {i // 9}",
                                  "contents": text}) + "\n")
    tfile = folder / "topics.tsv"
    tfile.write_text("".join(f"q{q}\thow do I configure the {WORDS[q]} {WORDS[q + 1]}?\n" for q in range(topics)))
    ws = Workspace.init(folder / "bench", corpus=str(corpus), topics=str(tfile))
    ids = [f"manual-p{i // 9:04d}-c{i % 9}" for i in range(passages)]
    rows = [(f"q{q}", d, k + 1) for q in range(topics) for k, d in enumerate(rng.sample(ids, depth))]
    frame = pd.DataFrame({"query_id": [q for q, _, _ in rows], "doc_id": [d for _, d, _ in rows],
                          "priority": [p for _, _, p in rows], "group": [None] * len(rows),
                          "representative": [True] * len(rows)})
    save_pool(ws, "depth", "depth", {"depth": depth}, frame)
    person = Judge("human", "alice")
    ws.record_many([Judgment(q, d, rng.randint(0, 3), person) for q, d, _ in rows])
    return ws.path


def dry_run(bench: Path, *options: str, top: int = 0) -> tuple[float, str]:
    """One `judge llm --dry-run` through the CLI in a fresh process: (its CPU seconds, its output and profile)."""
    args = ["judge", "llm", "-w", str(bench), "--model", "openai/gpt-4o-mini", "--dry-run", *options]
    child = subprocess.run([sys.executable, __file__, "--child", str(top), *args], capture_output=True, text=True,
                           check=False)
    if child.returncode != 0:
        sys.exit(f"the dry run failed ({child.returncode}): {child.stdout}{child.stderr}")
    seconds, _, rest = child.stdout.partition("\n")
    return float(seconds), rest + child.stderr


def child(top: int, args: list[str]) -> None:
    """In the fresh process: the CLI under cProfile; prints the CPU seconds, then the output and profile."""
    from click.testing import CliRunner

    profile = cProfile.Profile()
    started = time.process_time()
    profile.enable()
    from trecbench.cli import cli

    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    profile.disable()
    seconds = time.process_time() - started
    text = io.StringIO()
    if top:
        pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(top)
    print(f"{seconds:.3f}\n{result.output.rstrip()}\n{text.getvalue()}")
    sys.exit(result.exit_code)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        return child(int(sys.argv[2]), sys.argv[3:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=10_000)
    parser.add_argument("--topics", type=int, default=15)
    parser.add_argument("--depth", type=int, default=58)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--plain-only", action="store_true", help="no --only-unjudged runs (an older trecbench)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        built = time.perf_counter()
        bench = make_bench(Path(tmp), args.passages, args.topics, args.depth)
        print(f"workspace: {args.passages} passages, {args.topics} topics, {args.topics * args.depth} pooled pairs "
              f"judged by people ({time.perf_counter() - built:.1f}s to build)")
        for options in [()] if args.plain_only else [(), ("--only-unjudged",)]:
            name = " ".join(("--dry-run", *options))
            output = ""
            for i in range(args.repeat):
                seconds, output = dry_run(bench, *options, top=args.top if i == args.repeat - 1 else 0)
                print(f"{name}, run {i + 1}: {seconds:.2f} s CPU")
            print(output.rstrip() + "\n")


if __name__ == "__main__":
    main()
