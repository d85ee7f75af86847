"""Move-to-Front pooling: keep judging the run that keeps giving relevant documents."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from trecbench.pooling.strategies.base import RunArms, register


@register
@dataclass
class MoveToFront(RunArms):
    """Move-to-Front (Cormack, Palmer & Clarke 1998), adaptive.

    Every run starts with the same priority. The next document to judge is the highest unjudged one
    of the run with the highest priority (ties: the run given first). A relevant document keeps that
    run in front; a non-relevant one lowers its priority by one, so the next run moves to the front.
    Documents already judged (found through another run) are skipped at no cost.
    """

    name = "mtf"
    summary = "adaptive, move-to-front"
    citation = ("G. V. Cormack, C. R. Palmer and C. L. A. Clarke. Efficient construction of large test "
                "collections. SIGIR 1998.")

    def start(self, runs: Mapping[str, Sequence[str]], topic: str) -> None:
        super().start(runs, topic)
        self._priority = [0] * len(self._lists)
        self._pending: tuple[int, str] | None = None

    def next(self) -> tuple[str, str] | None:
        best = None
        for r in range(len(self._lists)):
            self._front(r)
            if self._has_next(r) and (best is None or self._priority[r] > self._priority[best]):
                best = r
        if best is None:
            return None
        item = self._pull(best)
        self._pending = (best, item[1])
        return item

    def record(self, query_id: str, doc_id: str, relevant: bool) -> None:
        super().record(query_id, doc_id, relevant)
        if self._pending is not None and self._pending[1] == doc_id:
            run = self._pending[0]
            self._pending = None
            if not relevant:
                self._priority[run] -= 1
