"""What an update did not carry, as people review it: each mapped, split, changed or retired judgment and link,
with the old text, the text where it is now and their word diff."""
from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, NamedTuple

from trecbench.errors import InputError
from trecbench.sources import Span
from trecbench.store import corpus_versions as queries

from .locate import word_diff
from trecbench.store import as_workspace

from .register import ensure_versions

if TYPE_CHECKING:
    from trecbench.store import Workspace

__all__ = ["CorpusChange", "corpus_changes", "change_for", "QUEUED"]

QUEUED = ("split", "changed")  # what needs people: the outcomes whose passages go into the review pool


class CorpusChange(NamedTuple):
    """One judgment (`ref`: its id) or link (`ref`: nugget id#alternative) an update did not carry."""

    version: str
    kind: str
    outcome: str
    qid: str
    ref: str
    docid: str
    new_docids: tuple[str, ...]
    where: Span | None
    note: str
    old_text: str | None
    new_text: str | None

    @property
    def diff(self) -> str:
        """The word diff of the old text against the new (empty when either is unknown or they are equal)."""
        if self.old_text is None or self.new_text is None or self.old_text == self.new_text:
            return ""
        return word_diff(self.old_text, self.new_text)


def corpus_changes(ws: "Workspace | str | os.PathLike", version: str | None = None, *,
                   outcomes: tuple[str, ...] = QUEUED) -> list[CorpusChange]:
    """The items of `outcomes` (default: what needs people) of the update that made `version` (default: the
    current version), in the order the update recorded them. InputError for a version the workspace lacks."""
    ws = as_workspace(ws)
    rows = ensure_versions(ws)
    chosen = rows[-1] if version is None else next((r for r in rows if r.name == version), None)
    if chosen is None:
        raise InputError(str(ws.path), 0, f"no corpus version {version!r} (there are "
                                          f"{', '.join(r.name for r in rows)})")
    conn = ws.connection()
    changes = [r for r in queries.change_rows(conn, chosen.id) if r[1] in outcomes]
    texts = queries.kept_texts(conn, [h for r in changes for h in (r[5], r[10])])
    out = []
    for kind, outcome, qid, ref, docid, old_hash, new_docids, source, start, end, new_hash, note in changes:
        where = Span(source, start, end) if source is not None else None
        old_text = texts.get(old_hash)
        new_text = texts.get(new_hash) if new_hash is not None else (old_text if outcome != "changed" else None)
        out.append(CorpusChange(chosen.name, kind, outcome, qid, ref, docid, tuple(json.loads(new_docids)), where,
                                note or "", old_text, new_text))
    return out


def change_for(ws: Workspace, qid: str, docid: str) -> CorpusChange | None:
    """What the current version's update queued for people about passage `docid` of topic `qid` (a
    judgment's change first, then a nugget link's): what the judging page shows beside the passage in the
    update's review pool. None when the update queued nothing there (or the workspace was never updated)."""
    if len(ensure_versions(ws)) < 2:
        return None
    found = [c for c in corpus_changes(ws) if c.qid == qid and docid in c.new_docids]
    found.sort(key=lambda c: c.kind != "judgment")
    return found[0] if found else None
