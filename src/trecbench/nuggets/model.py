"""The nugget: one fact a good answer to a topic states, with the documents that support it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

IMPORTANCE = ("vital", "okay")
STATUS = ("draft", "approved")
ORIGIN = ("llm", "extractive", "human", "import")

# A support alternative is a joint group: every document in it is needed. The alternatives are
# alternatives: any one of them is enough. (("A",), ("B", "C")) reads "A, or B together with C".
Support = tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Nugget:
    """One nugget of a topic.

    `importance` is "vital" (an answer must state it) or "okay" (good to have); `support` lists the
    alternative sets of documents that establish it, each a joint group; `status` is "draft" until a
    person approves it; `origin` says who made it. `extra` keeps every other field of the file it
    came from (TREC 2025's `mapped_sub_narrative` and `source`, for example).
    """

    id: str
    qid: str
    text: str
    importance: str = "vital"
    support: Support = ()
    status: str = "approved"
    origin: str = "import"
    extra: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def vital(self) -> bool:
        return self.importance == "vital"

    @property
    def sources(self) -> tuple[str, ...]:
        """Every document named in `support`, each once, in order of first mention."""
        return tuple(dict.fromkeys(d for group in self.support for d in group))

    def as_dict(self) -> dict[str, Any]:
        """The nugget as one entry of a nuggets file (`qid` is the topic line's)."""
        record: dict[str, Any] = {"id": self.id, "text": self.text, "importance": self.importance,
                                  "support": [list(g) for g in self.support], "status": self.status,
                                  "origin": self.origin}
        for key, value in self.extra.items():
            record.setdefault(key, value)
        return record


@dataclass(frozen=True)
class TopicNuggets:
    """The nuggets of one topic, in file order, with the topic's query text when the file has it."""

    qid: str
    nuggets: tuple[Nugget, ...]
    query: str | None = None

    @property
    def vital(self) -> tuple[Nugget, ...]:
        return tuple(n for n in self.nuggets if n.vital)


def normalise_support(value: Iterable[Iterable[str]] | None) -> Support:
    """Support as a tuple of non-empty joint groups with duplicates removed (order kept)."""
    groups: list[tuple[str, ...]] = []
    for group in value or ():
        docs = tuple(dict.fromkeys(str(d) for d in group))
        if docs and docs not in groups:
            groups.append(docs)
    return tuple(groups)


def satisfied_group(support: Support, docids: Iterable[str] | set[str]) -> tuple[str, ...] | None:
    """The first alternative whose documents are all in `docids`, or None if no alternative is."""
    have = docids if isinstance(docids, (set, frozenset)) else set(docids)
    for group in support:
        if all(d in have for d in group):
            return group
    return None
