"""Evidence made on one chunking, contexts retrieved from another: which evidence passages the contexts cover.

Both chunkings name each passage's source document and character span (`trecbench.sources`). A set of
retrieved passages covers an evidence passage when together they hold at least `cover` of its characters
(`trecbench.sources.covered`): one passage that contains its span covers it alone; an evidence passage
split over several retrieved passages counts only when all the pieces needed are retrieved (within the
cut), each character counted once. The default, 1.0, asks for every character, because a condition or an
exception cut into the neighbouring chunk is exactly what a lower share would let pass unseen; lower it
(e.g. 0.98) when two chunkers differ only by the blanks they trim at boundaries.

The retrieved set is turned into the evidence passages it covers, and evidence is then scored as on its
own chunking: an item counts once, alternatives are "or", joint groups "and".

An evidence link that is a span of its passage (`trecbench.nuggets.model.SpanLink`: a sentence an expert
marked) is covered by the same rule applied to its own characters: the retrieved passages must hold the
span, not the whole passage it was marked in. (On the benchmark's own chunking it is covered when its
passage is retrieved: the passage holds it.)
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, NamedTuple, Union

from trecbench.nuggets.model import SpanLink, link_key, support_label
from trecbench.sources import DEFAULT_COVER, PassageSpans, Span, covered, read_spans

PathLike = Union[str, Path]


class ChunkingReport(NamedTuple):
    """How the evidence passages lie in the retrieval chunking, whatever was retrieved."""

    whole: list[str]  # one retrieved-chunking passage covers it
    joint: list[str]  # only several together do: split, a condition may have been cut off (check)
    uncovered: list[str]  # the retrieval chunking does not hold enough of it: it can never be found
    unanchored: list[str]  # no span in the evidence's chunking: it can never be found


@dataclass(frozen=True)
class Chunking:
    """The chunking the evidence was made on, the one the contexts were retrieved from, and the share of an
    evidence passage's characters the retrieved passages must hold together."""

    evidence: PassageSpans
    retrieved: PassageSpans
    cover: float = DEFAULT_COVER

    def __post_init__(self) -> None:
        if not 0 < self.cover <= 1:
            raise ValueError(f"cover must be in (0, 1], not {self.cover}")

    @property
    def rule(self) -> str:
        """The rule, in a sentence the outputs print."""
        share = "every character" if self.cover == 1 else f"at least {self.cover:.0%} of the characters"
        return (f"evidence passages of {self.evidence.path} found in passages of {self.retrieved.path} by source "
                f"span: an evidence passage is covered when the retrieved passages together hold {share} of its span")

    def covered(self, evidence_passages: Iterable[str], retrieved: Iterable[str]) -> set[str]:
        """The evidence passages (and span links) among `evidence_passages` that the `retrieved` passages cover
        together; a span link is found in it only when its own characters are covered (`Covered`)."""
        by_source: dict[str, list[Span]] = {}
        for docid in retrieved:
            span = self.retrieved.get(docid)
            if span is not None:
                by_source.setdefault(span.source_id, []).append(span)
        out = Covered()
        for docid in evidence_passages:
            span = self.span_of(docid)
            if span is not None and covered(span, by_source.get(span.source_id, []), self.cover):
                out.add(docid)
        return out

    def span_of(self, evidence: str) -> Span | None:
        """The source span of an evidence passage, or of a span link's characters of its passage (None: the
        passage has no span in the evidence's chunking)."""
        passage = self.evidence.get(str.__str__(evidence))
        if passage is None or not isinstance(evidence, SpanLink):
            return passage
        return Span(passage.source_id, passage.start + evidence.start, min(passage.end, passage.start + evidence.end))

    def report(self, evidence_passages: Iterable[str]) -> ChunkingReport:
        """Each evidence passage as one retrieved passage covers it, only several together, or none can."""
        whole, joint, uncovered, unanchored = [], [], [], []
        for docid in {link_key(d): d for d in evidence_passages}.values():
            span = self.span_of(docid)
            docid = support_label(docid)
            if span is None:
                unanchored.append(docid)
                continue
            pieces = [self.retrieved.get(d) for d, _ in self.retrieved.overlapping(span)]
            spans = [s for s in pieces if s is not None]
            if any(covered(span, [s], self.cover) for s in spans):
                whole.append(docid)
            elif covered(span, spans, self.cover):
                joint.append(docid)
            else:
                uncovered.append(docid)
        return ChunkingReport(whole, joint, uncovered, unanchored)

    def unspanned(self, retrieved: Iterable[str]) -> list[str]:
        """The retrieved docids that have no span in the retrieval chunking: they cover nothing."""
        return [d for d in dict.fromkeys(retrieved) if d not in self.retrieved]


class Covered(set):
    """Covered evidence passages and span links: a span link is in it when its own characters were covered (or
    its whole passage was); a passage is in it only when the passage itself was, not one of its spans (a
    `SpanLink` equals its docid, which plain set membership would take for the passage)."""

    def __init__(self) -> None:
        super().__init__()
        self._keys: set[tuple] = set()

    def add(self, item: str) -> None:
        super().add(item)
        self._keys.add(link_key(item))

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, str):
            return False
        return link_key(item) in self._keys or (str.__str__(item), None, None) in self._keys


def read_chunking(evidence_spans: PathLike | PassageSpans, corpus_spans: PathLike | PassageSpans,
                  cover: float = DEFAULT_COVER) -> Chunking:
    """The two chunkings from corpus files with spans (`source_id`, `start_char`, `end_char`) or PassageSpans."""
    def spans(given: PathLike | PassageSpans) -> PassageSpans:
        return given if isinstance(given, PassageSpans) else read_spans(given)

    return Chunking(spans(evidence_spans), spans(corpus_spans), cover)


def chunking_messages(chunking: Chunking, report: ChunkingReport, unspanned: dict[str, list[str]]) -> list[str]:
    """What the command prints about the projection: the rule, split and lost evidence passages, contexts
    without a span."""
    from trecbench.helpers.messages import some

    out = [f"coverage: {chunking.rule}; {len(report.whole)} evidence passage(s) lie in one retrieved-chunking "
           f"passage, {len(report.joint)} only in several together"]
    if report.joint:
        out.append(f"{len(report.joint)} evidence passage(s) split over several passages (found only when all the "
                   f"pieces are retrieved; check that no condition was cut off): {some(report.joint)}")
    if report.uncovered:
        out.append(f"{len(report.uncovered)} evidence passage(s) not covered by {chunking.retrieved.path} (it lacks "
                   f"some of their characters): they can never be found: {some(report.uncovered)}")
    if report.unanchored:
        out.append(f"{len(report.unanchored)} evidence passage(s) have no span in {chunking.evidence.path}: they can "
                   f"never be found: {some(report.unanchored)}")
    for run, docids in unspanned.items():
        if docids:
            out.append(f"{run}: {len(docids)} retrieved passage(s) have no span in {chunking.retrieved.path}: they "
                       f"cover nothing: {some(docids)}")
    return out


def chunking_notes(chunking: Chunking, report: ChunkingReport) -> dict:
    """The projection as the JSON output records it."""
    return {"rule": chunking.rule, "cover": chunking.cover, "evidence_chunking": chunking.evidence.path,
            "retrieval_chunking": chunking.retrieved.path, "whole": len(report.whole), "joint": report.joint,
            "uncovered": report.uncovered, "unanchored": report.unanchored}
