"""Recording a qrels file's judgments in a workspace, under one judge, without recording any twice."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from trecbench.store.workspace import WorkspaceLike


@dataclass(frozen=True)
class QrelsImport:
    """What `import_qrels` did."""

    judge: str
    kind: str
    recorded: int  # judgments written
    repeated: int  # pairs this judge already had with the same grade: not written again
    negative: int  # negative grades (pooled, not judged): not judgments, skipped


def import_qrels(ws: WorkspaceLike, qrels: Any, judge: str, *, kind: str = "import") -> QrelsImport:
    """Record the judgments of `qrels` (a path or a frame: query_id, doc_id, relevance) as judge `judge`.

    kind: "import" (a file from elsewhere) or "human" (an assessor's judgments, counted as a person's
    by `prefer="human"`). A pair this judge already has with the same grade is not recorded again;
    negative grades are skipped. ws: a `Workspace` or its path.
    """
    from trecbench.qrels import read_qrels
    from trecbench.store import Judge, Judgment, as_workspace

    if kind not in ("import", "human"):
        raise ValueError(f"kind must be import or human, not {kind!r}")
    ws = as_workspace(ws)
    frame = qrels if isinstance(qrels, pd.DataFrame) else read_qrels(qrels)
    who = Judge(kind, judge)
    existing = ws.judgments()
    mine = existing[(existing["judge_kind"] == kind) & (existing["judge"] == judge)]
    have = set(zip(mine["query_id"], mine["doc_id"], mine["grade"]))
    negative = int((frame["relevance"] < 0).sum())
    rows = []
    for q, d, g in zip(frame["query_id"].astype(str), frame["doc_id"].astype(str), frame["relevance"]):
        if g >= 0 and (q, d, int(g)) not in have:
            have.add((q, d, int(g)))
            rows.append(Judgment(q, d, int(g), who))
    ws.record_many(rows)
    return QrelsImport(judge, kind, len(rows), len(frame) - negative - len(rows), negative)
