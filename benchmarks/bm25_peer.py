"""`trecbench runs bm25` against bm25s called directly, interleaved in one run: CPU seconds, peak RSS, load.

Three programs rank the same generated corpus (benchmarks/bm25_speed.py's generator, seeded) for the same
40 topics, 1,000 hits each, one thread, each in its own process, start-up and reading the corpus included:

  trecbench        `trecbench runs bm25 --corpus C --topics T -o RUN --quiet` (Lucene's analysis in Python,
                   bm25s's `lucene` scoring, the run written in trec_eval order)
  bm25s-own        bm25s as its README calls it: `bm25s.tokenize(texts, stopwords="en", stemmer=porter)`,
                   `BM25(method="lucene").index`, `retrieve(k=1000)`, the run written
  bm25s-same       bm25s called directly with trecbench's terms (`analysis.analyze`): the same tokenisation,
                   so trecbench's cost beyond bm25s's own is what remains

Rounds go A B C A B C ...; each line prints the CPU seconds (user + system of the child), its peak RSS and the
1-minute load when it ran; the median ratios come last, with the top-10 agreement of the two tokenisations.

    python benchmarks/bm25_peer.py [--passages 20000] [--rounds 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bm25_speed import make_corpus  # noqa: E402
from timing import measure  # noqa: E402

# One program for both direct calls of bm25s: argv[1] says whose tokens, argv[2:] the files.
DIRECT = r'''
import json, sys
import numpy as np
import bm25s, Stemmer
how, corpus, topics, out = sys.argv[1:5]
ids, texts = [], []
with open(corpus, encoding="utf-8") as f:
    for line in f:
        d = json.loads(line)
        ids.append(d["id"])
        texts.append((d["title"] + "\n" + d["contents"]) if d["title"] else d["contents"])
queries = [line.rstrip("\n").split("\t", 1) for line in open(topics, encoding="utf-8")]
if how == "own":
    stem = Stemmer.Stemmer("porter")
    corpus_tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stem, show_progress=False)
    query_tokens = bm25s.tokenize([q for _, q in queries], stopwords="en", stemmer=stem, show_progress=False)
else:
    sys.path.insert(0, sys.argv[5])
    from trecbench.runs.baselines.analysis import analyze
    vocab = {}
    docs = [[vocab.setdefault(t, len(vocab)) for t in analyze(text)] for text in texts]
    corpus_tokens = bm25s.tokenization.Tokenized(ids=docs, vocab=vocab)
    query_tokens = [[t for t in analyze(q) if t in vocab] for _, q in queries]
model = bm25s.BM25(k1=0.9, b=0.4, method="lucene")
model.index(corpus_tokens, show_progress=False)
docs, scores = model.retrieve(query_tokens, k=1000, show_progress=False, n_threads=1)
with open(out, "w") as f:
    for (qid, _), row, vals in zip(queries, docs, scores):
        for rank, (d, s) in enumerate(zip(row, vals), 1):
            if s > 0:
                f.write(f"{qid} Q0 {ids[d]} {rank} {s:.6f} bm25s\n")
'''


def top10(path: Path) -> dict[str, set[str]]:
    out: dict[str, list[str]] = {}
    for line in path.open():
        q, _, d, *_ = line.split()
        got = out.setdefault(q, [])
        if len(got) < 10:
            got.append(d)
    return {q: set(v) for q, v in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passages", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        corpus, topics = make_corpus(folder, args.passages)
        script = folder / "direct.py"
        script.write_text(DIRECT)
        runs = {name: folder / f"{name}.txt" for name in ("trecbench", "bm25s-own", "bm25s-same")}
        commands = {
            "trecbench": [sys.executable, "-m", "trecbench", "runs", "bm25", "--corpus", str(corpus), "--topics",
                          str(topics), "-o", str(runs["trecbench"]), "--quiet"],
            "bm25s-own": [sys.executable, str(script), "own", str(corpus), str(topics), str(runs["bm25s-own"])],
            "bm25s-same": [sys.executable, str(script), "same", str(corpus), str(topics), str(runs["bm25s-same"]),
                           str(ROOT / "src")],
        }
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        print(f"{args.passages:,} passages, 40 topics, 1,000 hits, one thread; {args.rounds} interleaved rounds")
        for r in range(args.rounds):
            for name, cmd in commands.items():
                load = os.getloadavg()[0]
                got = measure([cmd], env=env)
                cpu[name].append(got["cpu"])
                print(f"round {r + 1} {name:11s} {got['cpu']:6.2f} s CPU  peak {got['peak_mib']:5.0f} MiB  "
                      f"load {load:.2f}", flush=True)
        medians = {name: statistics.median(v) for name, v in cpu.items()}
        ours, own, same = (top10(runs[n]) for n in ("trecbench", "bm25s-own", "bm25s-same"))
        agree_own = sum(ours.get(q) == own.get(q) for q in ours)
        agree_same = sum(ours.get(q) == same.get(q) for q in ours)
        print(f"top-10 sets equal to trecbench's: bm25s-own on {agree_own} of {len(ours)} topics, "
              f"bm25s-same on {agree_same} of {len(ours)}")
        print("median CPU s: " + ", ".join(f"{n} {v:.2f}" for n, v in medians.items()))
        print(f"ratio trecbench / bm25s-same {medians['trecbench'] / medians['bm25s-same']:.2f}x; "
              f"trecbench / bm25s-own {medians['trecbench'] / medians['bm25s-own']:.2f}x")


if __name__ == "__main__":
    main()
