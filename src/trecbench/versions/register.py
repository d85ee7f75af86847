"""Registering a corpus version in a workspace: its passages streamed into the store (docid, source span, text
hash) in chunks, its spans checked, and the texts of the passages the benchmark refers to kept by hash.

A workspace made before versions existed gets its corpus registered as v1 the first time versions are used
(`ensure_versions`); one made since registers it at `Workspace.init`.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple

import numpy as np

from trecbench.errors import InputError
from trecbench.sources import PassageSpans, Span, check_spans, read_spans
from trecbench.store import corpus_versions as queries
from trecbench.store.corpus_versions import PassageRow, VersionRow

if TYPE_CHECKING:
    from trecbench.store import Workspace

__all__ = ["CorpusVersion", "VersionPassage", "version_passages", "digest", "version_name", "checked_spans",
           "register_version", "ensure_versions", "corpus_versions", "as_workspace", "stale_judgments",
           "current_docids", "Stale"]

BATCH = 20_000  # passages per executemany: what registering holds in memory besides the spans


class CorpusVersion(NamedTuple):
    """A corpus version of the workspace (`parent`: the version it was updated from, None for the first)."""

    name: str
    created_at: str
    corpus: str
    sources: str | None
    passages: int
    spans: int
    parent: str | None
    current: bool


class VersionPassage(NamedTuple):
    """A passage as a version keeps it: its source span (None without one), its text's sha256 (hex, as
    `trecbench.store.text_hash` gives it) and its text when the workspace kept it (judged or linked)."""

    docid: str
    span: Span | None
    text_hash: str
    text: str | None


def version_passages(ws: "Workspace | str | os.PathLike", version: str, docids: Iterable[str]) -> dict[str, VersionPassage]:
    """{docid: passage} of the passages among `docids` that corpus version `version` (v1, v2...) has: an older
    version stays readable when its corpus file is gone. InputError for a version the workspace lacks."""
    ws = as_workspace(ws)
    rows = ensure_versions(ws)
    chosen = next((r for r in rows if r.name == version), None)
    if chosen is None:
        raise InputError(str(ws.path), 0, f"no corpus version {version!r} (there are "
                                          f"{', '.join(r.name for r in rows)})")
    conn = ws.connection()
    found = queries.passage_rows(conn, chosen.id, docids)
    texts = queries.kept_texts(conn, [p.text_hash for p in found.values()])
    return {d: VersionPassage(d, Span(p.source_id, p.start, p.end) if p.source_id is not None and p.start is not None
                              and p.end is not None else None, p.text_hash.hex(), texts.get(p.text_hash))
            for d, p in found.items()}


def digest(text: str) -> bytes:
    """A passage text's hash as the store keeps it: the sha256 (`trecbench.store.text_hash`) as 32 bytes."""
    return hashlib.sha256(text.encode("utf-8")).digest()


def version_name(number: int) -> str:
    """The name of the workspace's `number`-th corpus version: v1, v2, ..."""
    return f"v{number}"


def as_workspace(ws: "Workspace | str | os.PathLike") -> "Workspace":
    """A `Workspace`, given one or its path."""
    from trecbench.store import Workspace

    return ws if isinstance(ws, Workspace) else Workspace(ws)


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


def register_version(ws: Any, corpus: str, spans: PassageSpans, *, sources: str | None = None,
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


def referenced_docids(ws: Any) -> set[str]:
    """The docids the benchmark refers to: judged ones and those nuggets link as support."""
    from trecbench.nuggets.store import NuggetStore

    docids = set(queries.referenced_docids(ws.connection()))
    for nuggets in NuggetStore(ws).topics().values():
        docids.update(link.docid for n in nuggets for group in n.support for link in group)
    return docids


def ensure_versions(ws: Any) -> list[VersionRow]:
    """The workspace's corpus versions, oldest first; a workspace that has none (made before versions existed)
    gets its configured corpus registered as v1 first. InputError when it has no corpus."""
    from trecbench.store.workspace import CONFIG

    rows = queries.version_rows(ws.connection())
    if rows:
        return rows
    if not ws.corpus_source:
        raise InputError(str(ws.path / CONFIG), 0, "no corpus configured ([corpus] source): no corpus versions")
    register_version(ws, ws.corpus_source, checked_spans(ws.corpus_source), keep=referenced_docids(ws),
                     stored=ws.settings.corpus)
    return queries.version_rows(ws.connection())


def corpus_versions(ws: "Workspace | str | os.PathLike") -> list[CorpusVersion]:
    """The workspace's corpus versions, oldest first, the current one (the newest) marked; registers the
    corpus as v1 in a workspace made before versions existed."""
    ws = as_workspace(ws)
    rows = ensure_versions(ws)
    names = {r.id: r.name for r in rows}
    return [CorpusVersion(r.name, r.created_at, r.corpus, r.sources, r.passages, r.spans,
                          names.get(r.parent) if r.parent is not None else None, r is rows[-1]) for r in rows]


def empty_spans() -> PassageSpans:
    """Spans of a corpus without any."""
    none = np.zeros(0, dtype=np.int64)
    return PassageSpans("", [], [], none, none, none, none)


class Stale(NamedTuple):
    """The current version (name, id) of a workspace updated at least once, and (id, qid, docid) of each
    judgment that does not hold in it."""

    version: str
    id: int
    rows: list[tuple[int, str, str]]


def stale_judgments(ws: Any, *, qid: str | None = None) -> Stale | None:
    """The judgments (of topic `qid`) the current corpus version leaves out of the qrels; None for a workspace
    that was never updated (its judgments are all of its first version, as before versions existed)."""
    conn = ws.connection()
    rows = queries.version_rows(conn)
    if len(rows) < 2:
        return None
    return Stale(rows[-1].name, rows[-1].id, queries.stale_judgment_rows(conn, rows[-1].id, rows[0].id, qid))


def current_docids(ws: Any, stale: Stale, docids: list[str]) -> set[str]:
    """The docids among `docids` that are passages of the current version."""
    return queries.has_docids(ws.connection(), stale.id, docids)
