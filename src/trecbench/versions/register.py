"""Registering a corpus version in a workspace: its passages streamed into the store (docid, source span, text
hash) in chunks, its spans checked, and the texts of the passages the benchmark refers to kept by hash.

A workspace made before versions existed gets its corpus registered as v1 the first time versions are used
(`ensure_versions`); one made since registers it at `Workspace.init`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, NamedTuple


from trecbench.errors import InputError
from trecbench.sources import Span
from trecbench.store import corpus_versions as queries
from trecbench.store.corpus_versions import VersionRow

from .passages import checked_spans, digest, register_version, version_name

if TYPE_CHECKING:
    from trecbench.store.workspace import Workspace, WorkspaceLike

__all__ = ["CorpusVersion", "VersionPassage", "version_passages", "digest", "version_name", "checked_spans",
           "register_version", "ensure_versions", "corpus_versions", "stale_judgments",
           "current_docids", "Stale"]


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


def version_passages(ws: WorkspaceLike, version: str, docids: Iterable[str]) -> dict[str, VersionPassage]:
    """{docid: passage} of the passages among `docids` that corpus version `version` (v1, v2...) has: an older
    version stays readable when its corpus file is gone. InputError for a version the workspace lacks."""
    from trecbench.store import as_workspace

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


def referenced_docids(ws: Workspace) -> set[str]:
    """The docids the benchmark refers to: judged ones and those nuggets link as support."""
    from trecbench.nuggets.store import NuggetStore

    docids = set(queries.referenced_docids(ws.connection()))
    for nuggets in NuggetStore(ws).topics().values():
        docids.update(link.docid for n in nuggets for group in n.support for link in group)
    return docids


def ensure_versions(ws: Workspace) -> list[VersionRow]:
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


def corpus_versions(ws: WorkspaceLike) -> list[CorpusVersion]:
    """The workspace's corpus versions, oldest first, the current one (the newest) marked; registers the
    corpus as v1 in a workspace made before versions existed."""
    from trecbench.store import as_workspace

    ws = as_workspace(ws)
    rows = ensure_versions(ws)
    names = {r.id: r.name for r in rows}
    return [CorpusVersion(r.name, r.created_at, r.corpus, r.sources, r.passages, r.spans,
                          names.get(r.parent) if r.parent is not None else None, r is rows[-1]) for r in rows]


class Stale(NamedTuple):
    """The current version (name, id) of a workspace updated at least once, and (id, qid, docid) of each
    judgment that does not hold in it."""

    version: str
    id: int
    rows: list[tuple[int, str, str]]


def stale_judgments(ws: Workspace, *, qid: str | None = None) -> Stale | None:
    """The judgments (of topic `qid`) the current corpus version leaves out of the qrels; None for a workspace
    that was never updated (its judgments are all of its first version, as before versions existed)."""
    conn = ws.connection()
    rows = queries.version_rows(conn)
    if len(rows) < 2:
        return None
    return Stale(rows[-1].name, rows[-1].id, queries.stale_judgment_rows(conn, rows[-1].id, rows[0].id, qid))


def current_docids(ws: Workspace, stale: Stale, docids: list[str]) -> set[str]:
    """The docids among `docids` that are passages of the current version."""
    return queries.has_docids(ws.connection(), stale.id, docids)
