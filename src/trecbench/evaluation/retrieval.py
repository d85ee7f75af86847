"""`evaluate`: score runs against qrels with trec_eval's numbers, returned as a pandas DataFrame."""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Union

from .engine import RunScores, score_run
from .measures.base import LONG, STRING
from .names import MeasureError, parse_measures
from .rankings import (
    QrelsColumns,
    QrelsTable,
    RunColumns,
    qrels_columns,
    qrels_table,
    read_qrels_columns,
    read_run_columns,
    run_columns,
)

if TYPE_CHECKING:
    import pandas as pd

RunLike = Union[str, "os.PathLike[str]", "pd.DataFrame"]
DEFAULT_MEASURES = ("AP", "nDCG@10", "R@100", "P@10", "RR")


def _is_path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike))


def _read_one(run: Any) -> RunColumns:
    return read_run_columns(run) if _is_path(run) else run_columns(run)


def _run_names(results: list[RunScores], given: list[str | None]) -> list[str]:
    """A run is named by its runid; runs sharing one are told apart by their paths."""
    runids = [r.runid for r in results]
    names = []
    for i, (res, name) in enumerate(zip(results, given)):
        if name is None:
            rid = res.runid
            name = rid if rid and runids.count(rid) == 1 else str(getattr(res, "path", None) or rid or f"run{i + 1}")
        names.append(str(name))
    return names


def _load_qrels(qrels: Any) -> QrelsColumns:
    return read_qrels_columns(qrels) if _is_path(qrels) else qrels_columns(qrels)


def score_runs(
    qrels: RunLike,
    runs: RunLike | Iterable[RunLike] | Mapping[str, RunLike],
    measures: Iterable[str] = DEFAULT_MEASURES,
    *,
    rel_level: int = 1,
    depth: int | None = None,
    missing_topics: str = "zero",
    trec_eval_version: int = 9,
    on_run_done=None,
    threads: int | None = None,
) -> list[RunScores]:
    """Score each run; the result keeps trec_eval's printing order and kinds (see `evaluate`).

    `on_run_done()` is called after each run is scored (for a progress bar). `threads`: runs scored
    at the same time (default: one per core, at most 8); 1 scores them one after another.
    """
    if trec_eval_version not in (9, 10):
        raise MeasureError(f"trec_eval version must be 9 or 10, not {trec_eval_version}")
    if missing_topics not in ("zero", "skip"):
        raise MeasureError(f"missing_topics must be 'zero' or 'skip', not {missing_topics!r}")
    if depth is not None and depth <= 0:
        raise MeasureError(f"depth must be positive, not {depth}")
    if threads is not None and threads < 1:
        raise MeasureError(f"threads must be at least 1, not {threads}")
    requests = parse_measures(list(measures), trec_eval_version)
    qrels_df = _load_qrels(qrels)
    # one qrels table per relevance level, shared by all runs
    levels = {r.rel_level if r.rel_level is not None else rel_level for r in requests}
    tables: dict[int, QrelsTable] = {level: qrels_table(qrels_df, level) for level in levels}

    def one(run: RunLike) -> RunScores:
        # The run's columns are handed over, not kept here: score_run frees them once ranked.
        scores = score_run(_read_one(run), qrels_df, requests, rel_level=rel_level, depth=depth,
                           version=trec_eval_version, missing_topics=missing_topics, tables=tables)
        if on_run_done is not None:
            on_run_done()
        return scores

    if _is_path(runs) or hasattr(runs, "columns"):  # one path or one DataFrame
        runs = [runs]  # type: ignore[list-item]
    items = list(runs.items()) if isinstance(runs, Mapping) else [(None, r) for r in runs]  # type: ignore[union-attr]
    workers = min(len(items), threads or min(os.cpu_count() or 1, 8))
    if workers <= 1:
        results = [one(run) for _, run in items]
    else:
        # Reading (pyarrow) and sorting (numpy) release the GIL: runs are read and scored side by side,
        # each dropped once scored, so memory holds a few runs at a time.
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as pool:
            results = list(pool.map(one, [run for _, run in items]))
    for res, name in zip(results, _run_names(results, [n for n, _ in items])):
        res.name = name  # type: ignore[attr-defined]
    return results


def evaluate(
    qrels: RunLike,
    runs: RunLike | Iterable[RunLike] | Mapping[str, RunLike],
    measures: Iterable[str] = DEFAULT_MEASURES,
    *,
    rel_level: int = 1,
    depth: int | None = None,
    per_topic: bool = False,
    missing_topics: str = "zero",
    trec_eval_version: int = 9,
    threads: int | None = None,
) -> pd.DataFrame:
    """Score runs against qrels; values are identical to trec_eval's.

    qrels: a qrels file path or a DataFrame (query_id, doc_id, relevance).
    runs: a run path or DataFrame (query_id, doc_id, score), a list of them, or a {name: run} mapping.
    measures: ir-measures names (`nDCG@10`, `R@100`, `AP`, `P(rel=2)@10`, `Judged@10`) or trec_eval
        names (`ndcg_cut.10`, `map`, `official`, `all_trec`).
    rel_level: lowest grade that counts as relevant (trec_eval -l).
    depth: documents per topic to evaluate (trec_eval -M).
    missing_topics: "zero" (trec_eval -c: qrels topics absent from a run score 0) or "skip".
    trec_eval_version: 9 (trec_eval 9.0.8, pytrec_eval, ir-measures) or 10 (trec_eval 10.0).
    threads: runs scored at the same time (default: one per core, at most 8).

    Returns one row per run (index `run`), a column per measure; with per_topic, rows are indexed by
    (run, query_id) with every topic followed by the `all` row.

    Example:
        >>> trecbench.evaluate("qrels.txt", ["bm25.txt", "dense.txt"], ["nDCG@10", "R@100"])
    """
    results = score_runs(qrels, runs, measures, rel_level=rel_level, depth=depth, missing_topics=missing_topics,
                         trec_eval_version=trec_eval_version, threads=threads)
    return to_frame(results, per_topic=per_topic)


def to_frame(results: list[RunScores], *, per_topic: bool = False) -> pd.DataFrame:
    import pandas as pd

    rows = []
    index = []
    for res in results:
        scores = [s for s in res.scores if s.name != "runid"]
        name = getattr(res, "name", res.runid)
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


__all__ = ["DEFAULT_MEASURES", "evaluate", "score_runs", "to_frame"]
