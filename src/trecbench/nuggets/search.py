"""Searching the whole corpus for a nugget's evidence, without a pool: BM25 (`trecbench.runs.baselines`, bm25s)
over the workspace's corpus, its index built once and kept in the workspace folder (`BENCH/search-index/`,
rebuilt when the corpus file changes), then held in memory for every query of a session.

In a closed knowledge base the experts often know where the key text is: they search, open the passage
and mark it (or the sentence in it) as evidence (`NuggetStore.link`), and no set of runs has to be pooled
first. The search needs no judgment.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, NamedTuple

from trecbench.store.workspace import Workspace

__all__ = ["Hit", "CorpusSearch", "INDEX_DIR"]

INDEX_DIR = "search-index"


class Hit(NamedTuple):
    """One passage found: its docid and BM25 score."""

    docid: str
    score: float


class CorpusSearch:
    """BM25 over one workspace's corpus; the index is built (or reused from `BENCH/search-index/`) on the first
    search, and one search runs at a time (bm25s's scoring arrays are shared)."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        self._index: Any = None
        self._lock = threading.Lock()

    @property
    def directory(self) -> Path:
        return Path(self.ws.path) / INDEX_DIR

    def search(self, query: str, hits: int = 20) -> list[Hit]:
        """The best `hits` passages for `query` (only those with a positive score; none for a query without a
        word the corpus has). InputError when the workspace has no corpus; BackendUnavailable without bm25s."""
        if hits < 1:
            raise ValueError(f"hits must be at least 1, not {hits}")
        with self._lock:
            index = self._opened()
            ((_, docids, scores),) = list(index.search([("q", query)], hits, False))
        return [Hit(d, float(s)) for d, s in zip(docids, scores)]

    def _opened(self) -> Any:
        if self._index is None:
            from trecbench.runs.baselines.bm25 import BM25Settings, bm25_run
            from trecbench.runs.baselines.bm25s_backend import Bm25sBackend

            corpus = self.ws.corpus()  # InputError when none is configured
            settings = BM25Settings()
            bm25_run(corpus, [], backend="bm25s", settings=settings, index_dir=self.directory)  # builds or reuses
            self._index = Bm25sBackend().load(self.directory, settings, False)
        return self._index
