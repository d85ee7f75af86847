"""The one interface of pooling strategies: a judging order fixed in advance, or one chosen during judging.

Every strategy can drive a judging loop for one topic at a time:

    strategy.start(runs, topic)        # runs: {run name: docids in trec_eval order, cut at the pool depth}
    while (item := strategy.next()) is not None:
        query_id, doc_id = item
        strategy.record(query_id, doc_id, relevant)   # the judgment, as soon as it exists

A static strategy also gives every candidate of a whole pool a priority in one vectorised step
(`fused`); an adaptive one (`adaptive = True`) can only order documents from the judgments so far.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np


class Strategy(ABC):
    """A way to choose, one at a time, the next document of a topic's pool to judge."""

    name: ClassVar[str]
    adaptive: ClassVar[bool] = False
    citation: ClassVar[str] = ""
    summary: ClassVar[str] = ""  # a few words for the CLI's help
    param_help: ClassVar[dict[str, str]] = {}  # parameter -> what it means (the CLI's --NAME-PARAM help)

    @abstractmethod
    def start(self, runs: Mapping[str, Sequence[str]], topic: str) -> None:
        """Begin judging `topic`, whose pool is the union of `runs` (ranked docids per run, best first)."""

    @abstractmethod
    def next(self) -> tuple[str, str] | None:
        """The next (query_id, doc_id) to judge, or None when the topic's pool is exhausted."""

    def record(self, query_id: str, doc_id: str, relevant: bool) -> None:  # noqa: B027 (optional: non-adaptive ones ignore it)
        """Take the judgment of a document into account (of any document of the topic's pool)."""

    def params(self) -> dict[str, Any]:
        """The parameters this strategy was made with (stored in the pool's metadata)."""
        if not is_dataclass(self):
            return {}
        return {f.name: getattr(self, f.name) for f in fields(self)}


STRATEGIES: dict[str, type[Strategy]] = {}  # name -> class, filled as each strategy module is imported


def register(cls: type[Strategy]) -> type[Strategy]:
    """Class decorator: make a strategy findable by its `name`."""
    STRATEGIES[cls.name] = cls
    return cls


@dataclass(frozen=True)
class Candidates:
    """Runs' ranks aggregated per candidate (one row per distinct (topic, docid)), in the order of the keys."""

    first: np.ndarray  # each candidate's best row (lowest rank, then first run): its topic and docid are that row's
    best_rank: np.ndarray  # best (lowest) rank of the document in any run
    best_run: np.ndarray  # index of the first run (in the order given) with it at that rank
    n_runs: np.ndarray  # runs that retrieved it
    row_order: np.ndarray  # input rows sorted by (candidate, rank, run)
    row_candidate: np.ndarray  # candidate index of each row, in row_order


def aggregate(keys: Sequence[np.ndarray], run: np.ndarray, rank: np.ndarray) -> Candidates:
    """Group rows (one per run x retrieved document) into candidates: best rank, first run at it, runs.

    `keys`: what makes a row's candidate, as `np.lexsort` keys (least significant first, e.g. a docid's
    words, then the topic code); candidates come in the order of the keys. One stable sort by (keys, rank,
    run), each key in the narrowest integer type that holds it (numpy sorts 8- and 16-bit keys by radix).
    """
    order = np.lexsort((narrow(run), narrow(rank), *(narrow(k) for k in keys)))
    new = np.zeros(len(order), dtype=bool)
    if len(order):
        new[0] = True
        for k in keys:
            ranked = k[order]
            new[1:] |= ranked[1:] != ranked[:-1]
    return grouped(order, new, run, rank)


def grouped(order: np.ndarray, new: np.ndarray, run: np.ndarray, rank: np.ndarray) -> Candidates:
    """Candidates from the rows in `order`, sorted by (candidate, rank, run); `new` marks each candidate's first row."""
    starts = np.flatnonzero(new)
    counts = np.diff(np.r_[starts, len(order)]).astype(np.int64)
    first = order[starts]  # each candidate's best row: lowest rank, then first run
    row_candidate = np.repeat(np.arange(len(starts), dtype=np.int32), counts)
    return Candidates(first, rank[first], run[first], counts, order, row_candidate)


def narrow(values: np.ndarray) -> np.ndarray:
    """Integers of at least 0 in the narrowest unsigned type that holds them (uint8, uint16: a radix sort in numpy's
    stable sorts and lexsort, instead of a merge sort); other arrays unchanged."""
    if values.dtype.kind not in "iu" or not len(values) or values.min() < 0:
        return values
    top = int(values.max())
    for kind in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(kind).max:
            return values.astype(kind, copy=False)
    return values


def judging_order(topic: np.ndarray, fused: np.ndarray | None, cands: Candidates) -> np.ndarray:
    """Candidates ordered by topic, then fused score descending (if any), best rank, more runs, first run."""
    n_runs = cands.n_runs
    keys = [cands.best_run, (int(n_runs.max()) - n_runs) if len(n_runs) else n_runs, cands.best_rank]
    if fused is not None:
        keys.append(-fused)
    keys.append(topic)
    return np.lexsort([narrow(k) for k in keys])


class StaticStrategy(Strategy):
    """A strategy whose judging order is fixed before any judgment: a priority per candidate."""

    def fused(self, rank: np.ndarray, row_candidate: np.ndarray, n: int) -> np.ndarray | None:
        """A fused score per candidate (higher is judged first) from its rows' ranks; None: depth order."""
        return None

    def start(self, runs: Mapping[str, Sequence[str]], topic: str) -> None:
        self._topic = topic
        self._queue = topic_order(self, runs)
        self._at = 0
        self._done: set[str] = set()

    def next(self) -> tuple[str, str] | None:
        while self._at < len(self._queue):
            doc = self._queue[self._at]
            self._at += 1
            if doc not in self._done:
                return self._topic, doc
        return None

    def record(self, query_id: str, doc_id: str, relevant: bool) -> None:
        self._done.add(doc_id)


class RunArms(Strategy):
    """An adaptive strategy whose arms are the runs: it picks a run and judges that run's highest document
    not judged yet. A document judged through another run is passed over at no cost (`_front`)."""

    adaptive = True

    def start(self, runs: Mapping[str, Sequence[str]], topic: str) -> None:
        self._topic = topic
        self._lists = [list(docs) for docs in runs.values()]
        self._next_at = [0] * len(self._lists)
        self._judged: dict[str, bool] = {}

    def _front(self, run: int) -> list[bool]:
        """Move `run` past the documents at its front judged already; their judgments, in its order."""
        docs, at = self._lists[run], self._next_at[run]
        seen = []
        while at < len(docs) and docs[at] in self._judged:
            seen.append(self._judged[docs[at]])
            at += 1
        self._next_at[run] = at
        return seen

    def _has_next(self, run: int) -> bool:
        return self._next_at[run] < len(self._lists[run])

    def _pull(self, run: int) -> tuple[str, str]:
        return self._topic, self._lists[run][self._next_at[run]]

    def record(self, query_id: str, doc_id: str, relevant: bool) -> None:
        # every run whose next document this is sees it on its next step
        self._judged[doc_id] = bool(relevant)


def topic_order(strategy: StaticStrategy, runs: Mapping[str, Sequence[str]]) -> list[str]:
    """One topic's pool in the strategy's judging order (the same order a whole pool gets)."""
    lists = [list(docs) for docs in runs.values()]
    if not any(lists):
        return []
    docs = np.concatenate([np.asarray(d, dtype=object) for d in lists if d])
    run = np.concatenate([np.full(len(d), i, dtype=np.int64) for i, d in enumerate(lists) if d])
    rank = np.concatenate([np.arange(1, len(d) + 1, dtype=np.int64) for d in lists if d])
    import pandas as pd

    code, uniq = pd.factorize(docs)
    cands = aggregate([code.astype(np.int64)], run, rank)
    fused = strategy.fused(rank[cands.row_order], cands.row_candidate, len(cands.first))
    order = judging_order(np.zeros(len(cands.first), dtype=np.int64), fused, cands)
    return list(np.asarray(uniq, dtype=object)[code[cands.first[order]]])
