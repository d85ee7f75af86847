"""BM25 runs: read the corpus and topics, build (or reuse) an index with a backend, search every topic.

A backend (`base.Backend`: `name`, `missing()`, `fingerprint()`, `build()`, `load()`) is registered in
BACKENDS; `bm25_run` does everything the backends share: reading inputs, the `--index` directory,
timing, and turning hits into a run frame in trec_eval order.
"""
from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Sequence, Union

from trecbench.corpus import Corpus, FileCorpus, IrdsCorpus, open_corpus
from trecbench.errors import InputError
from trecbench.runs.baselines.base import Backend, BackendUnavailable, BM25Settings, note
from trecbench.topics import Topic, read_topics

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["BACKENDS", "BackendUnavailable", "BaselineRun", "BM25Settings", "bm25_run"]

INDEX_MARKER = "trecbench-index.json"
INDEX_FORMAT = "trecbench-bm25-index/1"


@dataclass(frozen=True)
class BaselineRun:
    """A finished run and how it was made; `run` has columns query_id, doc_id, score in trec_eval order."""

    run: "pd.DataFrame"
    backend: str
    documents: int
    topics: int
    index_seconds: float  # building or loading the index (Java's start-up included for pyserini)
    search_seconds: float
    index_reused: bool
    empty_topics: tuple[str, ...]  # topics that retrieved nothing (only stopwords, or no word in the corpus)


def _backends() -> dict[str, Backend]:
    from trecbench.runs.baselines.bm25s_backend import Bm25sBackend
    from trecbench.runs.baselines.pyserini_backend import PyseriniBackend

    return {b.name: b for b in (Bm25sBackend(), PyseriniBackend())}


BACKENDS: dict[str, Backend] = _backends()


def bm25_run(
    corpus: Union[str, Path, Corpus],
    topics: Union[str, Path, Sequence[Topic]],
    *,
    backend: str = "bm25s",
    settings: BM25Settings = BM25Settings(),  # noqa: B008 (frozen dataclass: one shared default is safe)
    index_dir: Union[str, Path, None] = None,
    runid: str = "bm25",
    progress: bool = False,
) -> BaselineRun:
    """Rank the corpus's documents for every topic with BM25; return the run and how long each step took.

    `corpus` and `topics` are paths, `irds:<dataset-id>`, or already opened/read. Each document is indexed
    as its title and text. `index_dir` keeps the index: a directory this function filled earlier for the
    same corpus (and, for bm25s, the same k1 and b) is reused, one it filled for something else is rebuilt,
    and a non-empty directory it did not make is refused (InputError). `progress` shows progress bars and
    notes on stderr. Raises BackendUnavailable when the backend's packages are missing.
    """
    import numpy as np
    import pandas as pd

    from trecbench.runs.write import trec_order

    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose from {', '.join(BACKENDS)}")
    if settings.hits < 1:
        raise ValueError(f"hits must be at least 1, not {settings.hits}")
    impl = BACKENDS[backend]
    why = impl.missing()
    if why:
        raise BackendUnavailable(why)
    topic_list = list(topics) if not isinstance(topics, (str, Path)) else read_topics(topics)
    docs = corpus if isinstance(corpus, Corpus) else open_corpus(corpus)
    expected = {"format": INDEX_FORMAT, "backend": impl.name, "corpus": _corpus_fingerprint(docs),
                **impl.fingerprint(settings)}

    started = time.perf_counter()
    directory = Path(index_dir) if index_dir is not None else None
    reused = directory is not None and _reusable(directory, expected, progress)
    if reused:
        assert directory is not None
        index = impl.load(directory, settings, progress)
    else:
        if directory is not None:
            _write_marker(directory, expected, complete=False)
        count = _count(docs)
        index = impl.build(_contents(docs), count, directory, settings, progress)
        if directory is not None:
            _write_marker(directory, expected, complete=True)
    indexed = time.perf_counter()
    qids: list[str] = []
    docids: list[str] = []
    scores: list[np.ndarray] = []
    empty: list[str] = []
    try:
        for qid, found, values in index.search([(t.qid, t.text) for t in topic_list], settings.hits, progress):
            if not found:
                empty.append(qid)
            qids.extend([qid] * len(found))
            docids.extend(found)
            scores.append(values)
        documents = index.documents
    finally:
        index.close()
    searched = time.perf_counter()

    all_scores = np.concatenate(scores) if scores else np.zeros(0, dtype=np.float32)
    frame = pd.DataFrame({
        "query_id": pd.array(qids, dtype=object),
        "doc_id": pd.array(docids, dtype=object),
        "score": _shortest_float64(all_scores),
    })
    frame = trec_order(frame)
    frame.attrs["runid"] = runid
    return BaselineRun(frame, impl.name, documents, len(topic_list), indexed - started, searched - indexed,
                       reused, tuple(empty))


def _shortest_float64(scores: "np.ndarray") -> "np.ndarray":
    """float32 scores as the float64 of their shortest decimal form (12.345678, not 12.345678329467773).

    Distinct float32 values keep their order and equal ones stay equal, so rankings and ties are unchanged,
    and trec_eval 9 (which reads scores as C floats) reads back the very same float32 values.
    """
    import numpy as np

    return np.asarray(scores, dtype=np.float32).astype(str).astype(np.float64)


def _contents(corpus: Corpus) -> Iterator[tuple[str, str]]:
    """(docid, title and text) for every document; a title the text already starts with is not repeated
    (ir_datasets' default_text() includes the title)."""
    for doc in corpus:
        if doc.title and not doc.text.startswith(doc.title):
            yield doc.docid, f"{doc.title}\n{doc.text}"
        else:
            yield doc.docid, doc.text


def _count(corpus: Corpus) -> int | None:
    try:
        return len(corpus)
    except Exception:  # an ir_datasets docstore that cannot count cheaply: a bar without a total
        return None


def _corpus_fingerprint(corpus: Corpus) -> dict:
    if isinstance(corpus, FileCorpus):
        stat = corpus.path.stat()
        return {"path": str(corpus.path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    if isinstance(corpus, IrdsCorpus):
        return {"irds": corpus.source}
    return {"source": str(getattr(corpus, "source", type(corpus).__name__))}


def _reusable(directory: Path, expected: dict, progress: bool) -> bool:
    """True if `directory` holds a finished index of `expected`; else make it ready to be (re)built."""
    if directory.exists() and not directory.is_dir():
        raise InputError(str(directory), 0, "is a file; --index needs a directory")
    if not directory.exists():
        directory.mkdir(parents=True)
        return False
    marker = directory / INDEX_MARKER
    if not marker.is_file():
        if any(directory.iterdir()):
            raise InputError(str(directory), 0, "is not empty and holds no trecbench index; give a new or empty directory")
        return False
    try:
        found = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        found = {}
    if found.get("complete") and {k: v for k, v in found.items() if k != "complete"} == expected:
        note(f"{expected['backend']}: reusing the index in {directory}", progress)
        return True
    # Our own index of another corpus, other settings, or an interrupted build: start again.
    note(f"{expected['backend']}: rebuilding the index in {directory} (corpus or settings changed)", progress)
    shutil.rmtree(directory)
    directory.mkdir(parents=True)
    return False


def _write_marker(directory: Path, expected: dict, *, complete: bool) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / INDEX_MARKER).write_text(json.dumps({**expected, "complete": complete}, indent=1), encoding="utf-8")
