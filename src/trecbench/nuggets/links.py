"""Evidence links as the store records them: each linked document with the hash of its text, from the
workspace's corpus opened once (`check` then finds links whose document changed)."""
from __future__ import annotations

import threading
from typing import Any, Iterable

from trecbench.nuggets.records import Alternatives, Link
from trecbench.store.workspace import Workspace, text_hash

__all__ = ["DocumentLinks"]


class DocumentLinks:
    """Makes `Link`s for one workspace; the corpus is opened on first use, once, whichever thread asks."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        self._corpus: Any = None
        self._opened = False
        self._lock = threading.Lock()

    def corpus(self) -> Any:
        """The workspace's corpus, None when it has none (opened, and indexed, on the first call)."""
        with self._lock:
            if not self._opened:
                self._corpus = self.ws.corpus() if self.ws.corpus_source else None
                self._opened = True
            return self._corpus

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

    def links(self, support: Iterable[Iterable[str | Link]], keep: Alternatives = ()) -> Alternatives:
        """Support as Link groups; a docid already linked in `keep` keeps its hash, others hash the text now.

        A docid twice in a group, or a group with the docids of an earlier one, is kept once.
        """
        known = {link.docid: link for group in keep for link in group}
        groups: list[tuple[Link, ...]] = []
        for group in support:
            links: list[Link] = []
            for item in group:
                link = item if isinstance(item, Link) else known.get(str(item)) or Link(str(item),
                                                                                        self.hash_of(str(item)))
                if link.docid not in [x.docid for x in links]:
                    links.append(link)
            if links and {x.docid for x in links} not in [{x.docid for x in g} for g in groups]:
                groups.append(tuple(links))
        return tuple(groups)
