"""Evidence links as the store records them: each linked document with the hash of its text, and a span link
with its characters, their place in the source document and their hash, from the workspace's corpus opened
once (`check` then finds links whose document changed)."""
from __future__ import annotations

import os
import threading
from typing import Any, Iterable

from trecbench.nuggets.model import SourceSpan, SpanLink
from trecbench.nuggets.records import Alternatives, Link
from trecbench.store.workspace import Workspace, text_hash

__all__ = ["DocumentLinks"]


class DocumentLinks:
    """Makes `Link`s for one workspace; the corpus (and its source spans) is opened on first use, once,
    whichever thread asks."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        self._corpus: Any = None
        self._spans: Any = None
        self._opened = False
        self._spans_read = False
        self._lock = threading.Lock()

    def corpus(self) -> Any:
        """The workspace's corpus, None when it has none (opened, and indexed, on the first call)."""
        with self._lock:
            if not self._opened:
                self._corpus = self.ws.corpus() if self.ws.corpus_source else None
                self._opened = True
            return self._corpus

    def spans(self) -> Any:
        """The source spans of the corpus's passages (`trecbench.sources.PassageSpans`), None for a corpus that
        is not a JSONL file (read on the first call)."""
        from trecbench.sources import read_spans

        with self._lock:
            if not self._spans_read:
                source = self.ws.corpus_source
                self._spans = read_spans(source) if source and os.path.isfile(source) else None
                self._spans_read = True
            return self._spans

    def hash_of(self, docid: str, *, strict: bool = False) -> str | None:
        """The sha256 of the document's text; None without a corpus or (unless `strict`: ValueError) the document."""
        corpus = self.corpus()
        if corpus is None:
            return None
        doc = corpus.get(docid)
        if doc is None:
            if strict:
                raise ValueError(f"the corpus has no document {docid!r}")
            return None
        return text_hash(doc.text)

    def span_link(self, docid: str, start: int, end: int, *, strict: bool = False) -> Link:
        """A link to characters `start`-`end` of the passage's text, with the hashes of the text and of the span
        and the span's place in the source document (when the passage has a source span).

        ValueError for a span that is not 0 <= start < end, or (the corpus known) that ends after the text;
        with `strict`, for a document the corpus lacks.
        """
        SpanLink(docid, start, end)  # the bounds' check
        corpus = self.corpus()
        doc = corpus.get(docid) if corpus is not None else None
        if doc is None:
            if strict and corpus is not None:
                raise ValueError(f"the corpus has no document {docid!r}")
            return Link(docid, None, start, end)
        if end > len(doc.text):
            raise ValueError(f"span {start}:{end} ends after the text of {docid!r} ({len(doc.text)} characters)")
        spans = self.spans()
        passage = spans.get(docid) if spans is not None else None
        source = None if passage is None else SourceSpan(passage.source_id, passage.start + start, passage.start + end)
        return Link(docid, text_hash(doc.text), start, end, source, text_hash(doc.text[start:end]))

    def link_of(self, item: str | Link, known: dict[tuple, Link] | None = None) -> Link:
        """A supporting document (docid, `SpanLink` or Link) as a Link; one linked in `known` keeps its hashes."""
        if isinstance(item, Link):
            return item
        key = (str.__str__(item), item.start, item.end) if isinstance(item, SpanLink) else (str(item), None, None)
        if known and key in known:
            return known[key]
        if isinstance(item, SpanLink):
            return self.span_link(item.docid, item.start, item.end)
        return Link(str(item), self.hash_of(str(item)))

    def links(self, support: Iterable[Iterable[str | Link]], keep: Alternatives = ()) -> Alternatives:
        """Support as Link groups; a document (or span) already linked in `keep` keeps its hashes, others hash
        the text now.

        A document (the same span) twice in a group, or a group with the documents of an earlier one, is kept once.
        """
        known = {link.key: link for group in keep for link in group}
        groups: list[tuple[Link, ...]] = []
        for group in support:
            links: list[Link] = []
            for item in group:
                link = self.link_of(item, known)
                if link.key not in [x.key for x in links]:
                    links.append(link)
            if links and {x.key for x in links} not in [{x.key for x in g} for g in groups]:
                groups.append(tuple(links))
        return tuple(groups)
