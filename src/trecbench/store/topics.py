"""The workspace's topics as stored at init, and what the web app's topic lists read of each topic.

Topics are copied into the store when the workspace is made, so the bench keeps them even if the file
they came from changes. A workspace made without topics still knows the topics of its pools.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Iterable

from .base import Connected

if TYPE_CHECKING:
    from trecbench.topics import Topic


class TopicStore(Connected):
    """The workspace's topics (part of `Workspace`)."""

    def topics(self) -> dict:
        """{qid: Topic} as stored at init."""
        from trecbench.topics import Topic

        rows = self.connection().execute("SELECT qid, text, narrative, fields_json FROM topics ORDER BY qid")
        return {q: Topic(q, t, n, json.loads(f)) for q, t, n, f in rows}

    def add_topics(self, topics: Iterable[Topic]) -> None:
        """Store the topics (what `Workspace.init` copies from the topics file)."""
        with self.transaction() as c:
            c.executemany("INSERT INTO topics (qid, text, narrative, fields_json) VALUES (?, ?, ?, ?)",
                          [(t.qid, t.text, t.narrative, json.dumps(t.fields, sort_keys=True)) for t in topics])

    def topic_text(self, qid: str) -> tuple[str, str | None] | None:
        """(text, narrative) of a stored topic, or None when the store has no such topic."""
        return self.connection().execute("SELECT text, narrative FROM topics WHERE qid = ?", (qid,)).fetchone()

    def topic_texts(self) -> dict[str, str]:
        """{qid: text} of every stored topic."""
        return dict(self.connection().execute("SELECT qid, text FROM topics").fetchall())

    def known_topic(self, qid: str) -> bool:
        """A stored topic, or one of any pool's (a workspace made without topics still has pools)."""
        row = self.connection().execute("SELECT 1 FROM topics WHERE qid = ? UNION ALL "
                                        "SELECT 1 FROM pool_candidates WHERE qid = ? LIMIT 1", (qid, qid)).fetchone()
        return row is not None

    def nugget_counts_by_topic(self) -> list[tuple[str, int, int, int]]:
        """(qid, live nuggets, vital, approved) of each topic with live nuggets: counted in SQL, so the nugget
        topic list does not read every nugget."""
        from trecbench.store.nuggets import nugget_counts_by_topic

        return nugget_counts_by_topic(self.connection())
