"""The judging loop: a strategy proposes, a judge (model, person or replayed qrels) records, the budget stops it.

Duplicates are judged once: when a strategy proposes a document whose group's representative is
already judged, the session records that judgment for it at no cost and asks again.
"""
from __future__ import annotations

from typing import Iterator, Protocol

from trecbench.pooling.strategies.base import Strategy


class Judgeable(Protocol):
    """What a judging session needs of a pool (`trecbench.pooling.Pool` is one); this module does not
    import the pool module, which imports it."""

    @property
    def topics(self) -> list[str]: ...

    def group_of(self) -> dict[tuple[str, str], str]: ...

    def ranked_lists(self, topic: str) -> dict[str, list[str]]: ...


class JudgingSession:
    """Topic by topic, `next()` gives the (query_id, doc_id) to judge and `record()` takes its judgment.

    `budget` caps the judgments per topic. `judgments` holds every (query_id, doc_id) -> relevant
    recorded, `spent` the number of judgments asked for.
    """

    def __init__(self, pool: Judgeable, strategy: Strategy, *, budget: int | None = None,
                 topics: list[str] | None = None):
        self.pool = pool
        self.strategy = strategy
        self.budget = budget
        self.group = pool.group_of()
        self.judgments: dict[tuple[str, str], bool] = {}
        self.spent = 0
        self.spent_by_topic: dict[str, int] = {}
        self._topics: Iterator[str] = iter(pool.topics if topics is None else topics)
        self._topic: str | None = None
        self._pending: dict[tuple[str, str], str] = {}  # representative asked for -> docid the strategy proposed
        self._advance()

    def _advance(self) -> None:
        self._topic = next(self._topics, None)
        if self._topic is not None:
            self.spent_by_topic[self._topic] = 0
            self.strategy.start(self.pool.ranked_lists(self._topic), self._topic)

    @property
    def topic(self) -> str | None:
        """The topic being judged (None once every topic is done)."""
        return self._topic

    def next(self) -> tuple[str, str] | None:
        """The next document to judge (a group's representative), or None when every topic is done."""
        while self._topic is not None:
            if self.budget is not None and self.spent_by_topic[self._topic] >= self.budget:
                self._advance()
                continue
            proposed = self.strategy.next()
            if proposed is None:
                self._advance()
                continue
            qid, doc = proposed
            rep = self.group.get((qid, doc), doc)
            if (qid, rep) in self.judgments:  # judged already, as a duplicate's representative
                self.judgments.setdefault((qid, doc), self.judgments[(qid, rep)])
                self.strategy.record(qid, doc, self.judgments[(qid, rep)])
                continue
            self._pending[(qid, rep)] = doc
            return qid, rep
        return None

    def record(self, query_id: str, doc_id: str, relevant: bool) -> None:
        """The judgment of `doc_id` for `query_id` (normally the one `next()` gave)."""
        relevant = bool(relevant)
        rep = self.group.get((query_id, doc_id), doc_id)
        self.judgments[(query_id, rep)] = relevant
        self.judgments[(query_id, doc_id)] = relevant
        self.spent += 1
        self.spent_by_topic[query_id] = self.spent_by_topic.get(query_id, 0) + 1
        proposed = self._pending.pop((query_id, rep), doc_id)
        self.strategy.record(query_id, proposed, relevant)
        if proposed != rep:
            self.strategy.record(query_id, rep, relevant)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        """Iterate over documents to judge; call `record` for each before asking for the next."""
        while (item := self.next()) is not None:
            yield item
