"""The bm25s backend: BM25 in numpy (the `bm25s` package) over terms from `analysis.analyze`, no Java needed.

bm25s's `lucene` method scores as Lucene's BM25Similarity does, idf = ln(1 + (N - df + 0.5) / (df + 0.5))
and tf / (tf + k1 (1 - b + b dl / avgdl)), in float32. Document lengths are exact, where Lucene keeps
them in one byte (lengths above 40 terms rounded down, by less than an eighth), so scores differ from
Lucene's slightly (on the sample by 1.1% at most, 0.007% in the median) and close documents may swap.
"""
from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Iterator, Sequence

from trecbench.runs.baselines.analysis import ANALYZER, TermIds, analyze
from trecbench.helpers.extras import install_command
from trecbench.helpers.progress import draws_bars, progress_bar
from trecbench.runs.baselines.base import BM25Settings

_DOCIDS = "docids.json"


class Bm25sBackend:
    """BM25 with bm25s (default): pure Python and numpy, the index held in memory."""

    name = "bm25s"

    def missing(self) -> str | None:
        if find_spec("bm25s") is None or find_spec("Stemmer") is None:
            return f"the bm25s backend needs bm25s and PyStemmer: {install_command('bm25')}"
        return None

    def fingerprint(self, settings: BM25Settings) -> dict:
        # bm25s stores each term's score in each document, so k1 and b are part of the index.
        return {"analyzer": ANALYZER, "k1": settings.k1, "b": settings.b}

    def build(self, docs: Iterator[tuple[str, str]], count: int | None, directory: Path | None,
              settings: BM25Settings, progress: bool) -> "Bm25sIndex":
        import bm25s

        term_ids = TermIds()
        docids: list[str] = []
        terms: list[list[int]] = []  # term ids, not strings: a corpus's words are held once, in vocab
        with progress_bar(progress, total=count, desc="bm25s: analysing", unit="doc") as bar:
            for docid, text in docs:
                docids.append(docid)
                terms.append(term_ids.ids(text))
                bar.update()
        vocab = term_ids.vocab
        model = None
        if vocab:  # bm25s cannot index a corpus without a single term
            model = bm25s.BM25(k1=settings.k1, b=settings.b, method="lucene")
            model.index((terms, vocab), create_empty_token=False, show_progress=progress and draws_bars())
        if directory is not None:
            if model is not None:
                model.save(str(directory))
            (directory / _DOCIDS).write_text(json.dumps(docids), encoding="utf-8")
        return Bm25sIndex(model, docids)

    def load(self, directory: Path, settings: BM25Settings, progress: bool) -> "Bm25sIndex":
        import bm25s

        docids = json.loads((directory / _DOCIDS).read_text(encoding="utf-8"))
        model = bm25s.BM25.load(str(directory)) if (directory / "params.index.json").is_file() else None
        return Bm25sIndex(model, docids)


class Bm25sIndex:
    def __init__(self, model: Any, docids: list[str]):
        import numpy as np

        self.model = model
        self.docids = docids
        self.documents = len(docids)
        # Each document's place in docid order, to cut ties at the last hit as trec_eval ranks them.
        order = np.argsort(np.array(docids, dtype=object), kind="stable")
        self._docid_rank = np.empty(len(docids), dtype=np.int64)
        self._docid_rank[order] = np.arange(len(docids))

    def search(self, queries: Sequence[tuple[str, str]], hits: int, progress: bool) -> Iterator[tuple[str, list[str], Any]]:
        import numpy as np

        vocab = self.model.vocab_dict if self.model is not None else {}
        with progress_bar(progress, total=len(queries), desc="bm25s: searching", unit="topic") as bar:
            for qid, text in queries:
                # A repeated query word counts as often as it occurs, as in Anserini's bag-of-words query.
                ids = [vocab[t] for t in analyze(text) if t in vocab]
                if not ids:
                    yield qid, [], np.zeros(0, dtype=np.float32)
                else:
                    scores = self.model.get_scores_from_ids(ids)
                    top = self._top(scores, hits)
                    yield qid, [self.docids[i] for i in top], scores[top]
                bar.update()

    def _top(self, scores: Any, hits: int) -> Any:
        """Indexes of the `hits` best documents with a positive score, ties at the cut broken by docid descending."""
        import numpy as np

        candidates = np.flatnonzero(scores > 0)
        if len(candidates) > hits:
            cut = np.partition(scores[candidates], len(candidates) - hits)[len(candidates) - hits]
            candidates = candidates[scores[candidates] >= cut]
        order = np.lexsort((-self._docid_rank[candidates], -scores[candidates].astype(np.float64)))
        return candidates[order[:hits]]

    def close(self) -> None:
        self.model = None
