"""Moving a workspace to a new corpus version: every judgment and every nugget's supporting-document link of
the current version is accounted for, none dropped.

- carried: the same docid with the same text: nothing to do.
- mapped: the passage's span text is found unchanged in the new version of its source and ONE new passage
  contains it: the judgment is copied to that passage (`copied_from` names the judgment, `corpus_version`
  the new version), a link is pointed at it.
- split: the unchanged text is now covered only by two or more new passages together: the judgment is copied
  to each of them flagged "may be cut" (the qrels count each meanwhile: every part holds some of the judged
  text; a person's judgment of a part replaces the copy under --prefer human); a link becomes a joint
  (AND) group of the parts. Either way the parts go into the review pool, since a condition or an
  exception may have been cut into the neighbouring chunk.
- changed: the text is not in the new source as it was: queued for people, in a review pool of the new
  passages that overlap where the text most likely is now (`trecbench.versions.locate`), with a word diff.
- retired: the source is gone (or, for a passage without a span, its docid): listed.

A link that is a span of its passage (a sentence an expert marked) is carried by the span, not the passage:
its passage unchanged, carried; else its characters are looked for in the new source like a passage's, so
a span inside one new passage is mapped to it (new characters of the new passage), a span the new chunking
cuts becomes a joint group of its pieces, and a span whose text changed is queued. Its `ref` is
`nugget#alternative@start:end`.

Stored judgments and nugget versions are never overwritten: copies and new link versions are added.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from trecbench.sources import PassageSpans, Span, source_text
from trecbench.store import corpus_versions as queries
from trecbench.store.corpus_versions import PassageRow

from .locate import find_edited, find_exact
from trecbench.judging.samples import CORPUS_REVIEW
from trecbench.store import as_workspace

from .passages import checked_spans, digest, register_version, version_name
from .register import ensure_versions

if TYPE_CHECKING:
    from trecbench.store import Workspace

__all__ = ["OUTCOMES", "KINDS", "REVIEW", "MAY_BE_CUT", "Outcome", "CorpusUpdate", "update_corpus"]

OUTCOMES = ("carried", "mapped", "split", "changed", "retired")
KINDS = ("judgment", "link")  # judgments; nuggets' supporting-document links
REVIEW = CORPUS_REVIEW  # the strategy of an update's review pool (trecbench.judging.samples)
MAY_BE_CUT = "may be cut"


@dataclass(frozen=True)
class Ref:
    """A judgment or a link of the current version: its kind, topic, id (judgment id; nugget#alternative), docid
    and passage (None: a link to a docid the version does not have)."""

    kind: str
    qid: str
    ref: str
    docid: str
    passage: PassageRow | None
    grade: int | None = None
    within: tuple[int, int] | None = None  # a span link's characters of the passage's text


@dataclass(frozen=True)
class Outcome:
    """What an update does with one judgment or link: its outcome, the new passages it goes to (mapped: one;
    split: the group; changed: the review pool), where its text is now and that text (changed), and why."""

    kind: str
    outcome: str
    qid: str
    ref: str
    docid: str
    old_hash: bytes | None
    targets: tuple[str, ...] = ()
    where: Span | None = None
    new_text: str | None = None
    note: str = ""
    grade: int | None = field(default=None, compare=False)  # a judgment's grade


@dataclass(frozen=True)
class CorpusUpdate:
    """An update's account: counts per kind and outcome, what there was per kind, the items not carried."""

    previous: str
    version: str
    corpus: str
    counts: dict[str, dict[str, int]]
    totals: dict[str, int]
    items: tuple[Outcome, ...]
    dry_run: bool
    review_pool: str | None = None
    passages: int = 0
    links_updated: int = 0
    carried: frozenset[str] = field(default=frozenset(), repr=False)  # the docids of what was carried

    def balanced(self) -> bool:
        """Whether carried + mapped + split + changed + retired equals what there was, for every kind."""
        return all(sum(self.counts[k].values()) == self.totals[k] for k in KINDS)


class _Sources:
    """The new version's source texts, from the sources file or (without one) as its passages give them;
    one kept at a time (references are visited source by source)."""

    def __init__(self, spans: PassageSpans, docs: Any, full: Any):
        self.spans, self.docs, self.full = spans, docs, full
        self._id: str | None = None
        self._text: str | None = None

    def text(self, source_id: str) -> str | None:
        if source_id != self._id:
            self._id, self._text = source_id, self._read(source_id)
        return self._text

    def _read(self, source_id: str) -> str | None:
        if self.full is not None:
            doc = self.full.get(source_id)
            if doc is not None:
                return doc.text
        if not self.spans.passages_of(source_id):
            return None
        return source_text(self.spans, self.docs, source_id)[0]


def update_corpus(ws: "Workspace | str | os.PathLike", corpus: str, *, sources: str | None = None, dry_run: bool = False,
                  author: str = "corpus-update") -> CorpusUpdate:
    """Compare the workspace's current corpus version with `corpus` (its sources file `sources`) and account
    for every judgment and nugget link (module doc); unless `dry_run`, register the new version, record the
    copies, relink the nuggets, store the review pool and make the new corpus the workspace's.

    InputError for a corpus whose passages are not their spans (`path:line`).
    """
    ws = as_workspace(ws)
    spans = checked_spans(corpus, sources)
    if dry_run and not queries.version_rows(ws.connection()):
        # a workspace made before versions existed registers v1 first: in a transaction undone afterwards
        try:
            with ws.transaction():
                raise _Undone(_account(ws, corpus, sources, spans, dry_run=True)[0])
        except _Undone as undone:
            return undone.report
    report, docs, texts, parent = _account(ws, corpus, sources, spans, dry_run=dry_run)
    if dry_run:
        return report
    return _apply(ws, report, spans, docs, sources, parent, texts, author)


class _Undone(Exception):
    """Carries a dry run's account out of the transaction it rolls back."""

    def __init__(self, report: CorpusUpdate):
        super().__init__("dry run")
        self.report = report


def _account(ws, corpus: str, sources: str | None, spans: PassageSpans, *,
             dry_run: bool) -> tuple[CorpusUpdate, Any, dict[bytes, str], int]:
    """The update's account, the new corpus, the old texts it read and the current version's id."""
    from trecbench.corpus import open_corpus
    from trecbench.nuggets.store import NuggetStore

    versions = ensure_versions(ws)
    old, first = versions[-1], versions[0]
    docs = open_corpus(corpus)
    refs = _references(ws, NuggetStore(ws), old.id, first.id)
    new_hash = {docid: _digest_or_none(docs.text(docid)) for docid in {r.docid for r in refs}}
    moved = [r for r in refs if r.passage is not None and new_hash[r.docid] != r.passage.text_hash]
    texts = _old_texts(ws, moved, old)  # only what did not stay: a carried passage's text is in the new file
    outcomes = _classify(refs, texts, new_hash, spans, docs, open_corpus(sources) if sources else None)
    report = _report(old.name, version_name(len(versions) + 1), corpus, refs, outcomes, dry_run)
    return report, docs, texts, old.id


def _digest_or_none(text: str | None) -> bytes | None:
    return None if text is None else digest(text)


def _references(ws, nuggets, current: int, first: int) -> list[Ref]:
    conn = ws.connection()
    refs = [Ref("judgment", qid, str(jid), docid, PassageRow(docid, src, start, end, h), grade)
            for jid, qid, docid, grade, src, start, end, h in queries.live_judgments(conn, current, first)]
    links = [(qid, f"{n.id}#{a}" + (f"@{link.start}:{link.end}" if link.is_span else ""), link.docid,
              (link.start, link.end) if link.is_span else None)
             for qid, topic in nuggets.topics().items() for n in topic
             for a, group in enumerate(n.support) for link in group]
    known = queries.passage_rows(conn, current, {d for _, _, d, _ in links})
    return refs + [Ref("link", qid, ref, docid, known.get(docid), within=within) for qid, ref, docid, within in links]


def _old_texts(ws, refs: list[Ref], old) -> dict[bytes, str]:
    """{hash: text} of the referenced passages: kept in the store, else read from the old corpus file when
    its text still has the hash."""
    from trecbench.corpus import open_corpus

    hashes = {r.passage.text_hash: r.docid for r in refs if r.passage is not None}
    texts = queries.kept_texts(ws.connection(), hashes)
    missing = {h: d for h, d in hashes.items() if h not in texts}
    source = ws.resolve(old.corpus)
    if missing and source and (source.startswith("irds:") or os.path.isfile(source)):
        docs = open_corpus(source)
        for h, docid in missing.items():
            text = docs.text(docid)
            if text is not None and digest(text) == h:
                texts[h] = text
    return texts


def _classify(refs: list[Ref], texts: dict[bytes, str], new_hash: dict[str, bytes | None], spans: PassageSpans,
              docs, full) -> list[Outcome]:
    """Each reference's outcome, in the references' order (visited source by source)."""
    found = _Sources(spans, docs, full)
    def source_of(i: int) -> str:
        passage = refs[i].passage
        return (passage.source_id or "") if passage is not None else ""

    order = sorted(range(len(refs)), key=source_of)
    out: list[Outcome | None] = [None] * len(refs)
    for i in order:
        out[i] = _one(refs[i], texts, new_hash.get(refs[i].docid), spans, docs, found)
    return [o for o in out if o is not None]


def _one(ref: Ref, texts, new_hash, spans: PassageSpans, docs, found: _Sources) -> Outcome:
    p = ref.passage
    base = Outcome(ref.kind, "carried", ref.qid, ref.ref, ref.docid, p.text_hash if p else None, grade=ref.grade)
    if p is None:
        return replace(base, outcome="retired", note="not a passage of the version before")
    if new_hash == p.text_hash:
        return base
    if p.source_id is None:
        if new_hash is None:
            return replace(base, outcome="retired", note="no source span, and the docid is gone")
        return replace(base, outcome="changed", targets=(ref.docid,), new_text=docs.text(ref.docid),
                       note="no source span: its text changed")
    source = found.text(p.source_id)
    if source is None:
        return replace(base, outcome="retired", note=f"source {p.source_id!r} is gone")
    if ref.within is not None:
        return _by_marked_span(base, p, ref.within, texts, source, spans)
    return _by_span(base, p, texts.get(p.text_hash), source, spans)


def _by_marked_span(base: Outcome, p: PassageRow, within: tuple[int, int], texts: dict[bytes, str], source: str,
                    spans: PassageSpans) -> Outcome:
    """A span link's outcome: its characters of the old passage followed like a passage (`_by_span`)."""
    assert p.source_id is not None and p.start is not None
    whole = texts.get(p.text_hash)
    if whole is None and p.end is not None and digest(source[p.start:p.end]) == p.text_hash:
        whole = source[p.start:p.end]
    text = whole[within[0]:within[1]] if whole is not None else None
    row = PassageRow(p.docid, p.source_id, p.start + within[0], p.start + within[1],
                     digest(text) if text is not None else b"")
    if text is not None:
        texts[row.text_hash] = text  # kept with the update, so the review shows the span's old text
    return _by_span(replace(base, old_hash=row.text_hash if text is not None else None), row, text, source, spans)


def _by_span(base: Outcome, p: PassageRow, old_text: str | None, source: str, spans: PassageSpans) -> Outcome:
    """The outcome of a passage with a span whose source is in the new version: where its text is now."""
    assert p.source_id is not None and p.start is not None and p.end is not None
    if old_text is None and digest(source[p.start:p.end]) == p.text_hash:
        old_text = source[p.start:p.end]
    if old_text is None:  # neither kept nor in the old corpus file: compared where it was
        span = Span(p.source_id, p.start, min(p.end, len(source)))
        return replace(base, outcome="changed", targets=tuple(d for d, _ in spans.overlapping(span)),
                       where=span if len(span) > 0 else None, new_text=source[span.start:span.end] or None,
                       note="the old text was not kept")
    at = find_exact(source, old_text, p.start)
    if at is None:
        return _changed(base, source, old_text, p, spans)
    where = Span(p.source_id, at, at + len(old_text))
    holders = spans.containing(where)
    if holders:
        return replace(base, outcome="mapped", targets=(holders[0],), where=where)
    parts = spans.overlapping(where)
    if len(parts) >= 2 and _covered(where, spans, parts, source):
        return replace(base, outcome="split", targets=tuple(d for d, _ in parts), where=where, note=MAY_BE_CUT)
    if not parts:
        return replace(base, outcome="retired", where=where, note="no passage of the new version holds its text")
    return replace(base, outcome="changed", targets=tuple(d for d, _ in parts), where=where, new_text=old_text,
                   note="part of its text is in no passage of the new version")


def _covered(where: Span, spans: PassageSpans, parts: list[tuple[str, int]], source: str) -> bool:
    """Whether the passages together hold every character of the span but whitespace (a chunker may drop the
    space between two sentences it cuts apart)."""
    held = bytearray(len(where))
    for docid, _ in parts:
        s = spans.get(docid)
        assert s is not None
        a, b = max(s.start, where.start) - where.start, min(s.end, where.end) - where.start
        held[a:b] = b"\x01" * (b - a)
    return all(held[i] or source[where.start + i].isspace() for i in range(len(where)))


def _changed(base: Outcome, source: str, old_text: str, p: PassageRow, spans: PassageSpans) -> Outcome:
    assert p.source_id is not None and p.start is not None
    found = find_edited(source, old_text, p.start)
    if found is None:
        return replace(base, outcome="changed", note="its text was not found in the new source")
    where = Span(p.source_id, found.start, found.end)
    return replace(base, outcome="changed", targets=tuple(d for d, _ in spans.overlapping(where)), where=where,
                   new_text=source[found.start:found.end], note=f"best match {found.score:.0f}%")


def _report(previous: str, name: str, corpus: str, refs, outcomes: list[Outcome], dry_run: bool) -> CorpusUpdate:
    counts = {k: {o: 0 for o in OUTCOMES} for k in KINDS}
    for o in outcomes:
        counts[o.kind][o.outcome] += 1
    totals = dict(Counter(r.kind for r in refs))
    return CorpusUpdate(previous, name, corpus, counts, {k: totals.get(k, 0) for k in KINDS},
                        tuple(o for o in outcomes if o.outcome != "carried"), dry_run,
                        carried=frozenset(o.docid for o in outcomes if o.outcome == "carried"))


def _apply(ws, report: CorpusUpdate, spans: PassageSpans, docs, sources: str | None, parent: int,
           texts: dict[bytes, str], author: str) -> CorpusUpdate:
    from trecbench.store.workspace import _portable

    if not report.balanced():  # pragma: no cover - the classification gives every reference one outcome
        raise AssertionError("an update's account does not add up")
    stored = _portable(report.corpus, ws.path)
    keep = {d for o in report.items for d in o.targets} | set(report.carried)  # the texts the next update needs
    with ws.transaction() as c:
        version = register_version(ws, report.corpus, spans, sources=_portable(sources, ws.path), parent=parent,
                                   keep=keep, stored=stored, summary_json=json.dumps(report.counts))
        queries.keep_texts(c, [(h, texts[h]) for h in {o.old_hash for o in report.items} if h in texts])
        queries.keep_texts(c, [(digest(o.new_text), o.new_text) for o in report.items if o.new_text])
        queries.copy_judgments(c, _copies(report, version))
        queries.insert_changes(c, [_change_row(version, o) for o in report.items])
        pool = _review_pool(ws, report)
        relinked = _relink(ws, report, docs, spans, author)
    ws.set_corpus(report.corpus)
    return replace(report, review_pool=pool, links_updated=relinked,
                   passages=queries.version_rows(ws.connection())[-1].passages)


def _copies(report: CorpusUpdate, version: int) -> list[tuple[int, str, int, str | None]]:
    """(judgment id, new docid, version, flag) of each copy, the higher grades last: when two judgments of
    one judge land on one passage (two pages merged), its latest, the higher grade, is the one chosen."""
    moved = [o for o in report.items if o.kind == "judgment" and o.outcome in ("mapped", "split")]
    moved.sort(key=lambda o: -1 if o.grade is None else o.grade)
    return [(int(o.ref), d, version, None if o.outcome == "mapped" else MAY_BE_CUT) for o in moved for d in o.targets]


def _change_row(version: int, o: Outcome) -> tuple:
    span = o.where
    return (version, o.kind, o.outcome, o.qid, o.ref, o.docid, o.old_hash, json.dumps(list(o.targets)),
            span.source_id if span else None, span.start if span else None, span.end if span else None,
            digest(o.new_text) if o.new_text else None, o.note or None)


def _review_pool(ws, report: CorpusUpdate) -> str | None:
    """Store the passages people should look at (split groups, where changed text is now) as a pool."""
    import pandas as pd

    from trecbench.store.workspace import save_pool

    pairs = list(dict.fromkeys((o.qid, d) for o in report.items if o.outcome in ("split", "changed")
                               for d in o.targets))
    if not pairs:
        return None
    name = f"corpus-{report.version}-review"
    frame = pd.DataFrame({"query_id": [q for q, _ in pairs], "doc_id": [d for _, d in pairs],
                          "priority": range(1, len(pairs) + 1)})
    save_pool(ws, name, REVIEW, {"from": report.previous, "to": report.version}, frame)
    return name


def _relink(ws, report: CorpusUpdate, docs, spans: PassageSpans, author: str) -> int:
    """Point mapped links at their new passage and make split ones joint groups of the parts (a span link: its
    characters in each), one new version of each nugget (its history keeps the links as they were)."""
    from trecbench.nuggets.records import Link
    from trecbench.nuggets.store import NuggetStore

    moves: dict[str, dict[int, dict[tuple, Outcome]]] = {}
    for o in report.items:
        if o.kind == "link" and o.outcome in ("mapped", "split"):
            nid, rest = o.ref.rsplit("#", 1)
            alt, _, marked = rest.partition("@")
            start, _, end = marked.partition(":")
            key = (o.docid, int(start), int(end)) if marked else (o.docid, None, None)
            moves.setdefault(nid, {}).setdefault(int(alt), {})[key] = o
    store = NuggetStore(ws)
    for nid, alternatives in moves.items():
        nugget = store.get(nid)
        support = []
        for a, group in enumerate(nugget.support):
            links: list[Link] = []
            for link in group:
                moved = alternatives.get(a, {}).get(link.key)
                if moved is None:
                    new = [link]
                elif link.is_span:
                    new = _span_links(link, moved, spans, docs)
                else:
                    new = [link if d == link.docid else Link(d, _hex_or_none(docs.text(d))) for d in moved.targets]
                links += [x for x in new if x.key not in [y.key for y in links]]
            support.append(tuple(links))
        store.relink(nid, tuple(support), author=author, detail={"corpus_version": report.version,
                                                                 "from": report.previous})
    return len(moves)


def _span_links(link, moved: Outcome, spans: PassageSpans, docs) -> list:
    """A span link's new links: its characters in the one new passage that holds them, or each new passage's
    piece of them (a joint group)."""
    from trecbench.nuggets.model import SourceSpan
    from trecbench.nuggets.records import Link

    where = moved.where
    assert where is not None
    out = []
    for d in moved.targets:
        passage = spans.get(d)
        text = docs.text(d)
        if passage is None or text is None:  # pragma: no cover - a target is a new passage with a span
            continue
        a, b = max(where.start, passage.start), min(where.end, passage.end)
        if a >= b:
            continue
        piece = text[a - passage.start:b - passage.start]
        out.append(Link(d, _hex(text), a - passage.start, b - passage.start, SourceSpan(where.source_id, a, b),
                        _hex(piece)))
    return out


def _hex_or_none(text: str | None) -> str | None:
    return None if text is None else _hex(text)


def _hex(text: str) -> str:
    return digest(text).hex()
