"""Move-to-Front pooling: keep judging the run that keeps giving relevant documents."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from trecbench.pooling.strategies import register
from trecbench.pooling.strategies.base import Strategy


@register
@dataclass
class MoveToFront(Strategy):
    """Move-to-Front (Cormack, Palmer & Clarke 1998), adaptive.

    Every run starts with the same priority. The next document to judge is the highest unjudged one
    of the run with the highest priority (ties: the run given first). A relevant document keeps that
    run in front; a non-relevant one lowers its priority by one, so the next run moves to the front.
    Documents already judged (found through another run) are skipped at no cost.
    """

    name = "mtf"
    summary = "adaptive, move-to-front"
    adaptive = True
    citation = ("G. V. Cormack, C. R. Palmer and C. L. A. Clarke. Efficient construction of large test "
                "collections. SIGIR 1998.")

    def start(self, runs: Mapping[str, Sequence[str]], topic: str) -> None:
        self._topic = topic
        self._lists = [list(docs) for docs in runs.values()]
        self._next_at = [0] * len(self._lists)
        self._priority = [0] * len(self._lists)
        self._judged: dict[str, bool] = {}
        self._pending: tuple[int, str] | None = None

    def next(self) -> tuple[str, str] | None:
        best = None
        for r, docs in enumerate(self._lists):
            at = self._next_at[r]
            while at < len(docs) and docs[at] in self._judged:
                at += 1
            self._next_at[r] = at
            if at < len(docs) and (best is None or self._priority[r] > self._priority[best]):
                best = r
        if best is None:
            return None
        doc = self._lists[best][self._next_at[best]]
        self._pending = (best, doc)
        return self._topic, doc

    def record(self, query_id: str, doc_id: str, relevant: bool) -> None:
        self._judged[doc_id] = bool(relevant)
        if self._pending is not None and self._pending[1] == doc_id:
            run = self._pending[0]
            self._pending = None
            if not relevant:
                self._priority[run] -= 1
