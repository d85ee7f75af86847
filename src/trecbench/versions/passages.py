"""Registering a corpus file as a version: its source spans checked, then every passage streamed into the store
(docid, source span, text hash) BATCH at a time, and the texts of the passages the benchmark refers to kept by
hash. What `Workspace.init` calls; it imports nothing above the store, so the store can call it.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from trecbench.errors import InputError
from trecbench.sources import PassageSpans, check_spans, read_spans
from trecbench.store import corpus_versions as queries
from trecbench.store.corpus_versions import PassageRow

if TYPE_CHECKING:
    from trecbench.store.workspace import Workspace

BATCH = 20_000  # passages per executemany: what registering holds in memory besides the spans



def digest(text: str) -> bytes:
    """A passage text's hash as the store keeps it: the sha256 (`trecbench.store.text_hash`) as 32 bytes."""
    return hashlib.sha256(text.encode("utf-8")).digest()



def version_name(number: int) -> str:
    """The name of the workspace's `number`-th corpus version: v1, v2, ..."""
    return f"v{number}"



def checked_spans(corpus: str, sources: str | None = None) -> PassageSpans:
    """The corpus file's source spans, refused (InputError, `path:line` of every passage) when a passage's text
    is not its span of the sources file (without one: when overlapping passages disagree). An ir_datasets
    corpus has no spans."""
    if corpus.startswith("irds:"):
        if sources:
            raise InputError(sources, 0, "a sources file needs a corpus file with source spans, not irds:")
        return empty_spans()
    spans = read_spans(corpus)
    if sources is not None and not Path(sources).is_file():
        raise InputError(sources, 0, "no such file")
    if len(spans):
        check_spans(corpus, spans, sources)
    return spans



def empty_spans() -> PassageSpans:
    """Spans of a corpus without any."""
    none = np.zeros(0, dtype=np.int64)
    return PassageSpans("", [], [], none, none, none, none)



def register_version(ws: Workspace, corpus: str, spans: PassageSpans, *, sources: str | None = None,
                     parent: int | None = None, keep: Iterable[str] = (), stored: str | None = None,
                     summary_json: str = "{}") -> int:
    """Add a corpus version: every passage of `corpus` (streamed, BATCH at a time) with its span and text hash;
    the texts of the passages in `keep` are kept by hash. Runs inside the caller's transaction when there is
    one; returns the version's id. stored: the corpus as the version names it (default: as given)."""
    from trecbench.corpus import open_corpus

    keep = set(keep)
    with ws.transaction() as c:
        number = len(queries.version_rows(c)) + 1
        version = queries.insert_version(c, version_name(number), stored or corpus, sources, parent)
        rows: list[PassageRow] = []
        texts: list[tuple[bytes, str]] = []
        total = with_span = 0
        for doc in open_corpus(corpus):
            span = spans.get(doc.docid)
            h = digest(doc.text)
            rows.append(PassageRow(doc.docid, None, None, None, h) if span is None else
                        PassageRow(doc.docid, span.source_id, span.start, span.end, h))
            with_span += span is not None
            if doc.docid in keep:
                texts.append((h, doc.text))
            if len(rows) >= BATCH:
                total += len(rows)
                queries.insert_passages(c, version, rows)
                queries.keep_texts(c, texts)
                rows, texts = [], []
        total += len(rows)
        queries.insert_passages(c, version, rows)
        queries.keep_texts(c, texts)
        queries.finish_version(c, version, total, with_span, summary_json)
    return version


def fingerprint(passages: Iterable[tuple[str, bytes]]) -> str:
    """One sha256 of a corpus version: every passage's docid and text hash, in docid order (a release names
    its corpus version by it, and `release verify --corpus` recomputes it from the corpus file)."""
    h = hashlib.sha256()
    for docid, text_hash in passages:
        h.update(f"{docid}\t{text_hash.hex()}\n".encode("utf-8"))
    return h.hexdigest()


def corpus_fingerprint(corpus: Any) -> tuple[int, str]:
    """(passages, fingerprint) of a corpus (a source or an opened corpus), as `fingerprint` computes it from a
    version's rows."""
    from trecbench.corpus import open_corpus

    docs = open_corpus(os.fspath(corpus)) if isinstance(corpus, (str, os.PathLike)) else corpus
    pairs = sorted((doc.docid, digest(doc.text)) for doc in docs)
    return len(pairs), fingerprint(pairs)


def version_fingerprint(ws: Workspace, version: int) -> str:
    """The fingerprint of a stored corpus version (streamed from the store in docid order)."""
    return fingerprint(queries.version_hashes(ws.connection(), version))
