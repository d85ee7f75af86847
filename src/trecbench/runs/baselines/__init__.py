"""Baseline runs: BM25 over a corpus for a set of topics, with bm25s (default, pure Python) or pyserini (Lucene).

    from trecbench.runs.baselines import bm25_run
    result = bm25_run("corpus.jsonl", "topics.tsv")          # result.run: query_id, doc_id, score
    trecbench.runs.write_run(result.run, "bm25.txt")

Heavy libraries (bm25s, pyserini and its Java) are imported only when a run is made.
"""
from trecbench.runs.baselines.analysis import ANALYZER, LUCENE_ENGLISH_STOPWORDS, analyze
from trecbench.runs.baselines.base import BackendUnavailable, BM25Settings
from trecbench.runs.baselines.bm25 import BACKENDS, BaselineRun, bm25_run

__all__ = [
    "ANALYZER",
    "BACKENDS",
    "BM25Settings",
    "BackendUnavailable",
    "BaselineRun",
    "LUCENE_ENGLISH_STOPWORDS",
    "analyze",
    "bm25_run",
]
