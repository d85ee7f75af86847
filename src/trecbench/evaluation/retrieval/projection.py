"""Qrels judged on the benchmark's passages, runs made on another chunking or scored per source document.

Both chunkings name each passage's source document and character span (`trecbench.sources`).

- Another chunking (`level="passage"` with `retrieved`): the qrels are projected onto the run's chunking.
  A new passage covers a judged passage when it holds at least `cover` of the judged passage's characters
  (`trecbench.sources.covered`; 1, the default, means it contains the span), and gets the best grade of
  the judged passages it covers. A judged passage that no single new passage covers (split over several)
  gives its grade to none of them: a piece of a relevant passage is not known to be relevant. Those
  pairs, the judged passages the new chunking does not cover at all or that have no span, and the new
  passages covering judged passages of different grades are counted and printed; a new passage that
  covers no judged passage is unjudged.
- Source-document level (`level="document"`, as TREC RAG scores at document level): a document's grade
  is the best grade of its judged passages; a run's document list is its passages' sources in order of
  first appearance in its ranking (trec_eval's order). A passage without a span stands for itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Union

import numpy as np

from trecbench.files.columns import Ids
from trecbench.ranking import trec_eval_order
from trecbench.sources import DEFAULT_COVER, PassageSpans, covered, read_spans

from .rankings import QrelsColumns, RunColumns

PathLike = Union[str, Path]
LEVELS = ("passage", "document")


@dataclass(frozen=True)
class Projection:
    """How runs meet qrels judged on `judged`: from the chunking `retrieved` (None: the judged one), at
    passage or source-document `level`."""

    judged: PassageSpans
    retrieved: PassageSpans | None = None
    cover: float = DEFAULT_COVER
    level: str = "passage"

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {self.level!r}")
        if not 0 < self.cover <= 1:
            raise ValueError(f"cover must be in (0, 1], not {self.cover}")

    @property
    def rule(self) -> str:
        """The level and rule, in a sentence the command prints."""
        if self.level == "document":
            runs = self.retrieved.path if self.retrieved is not None else self.judged.path
            return (f"scored at source-document level: a document's grade is the best grade of its judged passages "
                    f"({self.judged.path}); a run's documents are its passages' sources ({runs}) in order of "
                    "first appearance")
        if self.retrieved is None:
            return "scored at passage level"
        share = "contains" if self.cover == 1 else f"holds at least {self.cover:.0%} of"
        return (f"scored at passage level on {self.retrieved.path}: qrels judged on {self.judged.path} projected "
                f"by source span, a passage gets the best grade of the judged passages it {share}")

    def qrels(self, qrels: QrelsColumns, notes: list[str] | None = None) -> QrelsColumns:
        """The qrels this projection scores against; sentences on the pairs it could not carry go to `notes`."""
        if self.level == "document":
            return _document_qrels(qrels, self.judged, notes)
        if self.retrieved is None:
            return qrels
        return _projected_qrels(qrels, self.judged, self.retrieved, self.cover, notes)

    def run(self, run: RunColumns, version: int = 9, notes: list[str] | None = None) -> RunColumns:
        """The run as this projection scores it: at document level its sources in order of first appearance."""
        if self.level != "document":
            return run
        return _document_run(run, self.retrieved or self.judged, version, notes)


def read_projection(qrels_spans: PathLike | PassageSpans, corpus_spans: PathLike | PassageSpans | None = None, *,
                    cover: float = DEFAULT_COVER, level: str = "passage") -> Projection:
    """A Projection from corpus files with spans (`source_id`, `start_char`, `end_char`) or PassageSpans."""
    def spans(given: PathLike | PassageSpans) -> PassageSpans:
        return given if isinstance(given, PassageSpans) else read_spans(given)

    return Projection(spans(qrels_spans), spans(corpus_spans) if corpus_spans is not None else None, cover, level)


def _projected_qrels(qrels: QrelsColumns, judged: PassageSpans, new: PassageSpans, cover: float,
                     notes: list[str] | None) -> QrelsColumns:
    grades: dict[tuple[str, str], set[int]] = {}
    split = uncovered = 0
    for qid, docid, grade in zip(qrels.qid.strings(), qrels.doc.strings(), qrels.grade.tolist()):
        span = judged.get(docid)
        if span is None:
            uncovered += 1
            continue
        pieces = [(d, new.get(d)) for d, _ in new.overlapping(span)]
        covering = [d for d, s in pieces if s is not None and covered(span, [s], cover)]
        for d in covering:
            grades.setdefault((qid, d), set()).add(grade)
        if not covering:
            if covered(span, [s for _, s in pieces if s is not None], cover):
                split += 1
            else:
                uncovered += 1
    if notes is not None:
        notes += _not_carried(split, uncovered, sum(len(g) > 1 for g in grades.values()), judged, new)
    return _qrels_of({key: max(g) for key, g in grades.items()})


def _not_carried(split: int, uncovered: int, mixed: int, judged: PassageSpans, new: PassageSpans) -> list[str]:
    """A sentence for each kind of pair the projection could not carry as it was."""
    out = []
    if split:
        out.append(f"{split} judged (topic, passage) pair(s) split over several passages of {new.path}: no single "
                   "passage covers them, so none gets their grade")
    if uncovered:
        out.append(f"{uncovered} judged (topic, passage) pair(s) not covered by {new.path} (or without a span in "
                   f"{judged.path}): their grades are not carried")
    if mixed:
        out.append(f"{mixed} (topic, passage) pair(s) of {new.path} cover judged passages of different grades: "
                   "each gets the best of them")
    return out


def _document_qrels(qrels: QrelsColumns, judged: PassageSpans, notes: list[str] | None) -> QrelsColumns:
    grades: dict[tuple[str, str], int] = {}
    alone = 0
    for qid, docid, grade in zip(qrels.qid.strings(), qrels.doc.strings(), qrels.grade.tolist()):
        span = judged.get(docid)
        alone += span is None
        key = (qid, span.source_id if span is not None else docid)
        grades[key] = max(grades.get(key, grade), grade)
    if notes is not None and alone:
        notes.append(f"{alone} judged (topic, passage) pair(s) without a span in {judged.path}: each passage "
                     "stands for itself as a document")
    return _qrels_of(grades)


def _qrels_of(grades: dict[tuple[str, str], int]) -> QrelsColumns:
    return QrelsColumns(Ids.of([q for q, _ in grades]), Ids.of([d for _, d in grades]),
                        np.asarray(list(grades.values()), dtype=np.int64))


def _document_run(run: RunColumns, spans: PassageSpans, version: int, notes: list[str] | None) -> RunColumns:
    qids = run.qid.strings()
    codes: dict[str, int] = {}
    topic = np.asarray([codes.setdefault(q, len(codes)) for q in qids], dtype=np.int64)
    order = trec_eval_order(topic, run.score, run.doc, version)
    docids = run.doc.strings()
    out_q: list[str] = []
    out_d: list[str] = []
    seen: set[tuple[str, str]] = set()
    alone: set[str] = set()
    for row in order.tolist():
        span = spans.get(docids[row])
        if span is None:
            alone.add(docids[row])
        key = (qids[row], span.source_id if span is not None else docids[row])
        if key not in seen:
            seen.add(key)
            out_q.append(key[0])
            out_d.append(key[1])
    if notes is not None and alone:
        notes.append(f"{run.runid or run.path}: {len(alone)} retrieved passage(s) without a span in {spans.path}: "
                     "each stands for itself as a document")
    # scores falling by one keep the order formed here in every trec_eval version (exact in a float up to 2**24)
    rank = np.zeros(len(out_q), dtype=np.float64)
    start = 0
    for i in range(1, len(out_q) + 1):
        if i == len(out_q) or out_q[i] != out_q[start]:
            rank[start:i] = np.arange(i - start, 0, -1)
            start = i
    return RunColumns(Ids.of(out_q), Ids.of(out_d), rank, run.runid, run.path)
