"""Each run's top-k documents per topic, ranked as trec_eval ranks them, read and cut without a loop per line.

The order is `trecbench.ranking`'s, for trec_eval 9.0.8 (the default of `trecbench eval retrieval`):
score descending as C floats, ties by docid descending, the rank column ignored. Pooling cuts before
it gathers docids, so it uses the rule's two steps (`ranking_scores`, `break_ties`) around the cut.
"""
from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union, cast

import numpy as np
import pandas as pd

from trecbench.files.columns import (
    Dictionary,
    Ids,
    gather_ids,
    has_repeats,
    split_fields,
    stretch_starts,
    usable_cores,
)
from trecbench.files.shapes import RunLike as ShapedRun
from trecbench.files.shapes import given_runs, is_path, is_stream, run_input, stream_bytes
from trecbench.errors import InputError, Problem
from trecbench.ranking import break_ties, ranking_scores

# The runs' annotation of build_pool and leave_one_out (which types its qrels with it too); read_runs takes
# every shape of files.shapes.RunLike.
RunLike = Union[str, "os.PathLike[str]", pd.DataFrame]


@dataclass(frozen=True)
class RunInfo:
    """Where a pooled run came from: its name in the pool, file path and sha256 (empty for a DataFrame)."""

    name: str
    path: str = ""
    sha256: str = ""
    topics: int = 0
    lines: int = 0

    def as_dict(self) -> dict:
        return {"name": self.name, "path": self.path, "sha256": self.sha256, "topics": self.topics, "lines": self.lines}


@dataclass(frozen=True)
class TopK:
    """One run cut at depth: parallel columns in trec_eval order (topic, then rank).

    Ids stay `files.columns.Ids` (their bytes as uint64 words, no Python string per row): pooling 50 runs of
    500,000 lines makes Python strings only for the pool's candidates.
    """

    query_id: Ids
    doc_id: Ids
    rank: np.ndarray  # int32, 1-based
    topics: int = 0  # topics in the whole run (before the cut)

    def __len__(self) -> int:
        return len(self.rank)


def top_k(run: Any, depth: int | None) -> TopK:
    """The top `depth` documents of each topic of a run (all of them if depth is None), trec_eval order.

    `run`: RunColumns or a DataFrame (query_id, doc_id, score).
    """
    from trecbench.evaluation.retrieval.rankings import run_columns

    cols = run_columns(run)
    return _top(cols.qid, cols.score, depth, cols.doc.take)


def _top(qid: Ids, scores: np.ndarray, depth: int | None, docs_of: Callable[[np.ndarray], Ids]) -> TopK:
    """`top_k` given the docids of only the lines that can make the cut: `docs_of(lines)` returns them."""
    n = len(scores)
    if n == 0:
        return _no_documents()
    first = stretch_starts(qid)
    topics, code = Dictionary.build(qid.take(first))
    if depth is not None and len(topics.ids) == len(first):  # each topic's lines together, as runs are written
        cut = _top_in_order(qid, scores, first, depth, docs_of)
        if cut is not None:
            return cut
    qcode, n_topics = _topic_codes(first, code, n)
    score = ranking_scores(scores)
    ordered = (qcode[1:] >= qcode[:-1]).all() and ((qcode[1:] != qcode[:-1]) | (score[1:] <= score[:-1])).all()
    order = np.arange(n) if ordered else np.lexsort((-score, qcode))
    if depth is not None:
        # Only rows inside the cut, or tied with the last score inside it, can make the top `depth`.
        qs, ss = qcode[order], score[order]
        starts, counts = _runs_of(qs)
        last = ss[starts + np.minimum(counts, depth) - 1]
        pos = np.arange(len(order)) - np.repeat(starts, counts)
        order = order[(pos < depth) | (ss == np.repeat(last, counts))]
    docs = docs_of(order)  # aligned with `order`
    qcode, score = qcode[order], score[order]
    tied = break_ties(qcode, score, docs)
    order, docs = order[tied], docs.take(tied)
    starts, counts = _runs_of(qcode[tied])
    pos = np.arange(len(order)) - np.repeat(starts, counts)
    if depth is not None:
        keep = pos < depth
        order, pos, docs = order[keep], pos[keep], docs.take(np.flatnonzero(keep))
    return TopK(qid.take(order), docs, (pos + 1).astype(np.int32), n_topics)


def _top_in_order(qid: Ids, scores: np.ndarray, first: np.ndarray, depth: int,
                  docs_of: Callable[[np.ndarray], Ids]) -> TopK | None:
    """`_top` of a run whose topics' lines are together (`first`: where each topic starts) and sorted by score,
    with no tie across any topic's cut: each topic's first `depth` lines, with no pass over every line but one
    comparison of neighbouring scores. None when the scores are not in order or tie across a cut."""
    n = len(scores)
    rise = np.flatnonzero(~(scores[1:] <= scores[:-1])) + 1  # a higher score (or NaN) than the line before: a new topic
    if len(rise) and not np.isin(rise, first).all():
        return None  # (a float64 order is a float32 order: rounding keeps it, so this holds for 9.0.8 too)
    counts = np.diff(np.append(first, n))
    over = np.flatnonzero(counts > depth)
    if len(over):
        edge = ranking_scores(scores[np.stack([first[over] + depth - 1, first[over] + depth])])
        if (edge[0] == edge[1]).any():
            return None  # a line past the cut ties with the last inside: the docids decide (the general path)
    take = np.minimum(counts, depth)
    topic = np.repeat(np.arange(len(first)), take)
    pos = np.arange(int(take.sum())) - np.repeat(np.cumsum(take) - take, take)
    lines = first[topic] + pos
    docs = docs_of(lines)
    tied = break_ties(topic, ranking_scores(scores[lines]), docs)  # ties within a cut: docid descending
    return TopK(qid.take(lines[tied]), docs.take(tied), (pos + 1).astype(np.int32), len(first))


def _read_top(path: str, data: bytes, depth: int | None) -> tuple[TopK, str, int] | None:
    """A clean run file's top `depth` per topic, its runid and its number of lines, or None (the general
    reader decides). Only the topic and score of every line are parsed; docids only on the lines that can
    make the cut, and a docid twice in a topic among those lines sends the file to the general reader
    (which reports it). A pool is blind to what lies past its depth."""
    from trecbench.evaluation.retrieval.rankings import run_tag

    cols = split_fields(data, 6, ids=(0,), floats=(4,), spans=(2,), comments=True)
    if cols is None:
        return None
    qid, scores, spans = cast(Ids, cols[0]), cast(np.ndarray, cols[4]), cast(np.ndarray, cols[2])
    repeated = []

    def docs_of(lines: np.ndarray) -> Ids:
        docs = gather_ids(data, spans[lines])
        repeated.append(has_repeats(qid.take(lines), docs))
        return docs

    cut = _top(qid, scores, depth, docs_of)
    if any(repeated):
        return None
    return cut, run_tag(io.BytesIO(data)), len(scores)


def _no_documents() -> TopK:
    empty = Ids.concat([])
    return TopK(empty, empty, np.empty(0, dtype=np.int32), 0)


def _topic_codes(first: np.ndarray, code: np.ndarray, n: int) -> tuple[np.ndarray, int]:
    """Each of `n` lines' topic as a code in order of first appearance, and the number of topics, from the stretches
    of equal ids (`first`: where each starts; `code`: its id's code in their Dictionary).

    Runs list a topic's lines together, so ids are compared once per stretch of equal ids.
    """
    seen = np.full(int(code.max()) + 1, len(first), dtype=np.int64)
    np.minimum.at(seen, code, np.arange(len(first)))
    appearance = np.empty(len(seen), dtype=np.int64)
    appearance[np.argsort(seen)] = np.arange(len(seen))
    return np.repeat(appearance[code], np.diff(np.append(first, n))), len(seen)


def _runs_of(sorted_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and length of each stretch of equal values in a sorted array."""
    if not len(sorted_codes):
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    counts = np.diff(np.r_[starts, len(sorted_codes)])
    return starts, counts


def read_runs(
    runs: ShapedRun | Iterable[ShapedRun] | Mapping[str, ShapedRun], depth: int | None
) -> tuple[list[RunInfo], list[TopK], list[Problem]]:
    """Read and cut every run (side by side in threads: reading and sorting release the GIL).

    Returns each run's RunInfo and TopK, and problems that are worth reporting but not fatal (an empty
    run file contributes nothing). Bad run files raise InputError with every problem.
    """
    items = given_runs(runs).items

    def one(item: tuple[str | None, Any]) -> tuple[str, str, str, TopK, int, int, Problem | None]:
        from trecbench.evaluation.retrieval.rankings import read_run_columns, run_columns

        given, run = item
        run = run_input(run)
        if not is_path(run) and not is_stream(run):  # in memory: a DataFrame (files.shapes) or columns
            cols = run_columns(run)
            path, digest = str(getattr(run, "attrs", {}).get("path") or ""), ""
        else:
            data, path = stream_bytes(run) if is_stream(run) else (_read(str(run)), str(run))
            digest = hashlib.sha256(data).hexdigest()
            if not data or data.isspace():  # blank (not strip(): that copies the file to say so)
                return given or "", path, digest, _no_documents(), 0, 0, \
                    Problem(path, 0, "empty run: it contributes no documents")
            fast = _read_top(path, data, depth)
            if fast is not None:
                cut, tag, lines = fast
                return given or tag, path, digest, cut, cut.topics, lines, None
            cols = read_run_columns(path, data) if not is_stream(run) else run_columns(_stream_of(data, path))
        runid = given or cols.runid or ""
        cut = top_k(cols, depth)
        return runid, path, digest, cut, cut.topics, len(cols.score), None

    workers = min(len(items), usable_cores())
    if workers <= 1:
        results = [one(item) for item in items]
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as ex:
            results = list(ex.map(one, items))
    problems = []
    names = _names([(r[0], r[1]) for r in results], [given is not None for given, _ in items])
    infos, cuts = [], []
    for name, (_, path, digest, cut, topics, lines, problem) in zip(names, results):
        infos.append(RunInfo(name, path, digest, topics, lines))
        cuts.append(cut)
        if problem is not None:
            problems.append(problem)
    return infos, cuts, problems


def named_runs(runs: ShapedRun | Iterable[ShapedRun] | Mapping[str, ShapedRun]) -> dict[str, pd.DataFrame]:
    """Read runs into {name: DataFrame}, named as in a pool (runid, else file name)."""
    from trecbench.runs import read_run

    items = [(given, run_input(run)) for given, run in given_runs(runs).items]
    frames = [read_run(r) if is_path(r) or is_stream(r) else _frame_of(r) for _, r in items]
    found = [(given or f.attrs.get("runid") or "", str(f.attrs.get("path") or "") if is_stream(r) else
              str(r) if is_path(r) else "") for (given, r), f in zip(items, frames)]
    return dict(zip(_names(found, [given is not None for given, _ in items]), frames))


def _frame_of(run: Any) -> pd.DataFrame:
    """A run in memory as a DataFrame: trecbench's own columns become one."""
    from trecbench.evaluation.retrieval.rankings import RunColumns

    if not isinstance(run, RunColumns):
        return run
    frame = pd.DataFrame({"query_id": run.qid.strings(), "doc_id": run.doc.strings(), "score": run.score})
    frame.attrs.update(runid=run.runid, path=run.path)
    return frame


def _stream_of(data: bytes, name: str) -> io.BytesIO:
    """A stream's bytes, already read, as a stream again, under its name (for the exact reader's problems)."""
    stream = io.BytesIO(data)
    stream.name = name
    return stream


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise InputError(path, 0, f"cannot read: {e.strerror or e}") from None


def _names(found: list[tuple[str, str]], given: list[bool]) -> list[str]:
    """A run is named by its runid (or the name given); runs sharing one are told apart by their file names."""
    runids = [rid for rid, _ in found]
    stems = [Path(path).stem for _, path in found]
    names = []
    for i, ((rid, path), named) in enumerate(zip(found, given)):
        if named or rid and runids.count(rid) == 1:
            names.append(rid)
        elif path:
            names.append(stems[i] if stems.count(stems[i]) == 1 else Path(path).name)
        else:
            names.append(rid or f"run{i + 1}")
    seen: dict[str, int] = {}
    unique = []
    for name in names:  # still clashing (same file twice): number them
        name = "".join("_" if c in ";\t\n\r" else c for c in name) or "run"
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return unique
