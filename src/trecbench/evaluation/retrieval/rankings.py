"""Rankings as trec_eval forms them: one row per topic, relevance of each retrieved document by rank.

trec_eval sorts each topic's documents by score descending, ties broken by docid descending
(strcmp), ignores the rank column, and looks each document up in the qrels: its grade if judged,
NONPOOL (-1) if the qrels do not list it, UNJUDGED (-2) if listed with a negative grade. Here the
whole run becomes a dense matrix `rel[topic, rank]`, padded with PAD after the last document, so
every measure is a few vectorised operations over rows.
"""
from __future__ import annotations

import io
from typing import Any, BinaryIO, NamedTuple, Union

import numpy as np

from trecbench.files.columns import (
    Dictionary,
    Ids,
    PairIndex,
    has_repeats,
    last_line,
    open_plain,
    split_fields,
    stretch_starts,
)
from trecbench.files.shapes import is_path, is_stream, qrels_input, run_input
from trecbench.ranking import DEFAULT_VERSION, trec_eval_order

NONPOOL = -1
UNJUDGED = -2
PAD = -3


class RunColumns(NamedTuple):
    """A run as columns: topic and document ids, scores (file order), and its runid."""

    qid: Ids
    doc: Ids
    score: np.ndarray  # float64
    runid: str | None = None
    path: str | None = None


class QrelsColumns(NamedTuple):
    """Qrels as columns: topic and document ids and grades (file order)."""

    qid: Ids
    doc: Ids
    grade: np.ndarray  # int64


def read_run_columns(path: Any, data: bytes | None = None) -> RunColumns:
    """A run file as columns: a clean file straight from its bytes (`data`, if already read), else `read_run`'s."""
    source = open_plain(path) if data is None else io.BytesIO(data)
    if source is not None:
        with source:
            cols = split_fields(source, 6, ids=(0, 2), floats=(4,), comments=True)
            if cols is not None and not has_repeats(cols[0], cols[2]):  # type: ignore[arg-type]
                return RunColumns(cols[0], cols[2], cols[4], run_tag(source), str(path))  # type: ignore[arg-type]
    from trecbench.runs import read_run

    return run_columns(read_run(path))


def run_tag(source: BinaryIO) -> str:
    """The runid trec_eval prints: the tag of a clean run file's last line."""
    return last_line(source).split()[5].decode("utf-8")


def read_qrels_columns(path: Any) -> QrelsColumns:
    """A qrels file as columns: a clean file straight from its bytes, else `read_qrels`'s."""
    source = open_plain(path)
    if source is not None:
        with source:
            cols = split_fields(source, 4, ids=(0, 2), ints=(3,), comments=True)
        if cols is not None and not has_repeats(cols[0], cols[2]):  # type: ignore[arg-type]
            return QrelsColumns(cols[0], cols[2], cols[3])  # type: ignore[arg-type]
    from trecbench.qrels import read_qrels

    return qrels_columns(read_qrels(path))


def run_columns(run: Any) -> RunColumns:
    """A run DataFrame (query_id, doc_id, score), or a run in any shape `files.shapes` reads, as columns
    (unchecked: `evaluate` checks DataFrames first); RunColumns pass through, files and streams are read."""
    if isinstance(run, RunColumns):
        return run
    run = run_input(run)
    if is_path(run):
        return read_run_columns(run)
    if is_stream(run):
        from trecbench.runs import read_run

        run = read_run(run)
    return RunColumns(Ids.of(run["query_id"].astype(str).tolist()), Ids.of(run["doc_id"].astype(str).tolist()),
                      run["score"].to_numpy(dtype=np.float64), run.attrs.get("runid"), run.attrs.get("path"))


def qrels_columns(qrels: Any) -> QrelsColumns:
    """A qrels DataFrame (query_id, doc_id, relevance), or qrels in any shape `files.shapes` reads, as
    columns (unchecked: `evaluate` checks DataFrames first); QrelsColumns pass through, files are read."""
    if isinstance(qrels, QrelsColumns):
        return qrels
    qrels = qrels_input(qrels)
    if is_path(qrels):
        return read_qrels_columns(qrels)
    return QrelsColumns(Ids.of(qrels["query_id"].astype(str).tolist()), Ids.of(qrels["doc_id"].astype(str).tolist()),
                        qrels["relevance"].to_numpy(dtype=np.int64))


class QrelsTable(NamedTuple):
    """Per-topic judgment counts and a lookup of (topic, docid) -> grade, built once per qrels."""

    qids: np.ndarray  # sorted topic ids (str), trec_eval order
    rel_levels: np.ndarray  # [topic, level] count of documents judged at each grade >= 0
    num_rel: np.ndarray  # judged at grade >= rel_level
    num_nonrel: np.ndarray  # judged at 0 <= grade < rel_level
    topics: Dictionary  # topic id -> row (rows are in strcmp order)
    judgments: PairIndex  # (topic row, docid) -> qrels line
    grades: np.ndarray  # grade on each qrels line
    rel_level: int

class Rankings(NamedTuple):
    """One run's rankings over the evaluated topics (those present in both run and qrels)."""

    qids: np.ndarray  # evaluated topic ids, sorted as trec_eval sorts them
    rel: np.ndarray  # [topic, rank] relevance value (grade, NONPOOL, UNJUDGED, or PAD)
    num_ret: np.ndarray  # documents retrieved per topic (after the depth cut)
    docids: np.ndarray  # [topic, rank] docid (object), only built when asked for
    qrels: QrelsTable
    qrels_row: np.ndarray  # for each evaluated topic, its row in the qrels table
    rel_level: int
    unjudged: list[str]  # topics of the run the qrels do not judge

    @property
    def num_rel(self) -> np.ndarray:
        return self.qrels.num_rel[self.qrels_row]

    @property
    def num_nonrel(self) -> np.ndarray:
        return self.qrels.num_nonrel[self.qrels_row]

    @property
    def rel_levels(self) -> np.ndarray:
        return self.qrels.rel_levels[self.qrels_row]

    @property
    def depth(self) -> int:
        return self.rel.shape[1]


def qrels_table(qrels: Any, rel_level: int = 1) -> QrelsTable:
    """Count each topic's judgments by grade, as trec_eval's rel_levels, and index them for lookup.

    `qrels`: QrelsColumns or a DataFrame (query_id, doc_id, relevance).
    """
    cols = qrels_columns(qrels)
    topics, qrow = Dictionary.build(cols.qid)
    qids = np.array(topics.ids.strings(), dtype=object).astype(str)
    grade = cols.grade
    max_grade = int(grade.max()) if len(grade) else 0
    levels = np.zeros((len(qids), max(max_grade, 0) + 1), dtype=np.int64)
    judged = grade >= 0
    np.add.at(levels, (qrow[judged], grade[judged]), 1)
    num_rel = levels[:, max(rel_level, 0):].sum(axis=1)
    num_nonrel = levels[:, : max(rel_level, 0)].sum(axis=1)
    return QrelsTable(qids, levels, num_rel, num_nonrel, topics, PairIndex.build(qrow, cols.doc), grade, rel_level)


def _stretches(qid: Ids, topics: Dictionary) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Where each stretch of equal topic ids starts, its length, its row in the qrels topics (-1 if not
    judged), and the run's unjudged topics. Runs list a topic's lines together: ids are looked up once
    per stretch."""
    first = stretch_starts(qid)
    heads = qid.take(first)
    rows = topics.find(heads)
    unjudged = sorted(set(heads.take(np.flatnonzero(rows < 0)).strings()))
    return first, np.diff(np.append(first, len(qid))), rows, unjudged


def _topic_rows(qid: Ids, topics: Dictionary) -> tuple[np.ndarray, list[str]]:
    """Each line's row in the qrels topics (-1 if not judged), and the run's unjudged topics."""
    if not len(qid):
        return np.zeros(0, dtype=np.int64), []
    _, lengths, rows, unjudged = _stretches(qid, topics)
    return np.repeat(rows, lengths), unjudged


SLICE_LINES = 1 << 18  # a run is ranked and measured in blocks of topics of about this many lines

Block = Union[np.ndarray, slice, None]  # lines of a run: their positions, a stretch of the file, or all


def topic_slices(run: RunColumns, qrels: QrelsTable, lines: int = SLICE_LINES) -> tuple[list[Block], list[str] | None]:
    """The run's lines in blocks of whole judged topics of about `lines` lines, and the run's unjudged
    topics; ([None], None) when the run is one block (its rankings list those topics).

    When each topic's lines are together in the file (as runs are written), a block is a stretch of
    the file (a view: no copy of the run); otherwise blocks hold the lines' positions, in topic order.
    Blocks need not come in topic order: each block's rankings name their topics.
    """
    if len(run.score) <= lines:
        return [None], None
    first, lengths, rows, unjudged = _stretches(run.qid, qrels.topics)
    judged = np.sort(rows[rows >= 0])
    if not (judged[1:] == judged[:-1]).any():  # each topic in one stretch (np.unique would import numpy.ma)
        block = (first // lines)  # block of each stretch, by where it starts
        cut = np.flatnonzero(np.diff(block)) + 1
        starts = np.concatenate(([0], first[cut]))
        ends = np.append(starts[1:], len(run.score))
        return [slice(int(a), int(b)) for a, b in zip(starts, ends)], unjudged
    qrow = np.repeat(rows, lengths)
    per_topic = np.bincount(qrow[qrow >= 0], minlength=len(qrels.qids))
    topic_block = np.cumsum(per_topic) // lines  # block of each topic row
    line_block = np.where(qrow >= 0, topic_block[np.maximum(qrow, 0)], -1)
    del qrow
    order = np.argsort(line_block, kind="stable")
    counts = np.bincount(line_block[line_block >= 0])
    start = int((line_block < 0).sum())  # lines of unjudged topics sort first and are left out
    out: list[Block] = []
    for c in counts:
        if c:
            out.append(order[start:start + c])
        start += c
    return out, unjudged


def form_rankings(
    run: Any,
    qrels: QrelsTable,
    *,
    depth: int | None = None,
    version: int = DEFAULT_VERSION,
    keep_docids: bool = False,
    rows: np.ndarray | slice | None = None,
) -> Rankings:
    """Sort, cut and look up a run the way trec_eval `version` does (9: float32 scores, 10: doubles).

    `run`: RunColumns or a DataFrame (query_id, doc_id, score); `rows`: only these lines of it
    (e.g. a block of topics from `topic_slices`).
    """
    cols = run_columns(run)
    if rows is not None:
        cols = RunColumns(cols.qid.take(rows), cols.doc.take(rows), cols.score[rows], cols.runid, cols.path)
    qrow, unjudged = _topic_rows(cols.qid, qrels.topics)
    score = cols.score
    doc = cols.doc
    keep = qrow >= 0  # topics without qrels are not evaluated, as in trec_eval
    if not keep.all():
        qrow, score, doc = qrow[keep], score[keep], doc.take(np.flatnonzero(keep))
    order = trec_eval_order(qrow, score, doc, version)
    # grade of each line: (topic, docid) looked up in the qrels in file order, then ranked with the lines
    # (a permutation of integers, not a copy of the docids)
    line = qrels.judgments.find(qrow, doc)[order]
    qrow = qrow[order]
    # rows are in topic order now: each topic is one stretch
    starts = np.flatnonzero(np.concatenate(([True], qrow[1:] != qrow[:-1]))) if len(qrow) else np.zeros(0, np.int64)
    present = qrow[starts]
    counts = np.diff(np.append(starts, len(qrow)))
    pos = np.arange(len(qrow)) - np.repeat(starts, counts)
    cut = None
    if depth is not None and len(counts) and counts.max() > depth:
        cut = np.flatnonzero(pos < depth)
        qrow, pos, line = qrow[cut], pos[cut], line[cut]
        counts = np.minimum(counts, depth)
    row = np.repeat(np.arange(len(present)), counts)
    width = int(counts.max()) if len(counts) else 0
    found = line >= 0
    grades = np.full(len(line), NONPOOL, dtype=np.int64)
    grades[found] = qrels.grades[line[found]]
    grades[found & (grades < 0)] = UNJUDGED
    rel = np.full((len(present), width), PAD, dtype=np.int64)
    rel[row, pos] = grades
    docs = np.empty((0, 0), dtype=object)
    if keep_docids:
        ranked = doc.take(order if cut is None else order[cut])
        docs = np.full((len(present), width), "", dtype=object)
        docs[row, pos] = np.array(ranked.strings(), dtype=object)
    return Rankings(qrels.qids[present], rel, counts.astype(np.int64), docs, qrels, present, qrels.rel_level,
                    unjudged)
