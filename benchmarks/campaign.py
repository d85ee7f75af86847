"""A campaign-sized workspace end to end: pool, judge llm --dry-run, qrels import and export, report, release.

300 topics x 30 runs x depth 100 (synthetic, seeded; a topic's runs share documents, as real systems do:
with NOISE 4.0 about 1,700 distinct candidates per topic, ~500k in all)
over a corpus of 1,000,000 passages written as JSONL in a temporary folder. Every step is a `trecbench`
command in its own process, timed end to end, with its CPU time and peak RSS (os.wait4's rusage). The
corpus is only ever read through its byte-offset index: a last step opens the corpus, and a copy of its
first tenth, each in a process of its own, looks up the same passages by id in both and prints the memory
that took and the size of the index, against the size of the file. Another counts the prompt tokens of the
dry run's first calls twice, with litellm.token_counter and with the dry run's own counter, and prints
both times and whether the totals agree.

    python benchmarks/campaign.py [--topics 300 --runs 30 --depth 100 --passages 1000000 --batch 10 --keep DIR]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = 4000  # vocabulary of the generated passages
NOISE = 4.0  # how much the runs disagree about a passage's quality (its own quality ~ gamma(2, 1))


def make_corpus(path: Path, passages: int, seed: int = 11) -> None:
    """`passages` JSONL lines {"id": "p0000001", "contents": ~60 words}, written in chunks."""
    import numpy as np

    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i:04d}" for i in range(WORDS)])
    chunk = 50_000
    with open(path, "w", encoding="utf-8") as f:
        for start in range(0, passages, chunk):
            n = min(chunk, passages - start)
            words = vocab[rng.zipf(1.3, size=(n, 60)) % WORDS]
            f.writelines(f'{{"id": "p{start + i:07d}", "contents": "{" ".join(row)}"}}\n'
                         for i, row in enumerate(words))


def make_topics(path: Path, topics: int) -> list[str]:
    qids = [str(1000 + t) for t in range(topics)]
    path.write_text("".join(f"{q}\tquestion {q} about w{int(q) % WORDS:04d}\n" for q in qids), encoding="utf-8")
    return qids


def make_runs(folder: Path, qids: list[str], runs: int, depth: int, passages: int, seed: int = 7) -> list[Path]:
    """Runs whose top `depth` per topic are drawn from the topic's 4,000 passages by quality + noise."""
    import numpy as np

    rng = np.random.default_rng(seed)
    universe = 4000
    topic_docs = np.stack([rng.choice(passages, size=universe, replace=False) for _ in qids])
    quality = rng.gamma(2.0, 1.0, size=(len(qids), universe))
    scores = np.arange(depth, 0, -1, dtype=np.float64) + 0.5
    paths = []
    for r in range(runs):
        noisy = quality + rng.normal(0, NOISE, size=quality.shape)
        top = np.argsort(-noisy, axis=1, kind="stable")[:, :depth]
        docids = np.take_along_axis(topic_docs, top, axis=1)
        path = folder / f"run{r:02d}.txt"
        with open(path, "w", encoding="utf-8") as f:
            for q, row in zip(qids, docids):
                f.writelines(f"{q} Q0 p{d:07d} {i} {s} run{r:02d}\n" for i, (d, s) in enumerate(zip(row, scores), 1))
        paths.append(path)
    return paths


def make_judgments(path: Path, pool_file: Path, share: int) -> int:
    """Qrels grading every `share`-th pooled candidate (grades 0-3 from a hash): people's judgments, imported."""
    import zlib

    n = 0
    with open(pool_file, encoding="utf-8") as src, open(path, "w", encoding="utf-8") as out:
        lines = (line for line in src if not line.startswith("#"))  # the provenance line
        next(lines)  # the header
        for i, line in enumerate(lines):
            if i % share:
                continue
            qid, docid = line.split("\t", 2)[:2]
            out.write(f"{qid} 0 {docid} {zlib.crc32(f'{qid} {docid}'.encode()) % 4}\n")
            n += 1
    return n


def step(name: str, args: list[str], env: dict, log: Path) -> tuple[float, float, float]:
    """Run `trecbench ARGS` in its own process: (seconds, CPU seconds, peak RSS in MB); exits if it fails."""
    start = time.perf_counter()
    with open(log, "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "trecbench.cli", *args], stdout=out, stderr=out, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"{name}: exit status {code}; see {log}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


# Run in a process of its own: open a corpus, read passages by id, print the peak RSS that took.
LOOKUPS = """
import os, resource, sys
from trecbench.corpus import open_corpus
peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
rss = lambda: int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
before, peak_before = rss(), peak()
corpus = open_corpus(sys.argv[1])
texts = [corpus.get(f"p{i:07d}").text for i in range(0, int(sys.argv[2]), 97)]
index = corpus.path.with_name(corpus.path.name + ".idx").stat().st_size
print(f"{len(corpus):>9,} passages, {index / len(corpus):.1f} B/passage of index ({type(corpus.index).__name__}), "
      f"read {len(texts):,} by id: RSS +{rss() - before:.1f} MB, peak RSS +{peak() - peak_before:.1f} MB")
"""

# Run in a process of its own: the dry run's first calls, their prompt tokens counted by litellm and by
# the dry run's counter (trecbench.llm.cost.PromptCounter), in turns, on the same messages.
COUNTING = """
import sys, time
from trecbench.store import Workspace
from trecbench.llm.cost import PromptCounter
from trecbench.judging.estimate import _litellm
from trecbench.judging.llm import passage_text, plan_tasks
from trecbench.judging.prompts import build_messages, load_prompt
from trecbench.judging.pool import candidates
ws, model = Workspace(sys.argv[1]), sys.argv[2]
tasks, _ = plan_tasks(candidates(ws, None), set(), int(sys.argv[3]))
corpus, topics, prompt = ws.corpus(), ws.topics(), load_prompt(None)
calls = [build_messages(prompt, topics[t.qid].text, [passage_text(corpus.get(d)) for d in t.docids])
         for t in tasks[: int(sys.argv[4])]]
litellm = _litellm()
counter = PromptCounter(model, litellm)
litellm.token_counter(model=model, messages=calls[0])
spent, totals = {"litellm": 0.0, "counter": 0.0}, {"litellm": 0, "counter": 0}
for start in range(0, len(calls), 100):
    for name, count in (("litellm", lambda m: litellm.token_counter(model=model, messages=m)), ("counter", counter)):
        t = time.perf_counter()
        totals[name] += sum(count(m) for m in calls[start:start + 100])
        spent[name] += time.perf_counter() - t
ms = {k: v / len(calls) * 1000 for k, v in spent.items()}
print(f"{len(calls):,} calls: litellm.token_counter {ms['litellm']:.2f} ms a call, the dry run's counter "
      f"{ms['counter']:.2f} ms a call; {totals['counter']:,} tokens, "
      + ("the same total" if totals["litellm"] == totals["counter"] else f"litellm counts {totals['litellm']:,}"))
"""


def python(code: str, args: list, env: dict) -> str:
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, env=env)
    return out.stdout.strip() or out.stderr.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=300)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--passages", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=10, help="passages per call in the dry run")
    parser.add_argument("--judged-share", type=int, default=5, help="import people's grades for every Nth candidate")
    parser.add_argument("--keep", type=Path, default=None, help="build in this folder and keep it")
    args = parser.parse_args()

    root = args.keep or Path(tempfile.mkdtemp(prefix="trecbench-campaign-"))
    root.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    log = root / "commands.log"
    try:
        t = time.perf_counter()
        corpus = root / "corpus.jsonl"
        make_corpus(corpus, args.passages)
        qids = make_topics(root / "topics.tsv", args.topics)
        (root / "runs").mkdir(exist_ok=True)
        runs = make_runs(root / "runs", qids, args.runs, args.depth, args.passages)
        corpus_mb = corpus.stat().st_size / 2**20
        print(f"generated in {time.perf_counter() - t:.1f} s: {args.passages:,} passages ({corpus_mb:.0f} MB JSONL), "
              f"{args.topics} topics, {args.runs} runs x depth {args.depth}")
        ws = root / "bench"
        print(f"{'step':<26}{'seconds':>9}{'CPU s':>8}{'peak RSS MB':>13}", flush=True)

        def timed(name: str, cmd: list[str]) -> None:
            seconds, cpu, rss = step(name, cmd, env, log)
            print(f"{name:<26}{seconds:>9.1f}{cpu:>8.1f}{rss:>13.0f}", flush=True)

        timed("init", ["init", str(ws), "--corpus", str(corpus), "--topics", str(root / "topics.tsv")])
        timed("pool", ["pool", *map(str, runs), "--depth", str(args.depth), "-w", str(ws), "-o", str(root / "pool.tsv")])
        candidates = sum(1 for line in open(root / "pool.tsv", encoding="utf-8") if not line.startswith("#")) - 1
        print(f"  {candidates:,} pooled candidates", flush=True)
        timed(f"judge llm --dry-run -b {args.batch}", ["judge", "llm", "-w", str(ws), "--model", "openai/gpt-4o-mini",
                                                      "--batch", str(args.batch), "--dry-run"])
        judged = make_judgments(root / "people.txt", root / "pool.tsv", args.judged_share)
        timed(f"qrels import ({judged:,})", ["qrels", "import", str(root / "people.txt"), "-w", str(ws), "--judge",
                                              "people", "--kind", "human"])
        timed("qrels export", ["qrels", "export", "-w", str(ws), "-o", str(root / "qrels.txt")])
        timed("report", ["report", "-w", str(ws), "--runs", *map(str, runs), "-o", str(root / "report.html"), "--quiet"])
        timed("release", ["release", "-w", str(ws), "--version", "v1", "-o", str(root / "release-v1")])
        print("dry run's prompt tokens, counted twice:", python(COUNTING, [ws, "openai/gpt-4o-mini", args.batch, 2000],
                                                              env))
        tenth = root / "corpus-tenth.jsonl"
        with open(corpus, "rb") as src, open(tenth, "wb") as out:
            out.writelines(line for _, line in zip(range(args.passages // 10), src))
        print(f"corpus lookups through the offset index ({corpus_mb:.0f} MB file, and its first tenth):")
        for path in (corpus, tenth):
            python("from trecbench.corpus import open_corpus; import sys; open_corpus(sys.argv[1])", [path], env)
            print("  " + python(LOOKUPS, [path, args.passages // 10], env), flush=True)
        print("\n".join(line for line in log.read_text(errors="replace").splitlines() if line.startswith("dry run:")))
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
