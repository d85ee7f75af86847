"""What a duplicate group means for scoring: its members are one document.

Pooling groups a topic's candidates whose text is the same (or nearly, with `--dedup near`) and
judges one representative; the qrels give every member the representative's grade. Scoring agrees:
evidence, context recall by id and the citation assigner compare documents through
`DuplicateGroups.same`, so retrieving or citing a member counts as retrieving or citing its twin.
Groups are per topic, as the pool makes them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, TYPE_CHECKING

if TYPE_CHECKING:
    from trecbench.store.workspace import WorkspaceLike


@dataclass(frozen=True)
class DuplicateGroups:
    """(query_id, doc_id) -> docid of its group's representative, for documents that have duplicates."""

    representative: Mapping[tuple[str, str], str] = field(default_factory=dict)

    def same(self, qid: str, docid: str) -> str:
        """The docid that stands for `docid`'s group in topic `qid` (the docid itself when it has no group)."""
        return self.representative.get((qid, docid), docid)

    def all_same(self, qid: str, docids: Iterable[str]) -> tuple[str, ...]:
        """`same` of each docid, in order (repeats kept)."""
        return tuple(self.same(qid, d) for d in docids)

    def __bool__(self) -> bool:
        return bool(self.representative)

    def __len__(self) -> int:
        return len(self.representative)


NONE = DuplicateGroups()


def duplicate_groups(workspace: WorkspaceLike, pool: str | None = None) -> DuplicateGroups:
    """The duplicate groups of a workspace's pool (the newest unless `pool` names one); empty without a pool."""
    from trecbench.pooling.pool import Pool
    from trecbench.store import as_workspace
    from trecbench.store.workspace import load_pool

    ws = as_workspace(workspace)
    frame = load_pool(ws, pool)
    if frame is None or frame.empty:
        return NONE
    grouped = frame[frame["group"].notna()].astype({"group": str, "doc_id": str, "query_id": str})
    return DuplicateGroups(Pool(grouped).group_of())
