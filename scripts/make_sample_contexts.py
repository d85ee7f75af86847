"""Produce the staged RAG contexts shipped in src/trecbench/sample/contexts.jsonl.

Usage (from the repository root):

    .venv/bin/python scripts/make_sample_contexts.py

The contexts simulate the four stages of a small retrieval-augmented generation pipeline for each
sample topic, built only from the shipped runs and the permissions file:

    initial   the top 50 passages of the bm25 run (runs/bm25.txt)
    filtered  `initial` without the passages the topic's asker may not see (permissions.jsonl)
    reranked  `filtered` reordered by the bm25_rm3 run (runs/bm25_rm3.txt), standing in for a
              reranker, cut to the top 20; passages the bm25_rm3 run does not list keep their
              `filtered` order after the ones it does
    final     the top 5 of `reranked`: the passages given to the model

Runs are ranked the way trec_eval ranks them (score descending, ties by docid descending; the rank
column is ignored). Each output line is `{"run_id", "qid", "stage", "docids"}`, topics in order and
stages in pipeline order, so `trecbench eval evidence --contexts contexts.jsonl` reads the stages in
the right order. Everything is deterministic: re-running the script rewrites the file byte for byte.
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from trecbench.evaluation.evidence import read_permissions

SAMPLE = Path(__file__).resolve().parents[1] / "src" / "trecbench" / "sample"
RUN_ID = "sample_rag"
INITIAL_DEPTH = 50
RERANK_DEPTH = 20
FINAL_DEPTH = 5


def read_ranked(path: Path) -> dict[str, list[str]]:
    """Each topic's docids of a TREC run, in trec_eval order."""
    scored: dict[str, list[tuple[float, str]]] = defaultdict(list)
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            qid, _q0, docid, _rank, score, _tag = line.split()
            scored[qid].append((float(score), docid))
    return {qid: [d for _, d in sorted(pairs, reverse=True)] for qid, pairs in scored.items()}


def read_topic_ids() -> list[str]:
    with open(SAMPLE / "topics.tsv", encoding="utf-8") as f:
        return [line.split("\t", 1)[0] for line in f if line.strip()]


def stages_for(qid: str, first: list[str], second: list[str], permissions) -> dict[str, list[str]]:
    initial = first[:INITIAL_DEPTH]
    filtered = [d for d in initial if permissions.visible(qid, d)]
    position = {d: i for i, d in enumerate(second)}
    reranked = sorted(filtered, key=lambda d: (position.get(d, len(second)), filtered.index(d)))[:RERANK_DEPTH]
    return {"initial": initial, "filtered": filtered, "reranked": reranked, "final": reranked[:FINAL_DEPTH]}


def main() -> None:
    first = read_ranked(SAMPLE / "runs" / "bm25.txt")
    second = read_ranked(SAMPLE / "runs" / "bm25_rm3.txt")
    permissions = read_permissions(SAMPLE / "permissions.jsonl")
    lines = []
    for qid in read_topic_ids():
        for stage, docids in stages_for(qid, first.get(qid, []), second.get(qid, []), permissions).items():
            lines.append(json.dumps({"run_id": RUN_ID, "qid": qid, "stage": stage, "docids": docids}) + "\n")
    out = SAMPLE / "contexts.jsonl"
    out.write_text("".join(lines), encoding="utf-8", newline="\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
