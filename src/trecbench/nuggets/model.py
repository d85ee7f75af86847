"""The nugget: one fact a good answer to a topic states, with the documents that support it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, NamedTuple

IMPORTANCE = ("vital", "okay")
STATUS = ("draft", "approved")
ORIGIN = ("llm", "extractive", "human", "import")

# A support alternative is a joint group: every document in it is needed. The alternatives are
# alternatives: any one of them is enough. (("A",), ("B", "C")) reads "A, or B together with C".
Support = tuple[tuple[str, ...], ...]


class SourceSpan(NamedTuple):
    """Characters `start`-`end` of source document `source_id` (a `trecbench.sources.Span`'s fields)."""

    source_id: str
    start: int
    end: int


class SpanLink(str):
    """A supporting document that is one span of a passage: characters `start`-`end` of its text (a sentence, a
    table row), with where that is in its source document and the sha256 of the span's text when known.

    It is its docid wherever only docids are compared (a context of the passage holds its span, so
    `satisfied_group` and every set of docids treat it as the passage); two span links are the same only
    when their docid and characters are (`link_key`), so one passage can support two nuggets by two spans.
    """

    start: int
    end: int
    source: SourceSpan | None
    span_hash: str | None

    def __new__(cls, docid: str, start: int, end: int, source: SourceSpan | None = None,
                span_hash: str | None = None) -> "SpanLink":
        if not (isinstance(start, int) and isinstance(end, int)) or isinstance(start, bool) or isinstance(end, bool) \
                or not 0 <= start < end:
            raise ValueError(f"a span of {docid!r} must be 0 <= start < end, not {start!r}-{end!r}")
        self = super().__new__(cls, docid)
        self.start, self.end, self.source, self.span_hash = start, end, source, span_hash
        return self

    @property
    def docid(self) -> str:
        return str.__str__(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SpanLink):
            return link_key(self) == link_key(other)
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = str.__hash__

    def __repr__(self) -> str:
        return f"SpanLink({self.docid!r}, {self.start}, {self.end})"

    def __reduce__(self):  # pickled (copied to a worker) with its span
        return (SpanLink, (self.docid, self.start, self.end, self.source, self.span_hash))

    def as_dict(self) -> dict[str, Any]:
        """The span as a nuggets file's `spans` entry holds it."""
        out: dict[str, Any] = {"start": self.start, "end": self.end}
        if self.source is not None:
            out.update(source_id=self.source.source_id, start_char=self.source.start, end_char=self.source.end)
        if self.span_hash is not None:
            out["hash"] = self.span_hash
        return out


def support_label(doc: str) -> str:
    """A supporting document as messages show it: its docid, a span link's characters after it (`d1[10:42]`)."""
    if isinstance(doc, SpanLink):
        return f"{doc.docid}[{doc.start}:{doc.end}]"
    return str(doc)


def link_key(doc: str) -> tuple[str, int | None, int | None]:
    """What tells two supporting documents apart: the docid, and the span's characters of a `SpanLink`."""
    if isinstance(doc, SpanLink):
        return (doc.docid, doc.start, doc.end)
    return (str(doc), None, None)


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
        """The nugget as one entry of a nuggets file (`qid` is the topic line's); `spans` (beside `support`,
        one entry per supporting document: null for a whole passage) only when a link is a span."""
        record: dict[str, Any] = {"id": self.id, "text": self.text, "importance": self.importance,
                                  "support": [[str.__str__(d) for d in g] for g in self.support],
                                  "status": self.status, "origin": self.origin}
        if any(isinstance(d, SpanLink) for g in self.support for d in g):
            record["spans"] = [[d.as_dict() if isinstance(d, SpanLink) else None for d in g] for g in self.support]
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
    """Support as a tuple of non-empty joint groups with duplicates removed (order kept); a `SpanLink` is kept
    as it is, told apart from its passage and its passage's other spans (`link_key`)."""
    groups: list[tuple[str, ...]] = []
    seen: set[tuple] = set()
    for group in value or ():
        docs = tuple({link_key(d): d if isinstance(d, SpanLink) else str(d) for d in group}.values())
        key = tuple(link_key(d) for d in docs)
        if docs and key not in seen:
            seen.add(key)
            groups.append(docs)
    return tuple(groups)


def satisfied_group(support: Support, docids: Iterable[str] | set[str]) -> tuple[str, ...] | None:
    """The first alternative whose documents are all in `docids`, or None if no alternative is."""
    have = docids if isinstance(docids, (set, frozenset)) else set(docids)
    for group in support:
        if all(d in have for d in group):
            return group
    return None
