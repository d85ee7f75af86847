"""Where passages come from: each passage's source document and character span, and the sources' texts.

A corpus record may name its source document (`source_id`) and the characters of the source it holds
(`start_char`, `end_char`, the fields of MS MARCO v2.1 segmented): its text is
`source_text[start_char:end_char]`. A sources file (JSONL or TSV, read like a corpus: `id` and `text` or
`contents`) may hold the full documents. With spans, the benchmark's judgments and evidence are anchored in
source text, not in one chunking: a new corpus version, or a run made on another chunking of the same
sources, is linked to them by span overlap.

Spans are kept as columns (a docid list and numpy arrays), so a corpus of a million passages costs tens of
megabytes, not a Python object per field.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from trecbench.errors import InputError, Problem
from trecbench.files.lines import iter_json_objects, looks_like_jsonl, record_id

SOURCE_KEY = "source_id"
START_KEY, END_KEY = "start_char", "end_char"
ID_KEYS = ("id", "docid", "_id", "doc_id")  # the corpus reader's (trecbench.corpus.ID_KEYS)
TEXT_KEYS = ("contents", "text", "segment", "body")


class Span(NamedTuple):
    """Characters `start` (inclusive) to `end` (exclusive) of the source document `source_id`."""

    source_id: str
    start: int
    end: int

    def __len__(self) -> int:
        return self.end - self.start

    def overlap(self, other: Span) -> int:
        """How many characters the two spans share (0 for spans of different sources)."""
        if other.source_id != self.source_id:
            return 0
        return max(0, min(self.end, other.end) - max(self.start, other.start))

    def contains(self, other: Span) -> bool:
        """Whether every character of `other` is in this span."""
        return other.source_id == self.source_id and self.start <= other.start and other.end <= self.end

    def as_dict(self) -> dict:
        return {SOURCE_KEY: self.source_id, START_KEY: self.start, END_KEY: self.end}


@dataclass
class PassageSpans:
    """The spans of a corpus's passages that have one: docid -> Span, and per source its passages in order.

    `docids[i]` has span (`sources[source[i]]`, `start[i]`, `end[i]`); `line[i]` is its line in the corpus file.
    """

    path: str
    docids: list[str]
    sources: list[str]  # source ids, by code
    source: np.ndarray  # int64 code of each passage's source
    start: np.ndarray  # int64
    end: np.ndarray  # int64
    line: np.ndarray  # int64, 1-based
    _row: dict[str, int] = field(default_factory=dict, repr=False)
    _by_source: dict[int, np.ndarray] = field(default_factory=dict, repr=False)  # code -> rows by (start, end)
    _code: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._row = {d: i for i, d in enumerate(self.docids)}
        self._code = {s: i for i, s in enumerate(self.sources)}
        order = np.lexsort((self.end, self.start, self.source))
        codes = self.source[order]
        cuts = np.flatnonzero(np.diff(codes)) + 1
        for rows in np.split(order, cuts) if len(order) else []:
            self._by_source[int(self.source[rows[0]])] = rows

    def __len__(self) -> int:
        return len(self.docids)

    def __contains__(self, docid: object) -> bool:
        return docid in self._row

    def get(self, docid: str) -> Span | None:
        """The passage's span, or None if it has none (or is not in the corpus)."""
        i = self._row.get(docid)
        if i is None:
            return None
        return Span(self.sources[int(self.source[i])], int(self.start[i]), int(self.end[i]))

    def source_ids(self) -> list[str]:
        """The source documents that have at least one passage, in order of first appearance."""
        return [self.sources[c] for c in sorted(self._by_source, key=lambda c: int(self._by_source[c].min()))]

    def passages_of(self, source_id: str) -> list[tuple[str, Span]]:
        """A source's passages with their spans, by start (then end)."""
        rows = self._rows_of(source_id)
        return [(self.docids[i], Span(source_id, int(self.start[i]), int(self.end[i]))) for i in rows]

    def overlapping(self, span: Span) -> list[tuple[str, int]]:
        """(docid, characters shared) of each passage that shares at least one character with `span`, by start."""
        rows = self._rows_of(span.source_id)
        if not len(rows):
            return []
        shared = np.minimum(self.end[rows], span.end) - np.maximum(self.start[rows], span.start)
        return [(self.docids[int(i)], int(s)) for i, s in zip(rows[shared > 0], shared[shared > 0])]

    def containing(self, span: Span) -> list[str]:
        """The passages whose span holds every character of `span`, shortest first (then by start)."""
        rows = self._rows_of(span.source_id)
        rows = rows[(self.start[rows] <= span.start) & (self.end[rows] >= span.end)]
        rows = rows[np.argsort(self.end[rows] - self.start[rows], kind="stable")]
        return [self.docids[int(i)] for i in rows]

    def _rows_of(self, source_id: str) -> np.ndarray:
        code = self._code.get(source_id)
        return self._by_source.get(code, np.zeros(0, dtype=np.int64)) if code is not None else np.zeros(0, np.int64)

    def line_of(self, docid: str) -> int:
        """The passage's line in the corpus file (0 if it has no span)."""
        i = self._row.get(docid)
        return 0 if i is None else int(self.line[i])


def read_spans(corpus: str | Path) -> PassageSpans:
    """The source spans of a JSONL corpus file's passages (`source_id`, `start_char`, `end_char`).

    A passage without any of the three fields has no span; one with some but not all, a span that is not
    0 <= start < end, or a field of the wrong type is an InputError (`path:line`, every problem listed).
    A TSV corpus has no spans. Only these fields are read: use `check_spans` to compare texts.
    """
    path = Path(corpus)
    problems: list[Problem] = []
    docids: list[str] = []
    codes: dict[str, int] = {}
    source, start, end, line = [], [], [], []
    if path.is_file() and looks_like_jsonl(path):
        for number, record, error in iter_json_objects(path):
            if record is None:
                problems.append(Problem(str(path), number, error))
                continue
            span, docid, why = _span_of(record)
            if why:
                problems.append(Problem(str(path), number, why))
            elif span is not None and docid is not None:
                docids.append(docid)
                source.append(codes.setdefault(span.source_id, len(codes)))
                start.append(span.start)
                end.append(span.end)
                line.append(number)
    elif not path.is_file():
        raise InputError(str(path), 0, "no such file")
    if problems:
        raise InputError.of(problems)
    return PassageSpans(str(path), docids, list(codes), np.asarray(source, dtype=np.int64),
                        np.asarray(start, dtype=np.int64), np.asarray(end, dtype=np.int64),
                        np.asarray(line, dtype=np.int64))


def _span_of(record: dict) -> tuple[Span | None, str | None, str]:
    """(span or None, docid, what is wrong) of one corpus record."""
    present = [k for k in (SOURCE_KEY, START_KEY, END_KEY) if k in record]
    _, docid, why = record_id(record, ID_KEYS)
    if not present:
        return None, docid, ""
    if docid is None:
        return None, None, why
    if len(present) < 3:
        missing = [k for k in (SOURCE_KEY, START_KEY, END_KEY) if k not in record]
        return None, docid, f"docid {docid!r} has {', '.join(present)} but not {', '.join(missing)}"
    _, source_id, why = record_id(record, (SOURCE_KEY,))
    if source_id is None:
        return None, docid, why
    start, end = record[START_KEY], record[END_KEY]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
        return None, docid, f"docid {docid!r}: {START_KEY} and {END_KEY} must be integers"
    if not 0 <= start < end:
        return None, docid, f"docid {docid!r}: span {start}-{end} is not 0 <= {START_KEY} < {END_KEY}"
    return Span(source_id, start, end), docid, ""


def check_spans(corpus: str | Path, spans: PassageSpans, sources: str | Path | None = None) -> None:
    """Refuse a corpus whose passage texts are not the spans they claim: InputError listing every passage
    (`path:line`) whose text differs from characters start-end of its source.

    With a sources file, each text is compared with the source's own characters (a source absent from the
    file, or shorter than a span, is a problem too). Without one, passages of a source that overlap must
    agree on the characters they share.
    """
    from trecbench.corpus import open_corpus

    where = str(corpus)
    docs = open_corpus(corpus)
    full = open_corpus(sources) if sources is not None else None
    problems: list[Problem] = []
    for source_id in spans.source_ids():
        passages = spans.passages_of(source_id)
        if full is not None:
            problems += _against_source(where, spans, docs, full, source_id, passages)
        else:
            problems += _against_neighbours(where, spans, docs, passages)
    if problems:
        raise InputError.of(sorted(problems, key=lambda p: p.line))


def _against_source(where, spans, docs, full, source_id, passages) -> list[Problem]:
    document = full.get(source_id)
    line = {d: spans.line_of(d) for d, _ in passages}
    if document is None:
        return [Problem(where, line[d], f"docid {d!r}: source {source_id!r} is not in the sources file")
                for d, _ in passages]
    out = []
    for docid, span in passages:
        text = docs.text(docid) or ""
        if span.end > len(document.text):
            out.append(Problem(where, line[docid], f"docid {docid!r}: span {span.start}-{span.end} ends after "
                                                   f"source {source_id!r} ({len(document.text)} characters)"))
        elif document.text[span.start:span.end] != text:
            out.append(Problem(where, line[docid], f"docid {docid!r}: text is not characters {span.start}-{span.end} "
                                                   f"of source {source_id!r}"))
    return out


def _against_neighbours(where, spans, docs, passages) -> list[Problem]:
    out = []
    known: list[tuple[Span, str, str]] = []  # (span, docid, text) of the passages before, by start
    for docid, span in passages:
        text = docs.text(docid) or ""
        line = spans.line_of(docid)
        if len(text) != len(span):
            out.append(Problem(where, line, f"docid {docid!r}: span {span.start}-{span.end} holds {len(span)} "
                                            f"characters, its text {len(text)}"))
            continue
        for other, other_id, other_text in known:
            a, b = max(span.start, other.start), min(span.end, other.end)
            if a < b and text[a - span.start:b - span.start] != other_text[a - other.start:b - other.start]:
                out.append(Problem(where, line, f"docid {docid!r}: characters {a}-{b} of source {span.source_id!r} "
                                                f"differ from {other_id!r}'s"))
                break
        known = [k for k in known if k[0].end > span.start] + [(span, docid, text)]
    return out


def source_text(spans: PassageSpans, docs, source_id: str) -> tuple[str, np.ndarray]:
    """A source's text as its passages give it, and a mask of the characters no passage covers (filled
    with spaces in the text): what a corpus without a sources file knows of a document."""
    passages = spans.passages_of(source_id)
    length = max((s.end for _, s in passages), default=0)
    chars = [" "] * length
    covered = np.zeros(length, dtype=bool)
    for docid, span in passages:
        chars[span.start:span.end] = list(docs.text(docid) or " " * len(span))
        covered[span.start:span.end] = True
    return "".join(chars), ~covered


DEFAULT_COVER = 1.0  # every character: a condition cut into the neighbouring chunk is not silently counted


def held(span: Span, others: list[Span] | tuple[Span, ...]) -> int:
    """How many characters of `span` the `others` hold together, each character counted once however many
    of them hold it (spans of other sources hold none)."""
    pieces = sorted((max(span.start, o.start), min(span.end, o.end)) for o in others
                    if o.source_id == span.source_id and o.start < span.end and o.end > span.start)
    total, reached = 0, span.start
    for start, end in pieces:
        start = max(start, reached)
        if end > start:
            total += end - start
            reached = end
    return total


def covered(span: Span, others: list[Span] | tuple[Span, ...], share: float = DEFAULT_COVER) -> bool:
    """The coverage rule linking two chunkings: `others` cover `span` when together they hold at least
    `share` of its characters (share 1: all of them, which one passage does when it contains the span)."""
    if not 0 < share <= 1:
        raise ValueError(f"the share of characters to cover must be in (0, 1], not {share}")
    return held(span, others) >= share * len(span) - 1e-9
