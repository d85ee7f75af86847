"""Corpus versions at scale: registering a corpus of a million passages and updating a workspace to another
chunking of the same sources, in bounded memory.

The case (synthetic, seeded): `--sources` source documents of random words, each cut into passages of
about `--chars` characters (v1), and cut again at other places (v2: every cut moved by half a passage in
half of the sources, so their judged passages are split over two new ones; the other half keeps its
passages). `--judgments` passages of v1 are judged (a qrels file imported). Each step runs in its own
process, timed by /usr/bin/time (CPU seconds, peak RSS):

    init       `trecbench init` of v1 (reads the corpus, checks every span, registers every passage)
    import     `trecbench qrels import` of the judgments
    dry run    `trecbench corpus update --dry-run` to v2 (reads and checks v2, accounts for every judgment)
    update     `trecbench corpus update` to v2 (also registers v2's passages, copies judgments, review pool)

    python benchmarks/corpus_update.py [--sources 100000] [--chars 120] [--judgments 20000] [--keep DIR]

The default is 100,000 sources of ~10 passages: 1M passages per version. The load average is printed
beside the times: on a shared machine compare CPU seconds. Memory: the spans of a version are columns
(sources.PassageSpans, ~100 bytes a passage with its docid dict), passages are streamed into the store
20,000 at a time, and only the judged passages' texts are read and kept.

Measured (the default case: 100,000 sources, 1,100,164 passages per version, a 222 MiB v1 file, 22,397
judgments; a 2-core machine shared with other jobs, load average 6-9, so wall times are long):

    step      cpu_s  wall_s  peak_rss_mib
    init       43.6   153.7   394
    import      1.7     5.3   150
    dry run    29.7    50.4   413
    update     44.8   206.5   409      carried 11116, mapped 1066, split 10215: the sums hold

The database holds both versions in 158 MiB. The peak is the spans of the new version (its docids as a
list and a dict, ~250 bytes a passage) and the corpus's offset index; the passages themselves never are
in memory at once.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import measure  # noqa: E402

WORDS = ("rollback hotfix approval freeze canary deploy review ticket owner budget policy access incident "
         "release train captain rotation webhook ledger payout vendor secret schema migration").split()


def make_case(root: Path, n_sources: int, chars: int, n_judgments: int, seed: int = 7) -> dict[str, Path]:
    """Write sources.jsonl, v1.jsonl, v2.jsonl and qrels.txt under `root`; returns their paths."""
    rng = random.Random(seed)
    paths = {name: root / f"{name}.jsonl" for name in ("sources", "v1", "v2")}
    judged: list[str] = []
    with open(paths["sources"], "w") as s, open(paths["v1"], "w") as v1, open(paths["v2"], "w") as v2:
        for i in range(n_sources):
            sid = f"S{i}"
            text = " ".join(rng.choice(WORDS) for _ in range(10 * chars // 7))
            s.write(json.dumps({"id": sid, "text": text}) + "\n")
            cuts = list(range(0, len(text), chars))[1:]
            for a, b in zip([0] + cuts, cuts + [len(text)]):
                v1.write(json.dumps({"id": f"{sid}:{a}", "contents": text[a:b], "source_id": sid, "start_char": a,
                                     "end_char": b}) + "\n")
                if rng.random() < n_judgments / (n_sources * 10):
                    judged.append(f"{sid}:{a}")
            moved = cuts if i % 2 else [c - chars // 2 for c in cuts]
            for a, b in zip([0] + moved, moved + [len(text)]):
                v2.write(json.dumps({"id": f"{sid}:{a}", "contents": text[a:b], "source_id": sid, "start_char": a,
                                     "end_char": b}) + "\n")
    paths["qrels"] = root / "qrels.txt"
    paths["qrels"].write_text("".join(f"q{k % 500} 0 {d} {k % 3}\n" for k, d in enumerate(judged)))
    paths["topics"] = root / "topics.tsv"
    paths["topics"].write_text("".join(f"q{k}\tquestion {k}\n" for k in range(500)))
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=int, default=100_000)
    parser.add_argument("--chars", type=int, default=120)
    parser.add_argument("--judgments", type=int, default=20_000)
    parser.add_argument("--keep", type=Path, help="Write the case and the workspace here (kept).")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="corpus_update."))
    root.mkdir(parents=True, exist_ok=True)
    try:
        paths = make_case(root, args.sources, args.chars, args.judgments)
        passages = sum(1 for _ in open(paths["v1"]))
        print(f"{args.sources} sources, {passages} passages in v1, {sum(1 for _ in open(paths['v2']))} in v2, "
              f"{sum(1 for _ in open(paths['qrels']))} judgments; v1 file {paths['v1'].stat().st_size >> 20} MiB")
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
        bench = str(root / "bench")
        cli = [sys.executable, "-m", "trecbench.cli"]
        steps = [
            ("init", [*cli, "init", bench, "--corpus", str(paths["v1"]), "--topics", str(paths["topics"])]),
            ("import", [*cli, "qrels", "import", str(paths["qrels"]), "-w", bench, "--judge", "file"]),
            ("dry run", [*cli, "corpus", "update", "-w", bench, str(paths["v2"]), "--sources", str(paths["sources"]),
                         "--dry-run"]),
            ("update", [*cli, "corpus", "update", "-w", bench, str(paths["v2"]), "--sources", str(paths["sources"])]),
        ]
        print("step\tcpu_s\twall_s\tpeak_rss_mib\tload_1min")
        for name, argv in steps:
            got = measure([argv], env=env)
            print(f"{name}\t{got['cpu']:.1f}\t{got['wall']:.1f}\t{got['peak_mib']:.0f}\t{os.getloadavg()[0]:.2f}")
            if name == "update":
                print(got["out"][0].rstrip())
        print(f"database {(root / 'bench' / 'bench.sqlite').stat().st_size >> 20} MiB")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
