"""The dry runs (`judge llm --dry-run`, `nuggets draft --dry-run`): CPU seconds, peak RSS, and what litellm cost them.

Each dry run runs in a fresh process as a user types it (imports included), interleaved with the same
dry run in a process that imports litellm first (what every dry run paid before the counts and prices
were read without it: litellm's import and its tokenizer loading), A B A B, `--rounds` times. Each row
prints CPU seconds and peak RSS, and the load average when it ran; the summary gives the medians and
the median ratio (with litellm / without) last.

The workspace is the sample benchmark's (`trecbench demo`), or with `--manual` issue 22's case: a product
manual split into ~10,000 passages, 15 questions, a pool of ~870 candidates that people judged fully
(passages of ~90 words, ids like a chunker's). `--profile N` prints the N functions that took most of
one more dry run (cProfile, cumulative).

    python benchmarks/dry_run.py [--rounds 3] [--manual [--passages 10000 --topics 15 --depth 58]] [--profile 25]
    python benchmarks/dry_run.py --rounds 3 --against ../main/src    # and another tree's code in each round (A B C)
    python benchmarks/dry_run.py --chars    # the error of the count without tiktoken (~4 characters a token)

What it found (issue 22): of the ~7 s of CPU a dry run took, ~5 s were litellm's import and ~1.7 s its
tokenizers' loading; counting and pricing the 870 calls took ~0.2 s. Then a dry run imported neither
litellm nor a provider's SDK; what was left was Python, pandas (~0.5 s) and tiktoken's o200k_base
encoding (~0.3 s, for OpenAI's models; cl100k_base ~0.15 s), then the counting.

Issue 27: the dry runs of `judge llm` (ranked pools), `judge support` and `nuggets draft` import no pandas
(nor pyarrow) either: the pool, the judgments and the grades are read as rows (`judge llm --audit` and
`judge holes` still read frames). On 2026-12-02 03:04-03:07 UTC (load 7.5-11, so CPU seconds run high),
against main's code interleaved: 3.00 -> 2.01 s (judge llm, gpt-4o-mini), 2.08 -> 1.23 s (claude, batch 5),
2.32 -> 1.47 s (nuggets draft), peak RSS 209 -> 125 MiB. What is left: Python, click, numpy (the corpus
index) and trecbench's modules (0.70 s of imports in all at load ~8, `python -X importtime`), loading
o200k_base (0.53 s at load 12), and the counting (0.085 s for the demo's 637 prompts in one process at
load 12; 0.145 s while each call's request was still looked up in an empty cache).

Then `judge llm --dry-run` made neither the client nor asyncio (ModelConfig in llm.config, the cache key from
llm.request without a client). `--against` main's src (b8a6945), commit c620721, 2026-12-02 03:51-03:54 UTC,
load 3.7-6.7, medians of 3: judge llm (gpt-4o-mini) 1.52 -> 1.34 s (1.13x), claude batch 5 1.02 -> 1.09 s
(0.93x: the rounds spread 0.88-1.16 s, within the noise), nuggets draft (which needs the client) 1.50 -> 1.49 s.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import measure  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# Compiled once, as an installed trecbench is (pip writes the .pyc files): into a folder of its own, not the checkout.
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "LITELLM_LOCAL_MODEL_COST_MAP": "True",
       "PYTHONPATH": str(ROOT / "src"), "PYTHONPYCACHEPREFIX": tempfile.mkdtemp(prefix="trecbench-pyc-")}
PLAIN = "import sys\nfrom trecbench.cli import cli\ncli(sys.argv[1:])\n"
# the same command after litellm's import, as every dry run paid it before (trecbench's own loader: offline, quiet)
WITH_LITELLM = "import sys\nfrom trecbench.llm._litellm import load\nload()\nfrom trecbench.cli import cli\ncli(sys.argv[1:])\n"

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


def commands(bench: Path, manual: bool) -> dict[str, list[str]]:
    """The dry runs measured, by name."""
    judge = ["judge", "llm", "-w", str(bench), "--dry-run"]
    out = {"judge llm --dry-run (openai/gpt-4o-mini)": [*judge, "--model", "openai/gpt-4o-mini"],
           "judge llm --dry-run --batch 5 (anthropic/claude-sonnet-4-5)": [*judge, "--model",
                                                                          "anthropic/claude-sonnet-4-5", "--batch", "5"]}
    if manual:
        out["judge llm --dry-run --only-unjudged"] = [*judge, "--model", "openai/gpt-4o-mini", "--only-unjudged"]
    else:
        out["nuggets draft --dry-run (openai/gpt-4o-mini)"] = ["nuggets", "draft", "-w", str(bench), "--model",
                                                               "openai/gpt-4o-mini", "--dry-run"]
    return out


def run(code: str, args: list[str], src: str | None = None) -> dict:
    """One dry run in a fresh process: CPU seconds, peak RSS (MiB), wall; the load average as it ended.
    `src`: another tree's `src` folder to import trecbench from (`--against`)."""
    got = measure([[sys.executable, "-c", code, *args]], env=ENV if src is None else {**ENV, "PYTHONPATH": src})
    got["load"] = os.getloadavg()[0]
    if "dry run: " not in got["out"][0]:
        sys.exit(f"not a dry run's output: {got['out'][0][:300]}")
    return got


def profile(args: list[str], top: int) -> str:
    """The functions that took most of one dry run in this process (imports included)."""
    from click.testing import CliRunner

    prof = cProfile.Profile()
    prof.enable()
    from trecbench.cli import cli

    CliRunner().invoke(cli, args, catch_exceptions=False)
    prof.disable()
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(top)
    return text.getvalue()


def chars_error() -> None:
    """How far one token per CHARS_PER_TOKEN characters (the count without tiktoken) is from the tokenizer's
    count, on the judge's prompts for the sample's runs (depth 5), one and ten passages a call."""
    from trecbench.corpus import open_corpus
    from trecbench.judging.llm import passage_text, plan_tasks
    from trecbench.judging.prompts import build_messages, load_prompt
    from trecbench.llm import tokens
    from trecbench.pooling import build_pool
    from trecbench.topics import read_topics

    sample = ROOT / "src" / "trecbench" / "sample"
    corpus = open_corpus(sample / "corpus.jsonl", cache_index=False)
    topics = {t.qid: t for t in read_topics(sample / "topics.tsv")}
    pool = build_pool(sorted((sample / "runs").glob("*.txt")), depth=5).to_judge()
    for batch in (1, 10):
        tasks, _ = plan_tasks(pool, set(), batch)
        calls = [build_messages(load_prompt(None), topics[t.qid].text, [passage_text(corpus.get(d)) for d in t.docids])
                 for t in tasks]
        for model in ("openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5"):
            exact = [tokens.count_messages(model, c) for c in calls]
            rough = [sum(tokens.message_tokens(model, m, tokens.approximate_tokens) for m in c) + tokens.REPLY_PRIMER
                     for c in calls]
            count = tokens.text_counter(model)
            ratio = sum(len(m["content"]) for c in calls for m in c) / sum(count(m["content"]) for c in calls for m in c)
            errors = [r / e - 1 for r, e in zip(rough, exact)]
            print(f"batch {batch:>2}, {model} ({tokens.encoding_name(model)}): {len(calls)} calls, {ratio:.2f} "
                  f"characters a token; {tokens.CHARS_PER_TOKEN} a token counts {sum(rough) / sum(exact) - 1:+.1%} "
                  f"in all, {min(errors):+.1%} to {max(errors):+.1%} a call")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--manual", action="store_true", help="issue 22's manual-sized workspace, not the demo's")
    parser.add_argument("--passages", type=int, default=10_000)
    parser.add_argument("--topics", type=int, default=15)
    parser.add_argument("--depth", type=int, default=58)
    parser.add_argument("--profile", type=int, default=0, help="print the N costliest functions of one more run")
    parser.add_argument("--chars", action="store_true", help="only the error of the count without tiktoken")
    parser.add_argument("--against", metavar="SRC", help="another tree's src folder (e.g. main's), run in each round "
                                                         "too: its CPU seconds / this tree's printed last")
    args = parser.parse_args()
    if args.chars:
        return chars_error()
    with tempfile.TemporaryDirectory() as tmp:
        built = time.perf_counter()
        if args.manual:
            bench = make_bench(Path(tmp), args.passages, args.topics, args.depth)
            what = f"{args.passages} passages, {args.topics} topics, {args.topics * args.depth} pooled pairs judged by people"
        else:
            subprocess.run([sys.executable, "-m", "trecbench", "demo", "--dir", str(Path(tmp) / "demo"), "--quiet"],
                           env=ENV, check=True, capture_output=True)
            bench = Path(tmp) / "demo" / "bench"
            what = "the sample benchmark (trecbench demo)"
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=False).stdout.strip() or "?"
        print(f"workspace: {what} ({time.perf_counter() - built:.1f}s to build); commit {commit}; "
              f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC; {args.rounds} rounds, A B A B")
        print(f"{'':<62} {'CPU s':>7} {'RSS MiB':>8} {'load':>5}")
        summary = []
        for name, argv in commands(bench, args.manual).items():
            plain, heavy, other = [], [], []
            run(WITH_LITELLM, argv)  # a first run compiles what the others import
            if args.against:
                run(PLAIN, argv, args.against)
            for _ in range(args.rounds):
                plain.append(run(PLAIN, argv))
                heavy.append(run(WITH_LITELLM, argv))
                if args.against:
                    other.append(run(PLAIN, argv, args.against))
            for label, rows in (("now", plain), ("litellm imported", heavy), ("against", other)):
                for r in rows:
                    print(f"{name + ', ' + label:<62} {r['cpu']:7.2f} {r['peak_mib']:8.0f} {r['load']:5.1f}")
            print("  " + plain[-1]["out"][0].strip().splitlines()[-1][:160])
            ratio = statistics.median(h["cpu"] / p["cpu"] for p, h in zip(plain, heavy))
            versus = (statistics.median(o["cpu"] for o in other), statistics.median(o["peak_mib"] for o in other),
                      statistics.median(o["cpu"] / p["cpu"] for p, o in zip(plain, other))) if other else None
            summary.append((name, statistics.median(p["cpu"] for p in plain),
                            statistics.median(p["peak_mib"] for p in plain),
                            statistics.median(h["cpu"] for h in heavy), ratio, versus))
        print("\nmedians: CPU s now | peak RSS MiB now | CPU s with litellm | ratio (with litellm / now)"
              + (f" | against {args.against}: CPU s | peak RSS MiB | ratio (against / now)" if args.against else ""))
        for name, cpu, rss, heavy_cpu, ratio, versus in summary:
            tail = f"   {versus[0]:6.2f} {versus[1]:6.0f}   {versus[2]:.2f}x" if versus else ""
            print(f"  {name:<60} {cpu:6.2f} {rss:6.0f} {heavy_cpu:6.2f}   {ratio:.1f}x{tail}")
        print(f"load average: {os.getloadavg()[0]:.1f}")
        if args.profile:
            print(profile(next(iter(commands(bench, args.manual).values())), args.profile))


if __name__ == "__main__":
    main()
