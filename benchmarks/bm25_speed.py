"""BM25 indexing speed of the bm25s backend, and agreement of the bm25s and pyserini rankings.

The corpus is generated (seeded) from the bundled sample's vocabulary: passages of 30-90 words drawn
with a Zipf-like law from the sample's words, with the sample's punctuation, numbers, possessives and
abbreviations (so the analyzer meets what it meets in real text), plus one made-up word in twenty so the
vocabulary keeps growing. 40 topics are drawn the same way. The script times, in this process:
analysing the passages (`analysis.analyze`), bm25s's indexing of the terms, and searching; it prints
passages per second (analysis and indexing together, CPU and wall time, one thread) and peak RSS.

With `--pyserini` (pyserini installed, see DEVELOPERS.md) it also indexes the same corpus with Lucene
and compares the two runs per topic: top-10 sets equal on N of M topics, same order, and the largest
score difference at the same document.

With `--save RUN` the bm25s run is written to RUN, and with `--against RUN` it is compared line for line
with a run saved earlier (to show a change left the rankings unchanged).

    python benchmarks/bm25_speed.py [--passages 50000] [--pyserini] [--save run.txt | --against run.txt]
"""
from __future__ import annotations

import argparse
import json
import random
import re
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


def make_corpus(folder: Path, passages: int, topics: int = 40, seed: int = 5) -> tuple[Path, Path]:
    sample = ROOT / "src" / "trecbench" / "sample" / "corpus.jsonl"
    text = " ".join(json.loads(line)["contents"] for line in sample.open(encoding="utf-8"))
    tokens = re.findall(r"\S+", text)
    rnd = random.Random(seed)
    weights = [1.0 / (rank + 1) for rank in range(len(tokens))]
    rnd.shuffle(tokens)

    def made_up() -> str:
        return "".join(rnd.choice("bcdfghklmnprstvz") + rnd.choice("aeiou") for _ in range(rnd.randint(2, 5)))

    def passage(n: int) -> str:
        words = rnd.choices(tokens, weights, k=n)
        return " ".join(made_up() if rnd.random() < 0.05 else w for w in words)

    corpus = folder / "corpus.jsonl"
    with corpus.open("w", encoding="utf-8") as f:
        for i in range(passages):
            f.write(json.dumps({"id": f"P{i:07d}", "title": "", "contents": passage(rnd.randint(30, 90))}) + "\n")
    topic_file = folder / "topics.tsv"
    with topic_file.open("w", encoding="utf-8") as f:
        for t in range(topics):
            words = [w for w in re.findall(r"\w+", passage(8)) if w]
            f.write(f"{t + 1}\t{' '.join(words)}\n")
    return corpus, topic_file


def index_speed(corpus: Path, topics: Path) -> tuple[dict, object]:
    import bm25s  # noqa: F401  (imported first: its import is a one-off, not a cost per passage)
    import Stemmer  # noqa: F401

    from trecbench.corpus import open_corpus
    from trecbench.runs.baselines import analysis, bm25_run
    from trecbench.runs.baselines.bm25 import _contents

    cpu, wall = time.process_time(), time.perf_counter()
    result = bm25_run(corpus, topics)  # first: nothing cached yet
    total = (time.process_time() - cpu, time.perf_counter() - wall)
    docs = list(_contents(open_corpus(corpus)))
    clear = getattr(getattr(analysis, "_cached_term", None), "cache_clear", None)
    if clear:
        clear()
    cpu, wall = time.process_time(), time.perf_counter()
    for _, text in docs:
        analysis.analyze(text)
    analysed = (time.process_time() - cpu, time.perf_counter() - wall)
    return {
        "passages": len(docs),
        "analysis_cpu": analysed[0],
        "index_cpu": total[0], "index_wall": result.index_seconds, "search_wall": result.search_seconds,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }, result


def compare_backends(corpus: Path, topics: Path, ours) -> str:
    from trecbench.runs.baselines import bm25_run

    theirs = bm25_run(corpus, topics, backend="pyserini").run
    a = {q: g.sort_index(kind="stable") for q, g in ours.run.groupby("query_id", sort=False)}
    b = {q: g for q, g in theirs.groupby("query_id", sort=False)}
    same_set = same_order = 0
    worst = 0.0
    for q in a:
        top_a = list(a[q]["doc_id"][:10])
        top_b = list(b.get(q, a[q].iloc[0:0])["doc_id"][:10])
        same_set += set(top_a) == set(top_b)
        same_order += top_a == top_b
        sa = dict(zip(a[q]["doc_id"], a[q]["score"]))
        sb = dict(zip(b.get(q, a[q].iloc[0:0])["doc_id"], b.get(q, a[q].iloc[0:0])["score"]))
        for d in set(sa) & set(sb):
            worst = max(worst, abs(sa[d] - sb[d]) / max(abs(sb[d]), 1e-9))
    return (f"bm25s vs pyserini on {len(a)} topics: top-10 set equal on {same_set}, same top-10 order on "
            f"{same_order}; largest relative score difference at the same document {worst:.2%}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passages", type=int, default=50_000)
    ap.add_argument("--pyserini", action="store_true", help="also compare with the pyserini backend")
    ap.add_argument("--save", help="write the bm25s run here")
    ap.add_argument("--against", help="compare the bm25s run with a run saved by --save")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        corpus, topics = make_corpus(Path(tmp), args.passages)
        stats, result = index_speed(corpus, topics)
        n = stats["passages"]
        print(f"{n} passages, one thread: bm25_run (reading, analysis, bm25s index, 40 searches) "
              f"{stats['index_cpu']:.1f} s CPU = {n / stats['index_cpu']:,.0f} passages/s CPU; "
              f"index step {stats['index_wall']:.1f} s wall = {n / stats['index_wall']:,.0f} passages/s; "
              f"search {stats['search_wall']:.2f} s wall; analysis alone {stats['analysis_cpu']:.1f} s CPU "
              f"({n / stats['analysis_cpu']:,.0f}/s); peak RSS {stats['peak_mib']:.0f} MiB")
        if args.save:
            from trecbench.runs import write_run

            write_run(result.run, args.save, runid="bm25")
        if args.against:
            from trecbench.runs import read_run

            before = read_run(args.against)
            now = result.run.reset_index(drop=True)
            same = (len(before) == len(now) and (before["query_id"] == now["query_id"]).all()
                    and (before["doc_id"] == now["doc_id"]).all()
                    and (before["score"].to_numpy() == now["score"].to_numpy()).all())
            print(f"against {args.against}: {'identical' if same else 'DIFFERENT'} ({len(now)} lines)")
        if args.pyserini:
            print(compare_backends(corpus, topics, result))


if __name__ == "__main__":
    main()
