"""`evaluate`: score runs against qrels with trec_eval's numbers, returned as a pandas DataFrame."""
from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, overload

import numpy as np

from trecbench.files.columns import usable_cores
from trecbench.files.shapes import (
    SHAPES,
    QrelsLike,
    RunLike,
    given_runs,
    is_path,
    is_stream,
    measure_names,
    qrels_input,
    results_in,
    run_input,
)
from trecbench.errors import InputError, Problem

from .engine import Request, RunScores, score_run
from .measures.base import LONG, STRING
from .names import MeasureError, parse_measures
from .rankings import (
    QrelsColumns,
    QrelsTable,
    RunColumns,
    qrels_columns,
    qrels_table,
    run_columns,
)

if TYPE_CHECKING:
    import pandas as pd

    from .projection import Projection

DEFAULT_MEASURES = ("AP", "nDCG@10", "R@100", "P@10", "RR")


def _read_one(run: Any) -> RunColumns:
    """A run as columns: files through the columnar reader, streams through `read_run`, every other shape
    (files.shapes) as a DataFrame checked as its file would be."""
    run = run_input(run)
    if is_path(run) or is_stream(run) or isinstance(run, RunColumns):
        return run_columns(run)
    return run_columns(checked_frame(run, "run", "score"))


def checked_frame(frame: pd.DataFrame, what: str, value: str) -> pd.DataFrame:
    """A run (`value` = score) or qrels (relevance) DataFrame checked as its file would be: InputError naming
    each bad row (1-based, `<run DataFrame>:3: ...`): a missing column, an id that is not a non-empty str
    without surrounding blanks, a value that is not a finite number (grades: an integer), a docid twice in
    a topic. Clean frames are checked with vectorised operations only."""
    import pandas as pd

    from trecbench.files.trec import has_duplicate_pairs, ids_are_clean

    where = f"<{what} DataFrame>"
    missing = [c for c in ("query_id", "doc_id", value) if c not in frame.columns]
    if missing:
        raise InputError(where, 0, f"missing column(s) {', '.join(missing)} (has: {', '.join(map(str, frame.columns))})")
    problems = []
    for column in ("query_id", "doc_id"):
        if ids_are_clean(frame[column]):
            continue
        for row, v in enumerate(frame[column].tolist(), 1):
            if not isinstance(v, str):
                problems.append(Problem(where, row, f"{column} {v!r} is not a str (ids are text: .astype(str))"))
            elif not ids_are_clean([v]):
                problems.append(Problem(where, row, f"{column} {v!r} is empty or contains whitespace"))
    values = pd.to_numeric(frame[value], errors="coerce").to_numpy(dtype=np.float64)
    given = frame[value].tolist() if not np.isfinite(values).all() or value == "relevance" else []
    for i in np.flatnonzero(~np.isfinite(values)):
        problems.append(Problem(where, int(i) + 1, f"{value} {given[i]!r} is not a finite number"))
    if value == "relevance":
        for i in np.flatnonzero(np.isfinite(values) & (values != np.round(values))):
            problems.append(Problem(where, int(i) + 1, f"relevance {given[i]!r} is not an integer"))
    if not problems and has_duplicate_pairs(frame["query_id"], frame["doc_id"]):
        pairs = pd.Series(list(zip(frame["query_id"].tolist(), frame["doc_id"].tolist())))
        first: dict[tuple, int] = {}
        for i in np.flatnonzero(pairs.duplicated(keep=False).to_numpy()):
            q, doc = pairs.iat[i]
            seen = first.setdefault((q, doc), int(i) + 1)
            if seen != i + 1:
                twice = "judged twice" if value == "relevance" else "appears twice"
                problems.append(Problem(where, int(i) + 1, f"docid {doc!r} {twice} in topic {q!r} (first in row {seen})"))
    if problems:
        raise InputError.of(sorted(problems, key=lambda p: p.line))
    return frame


def _run_names(results: list[RunScores], given: list[str | None]) -> list[str]:
    """A run is named by its runid; runs sharing one are told apart by their paths."""
    runids = [r.runid for r in results]
    names = []
    for i, (res, name) in enumerate(zip(results, given)):
        if name is None:
            rid = res.runid
            name = rid if rid and runids.count(rid) == 1 else str(res.path or rid or f"run{i + 1}")
        names.append(str(name))
    return names


def _projected(run: RunColumns, projection: Projection | None, version: int, notes: list[str] | None) -> RunColumns:
    """The run as the projection scores it (as it is without one)."""
    return run if projection is None else projection.run(run, version, notes)


def _load_qrels(qrels: Any, projection: Projection | None = None, notes: list[str] | None = None) -> QrelsColumns:
    """The qrels as columns (any of files.shapes' shapes), as the projection (if any) scores against them."""
    qrels = qrels_input(qrels)
    if is_path(qrels) or isinstance(qrels, QrelsColumns):
        columns = qrels_columns(qrels)
    else:
        columns = qrels_columns(checked_frame(qrels, "qrels", "relevance"))
    return columns if projection is None else projection.qrels(columns, notes)


def score_runs(
    qrels: QrelsLike,
    runs: RunLike | Iterable[RunLike] | Mapping[str, RunLike],
    measures: Iterable[str] = DEFAULT_MEASURES,
    *,
    rel_level: int = 1,
    depth: int | None = None,
    missing_topics: str = "zero",
    trec_eval_version: int = 9,
    judged_only: bool = False,
    on_run_done=None,
    notes: list[str] | None = None,
    judged_k: int | None = None,
    threads: int | None = None,
    projection: Projection | None = None,
) -> list[RunScores]:
    """Score each run; the result keeps trec_eval's printing order and kinds (see `evaluate`).

    `on_run_done()` is called after each run is scored (for a progress bar); sentences about measures
    asked for in a way trec_eval would read differently than intended go to `notes`. With `judged_k`,
    each result's `judged` holds Judged@judged_k per topic, for `low_judged`. `threads`: runs scored
    at the same time (default: one per core it may run on, at most 8); 1 scores them one after another.
    `projection` (`projection.read_projection`): runs made on another chunking of the qrels' sources, or
    scored at source-document level; the pairs it could not carry are counted in `notes`.
    """
    if trec_eval_version not in (9, 10):
        raise MeasureError(f"trec_eval version must be 9 or 10, not {trec_eval_version}")
    if missing_topics not in ("zero", "skip"):
        raise MeasureError(f"missing_topics must be 'zero' or 'skip', not {missing_topics!r}")
    if depth is not None and depth <= 0:
        raise MeasureError(f"depth must be positive, not {depth}")
    if threads is not None and threads < 1:
        raise MeasureError(f"threads must be at least 1, not {threads}")
    requests = parse_measures(measure_names(measures), trec_eval_version, notes)
    asked = list(requests)
    check = Request("judged", None, None, f"Judged@{judged_k}", extra=f"Judged@{judged_k}") if judged_k else None
    if check is not None and check not in requests:
        requests.append(check)
    qrels_df = _load_qrels(qrels, projection, notes)
    # one qrels table per relevance level, shared by all runs
    levels = {r.rel_level if r.rel_level is not None else rel_level for r in requests}
    tables: dict[int, QrelsTable] = {level: qrels_table(qrels_df, level) for level in levels}

    def one(run: RunLike) -> RunScores:
        # The run's columns are handed over, not kept here: score_run frees them once scored.
        scores = score_run(_projected(_read_one(run), projection, trec_eval_version, notes), qrels_df, requests,
                           rel_level=rel_level, depth=depth, version=trec_eval_version, missing_topics=missing_topics,
                           tables=tables, judged_only=judged_only)
        if check is not None:
            scores.judged = next(s for s in scores.scores if s.label == check.label)
            if check not in asked:  # computed for the check only: not printed
                scores.scores.remove(scores.judged)
        if on_run_done is not None:
            on_run_done()
        return scores

    items = given_runs(runs).items
    workers = min(len(items), threads or usable_cores())
    if workers <= 1:
        results = [one(run) for _, run in items]
    else:
        # Reading and sorting (numpy) release the GIL: runs are read and scored side by side,
        # each dropped once scored, so memory holds a few runs at a time.
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as pool:
            results = list(pool.map(one, [run for _, run in items]))
    for res, name in zip(results, _run_names(results, [n for n, _ in items])):
        res.name = name
    return results


# A type checker knows what comes back from the shape asked for: a DataFrame, or dicts.
@overload
def evaluate(
    qrels: QrelsLike,
    runs: RunLike | Iterable[RunLike] | Mapping[str, RunLike],
    measures: Iterable[str] = DEFAULT_MEASURES,
    *,
    rel_level: int = 1,
    depth: int | None = None,
    per_topic: bool = False,
    missing_topics: str = "zero",
    trec_eval_version: int = 9,
    judged_only: bool = False,
    threads: int | None = None,
    projection: Projection | None = None,
    shape: Literal["frame", "pyterrier"] = "frame",
) -> pd.DataFrame: ...


@overload
def evaluate(
    qrels: QrelsLike,
    runs: RunLike | Iterable[RunLike] | Mapping[str, RunLike],
    measures: Iterable[str] = DEFAULT_MEASURES,
    *,
    rel_level: int = 1,
    depth: int | None = None,
    per_topic: bool = False,
    missing_topics: str = "zero",
    trec_eval_version: int = 9,
    judged_only: bool = False,
    threads: int | None = None,
    projection: Projection | None = None,
    shape: Literal["dict"],
) -> dict[str, Any]: ...


def evaluate(
    qrels: QrelsLike,
    runs: RunLike | Iterable[RunLike] | Mapping[str, RunLike],
    measures: Iterable[str] = DEFAULT_MEASURES,
    *,
    rel_level: int = 1,
    depth: int | None = None,
    per_topic: bool = False,
    missing_topics: str = "zero",
    trec_eval_version: int = 9,
    judged_only: bool = False,
    threads: int | None = None,
    projection: Projection | None = None,
    shape: str = "frame",
) -> pd.DataFrame | dict[str, Any]:
    """Score runs against qrels; values are identical to trec_eval's.

    qrels: a qrels file path or a DataFrame (query_id, doc_id, relevance), or the field's shapes
        (files.shapes): PyTerrier's qid, docno, label; {qid: {docid: grade}}; ranx Qrels; ir_measures Qrels.
    runs: a run (path, stream, DataFrame (query_id, doc_id, score), PyTerrier's qid, docno, score, rank,
        {qid: {docid: score}}, ranx Run, ir_measures ScoredDocs), a list of them, or a {name: run} mapping.
    measures: one or a list of ir-measures names (`nDCG@10`, `R@100`, `AP`, `P(rel=2)@10`, `Judged@10`),
        ir_measures measure objects (`ir_measures.nDCG@10`) or trec_eval names (`ndcg_cut.10`, `map`,
        `official`, `all_trec`).
    rel_level: lowest grade that counts as relevant (trec_eval -l).
    depth: documents per topic to evaluate (trec_eval -M).
    missing_topics: "zero" (trec_eval -c: qrels topics absent from a run score 0) or "skip".
    trec_eval_version: 9 (trec_eval 9.0.8, pytrec_eval, ir-measures) or 10 (trec_eval 10.0).
    judged_only: drop the documents the qrels do not grade before scoring (condensed lists, trec_eval -J).
    threads: runs scored at the same time (default: one per core, at most 8).
    shape: "frame" (the DataFrame below), "dict" ({run: {measure: value}}, per_topic {run: {qid: {measure:
        value}}}, without the run level when one run is given: pytrec_eval's and ranx's results) or
        "pyterrier" (PyTerrier's Experiment table: name and a column per measure; per_topic its long
        perquery table: name, qid, measure, value).
    projection: `read_projection(qrels_spans, corpus_spans, cover=1.0, level="passage")`: runs made on
        another chunking of the same sources (qrels projected by source span), or scored at
        source-document level (`level="document"`); the frame's attrs["level"] and attrs["projection"]
        name what was done.

    Returns one row per run (index `run`), a column per measure; with per_topic, rows are indexed by
    (run, query_id) with every topic followed by the `all` row.

    Example:
        >>> trecbench.evaluate("qrels.txt", ["bm25.txt", "dense.txt"], ["nDCG@10", "R@100"])
    """
    if shape not in SHAPES:
        raise MeasureError(f"shape must be one of {', '.join(SHAPES)}, not {shape!r}")
    given = given_runs(runs)
    notes: list[str] = []
    results = score_runs(qrels, given, measures, rel_level=rel_level, depth=depth, missing_topics=missing_topics,
                         trec_eval_version=trec_eval_version, judged_only=judged_only, notes=notes, threads=threads,
                         projection=projection)
    for note in notes:
        warnings.warn(note, stacklevel=2)
    frame = to_frame(results, per_topic=per_topic)
    if projection is not None:
        frame.attrs.update(level=projection.level, projection=projection.rule)
    return results_in(frame, shape, per_topic=per_topic, single=given.single)


class LowJudged(NamedTuple):
    """A run whose top documents the qrels judge too little of: its scores count them as non-relevant."""

    run: str
    k: int
    mean: float  # mean Judged@k over the topics the run retrieved for
    threshold: float
    worst: list[tuple[str, float]]  # (topic, Judged@k), lowest first

    def __str__(self) -> str:
        worst = ", ".join(f"{q} {v:.2f}" for q, v in self.worst)
        return (f"{self.run}: mean Judged@{self.k} {self.mean:.3f} < {self.threshold:g}: the qrels do not judge "
                f"many of its top documents, so its scores count them as non-relevant (new runs on old qrels); "
                f"lowest topics: {worst}")


def low_judged(results: list[RunScores], threshold: float = 0.9, *, worst: int = 5) -> list[LowJudged]:
    """The runs (scored with `judged_k`) whose mean Judged@k over their retrieved topics is below `threshold`."""
    found = []
    for res in results:
        if res.judged is None or res.judged.values is None or threshold <= 0:
            continue
        missing = set(res.missing)
        pairs = [(q, float(v)) for q, v in zip(res.topics, res.judged.values) if q not in missing]
        if not pairs:
            continue
        mean = sum(v for _, v in pairs) / len(pairs)
        if mean < threshold:
            lowest = sorted(pairs, key=lambda p: (p[1], p[0]))[:worst]
            k = int(res.judged.label.partition("@")[2])
            found.append(LowJudged(res.shown, k, mean, threshold, lowest))
    return found


def to_frame(results: list[RunScores], *, per_topic: bool = False) -> pd.DataFrame:
    import pandas as pd

    rows = []
    index: list[object] = []  # run names, or (run, topic) pairs with per_topic
    for res in results:
        scores = [s for s in res.scores if s.name != "runid"]
        name = res.shown
        if per_topic:
            for i, qid in enumerate(res.topics):
                row = {s.label: _py(s.values[i], s.kind) for s in scores if s.values is not None and s.per_topic}
                rows.append(row)
                index.append((name, qid))
        summary = {s.label: _py(s.summary, s.kind) for s in scores if s.in_summary}
        rows.append(summary)
        index.append((name, "all") if per_topic else name)
    if per_topic:
        idx = pd.MultiIndex.from_tuples(index, names=["run", "query_id"])
    else:
        idx = pd.Index(index, name="run")
    frame = pd.DataFrame(rows, index=idx)
    if results:
        from .output import in_asked_order

        columns = [s.label for s in in_asked_order(results[0]) if s.name != "runid"]
        frame = frame[[c for c in columns if c in frame.columns]]
    return frame


def _py(value, kind: str):
    if value is None:
        return None
    if kind == LONG:
        return int(value)
    if kind == STRING:
        return str(value)
    return float(value)


__all__ = ["evaluate", "score_runs", "to_frame", "low_judged", "LowJudged", "DEFAULT_MEASURES"]
