"""Per-topic score tables shared by answers, evidence and context recall: build, print, write, read back.

A score table is a DataFrame indexed by (run, query_id) with a column per measure, every run's topics
followed by its `all` row (the mean over the topics where the measure is defined), the shape
`trecbench.evaluate(..., per_topic=True)` returns. A NaN is "not defined for this topic" (no vital
nugget, no reference) and is left out of the mean.

Files: CSV in long format `run,query_id,measure,value` (as `eval retrieval --format csv` writes),
and JSON `[{run, all: {measure: value}, topics: {qid: {measure: value}}, ...notes}]`; `read_scores`
reads both back (and a wide CSV with `run`, `query_id` and a column per measure) for `eval compare`.
"""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import IO, Any, Iterable, Mapping

import numpy as np
import pandas as pd

from trecbench.errors import InputError
from trecbench.files.lines import parse_json

ALL = "all"


def scores_frame(rows: Iterable[tuple[str, str, Mapping[str, float]]], measures: list[str]) -> pd.DataFrame:
    """A score table from (run, qid, {measure: value}) rows, topics in the order given, `all` rows added."""
    by_run: dict[str, list[tuple[str, Mapping[str, float]]]] = {}
    for run, qid, values in rows:
        by_run.setdefault(run, []).append((qid, values))
    index, data = [], []
    for run, topics in by_run.items():
        for qid, values in topics:
            index.append((run, qid))
            data.append([float(values.get(m, math.nan)) for m in measures])
        block = np.array([d for d in data[len(data) - len(topics):]], dtype=np.float64).reshape(len(topics),
                                                                                                 len(measures))
        index.append((run, ALL))
        data.append([_mean(block[:, j]) for j in range(len(measures))])
    idx = pd.MultiIndex.from_arrays([[r for r, _ in index], [q for _, q in index]], names=["run", "query_id"])
    return pd.DataFrame(data if data else None, index=idx, columns=measures, dtype=np.float64)


def _mean(values: np.ndarray) -> float:
    values = values[~np.isnan(values)]
    total = 0.0
    for v in values:  # one addition at a time in topic order, as trec_eval averages
        total += float(v)
    return total / len(values) if len(values) else math.nan


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Only the `all` rows, indexed by run."""
    return frame[frame.index.get_level_values("query_id") == ALL].droplevel("query_id")


def per_topic(frame: pd.DataFrame) -> pd.DataFrame:
    """Only the topic rows."""
    return frame[frame.index.get_level_values("query_id") != ALL]


def _fmt(value: float) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.4f}"


def table_lines(frame: pd.DataFrame, *, topics: bool) -> list[str]:
    """An aligned text table: a row per run (and per topic with `topics`), a column per measure."""
    shown = frame if topics else summary(frame).assign(query_id=ALL).set_index("query_id", append=True)
    ids = ["run", "topic"] if topics else ["run"]
    header = ids + list(frame.columns)
    rows = []
    for (run, qid), values in zip(shown.index, shown.to_numpy()):
        rows.append(([run, qid] if topics else [run]) + [_fmt(v) for v in values])
    from trecbench.evaluation.retrieval.output import aligned

    return aligned(header, rows, left=len(ids))


def _json_value(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def write_scores(frame: pd.DataFrame, stream: IO[str], fmt: str = "table", *, topics: bool = False,
                 notes: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """Print a score table as `table`, `csv` (long) or `json`; `notes` ({run: {key: value}}) go into JSON."""
    if fmt == "table":
        stream.write("\n".join(table_lines(frame, topics=topics)) + "\n")
    elif fmt == "csv":
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(["run", "query_id", "measure", "value"])
        for (run, qid), values in zip(frame.index, frame.to_numpy()):
            if qid != ALL and not topics:
                continue
            for measure, value in zip(frame.columns, values):
                writer.writerow([run, qid, measure, "" if math.isnan(value) else repr(float(value))])
    elif fmt == "json":
        doc = []
        for run in dict.fromkeys(frame.index.get_level_values("run")):
            block = frame.loc[run]
            entry: dict[str, Any] = {"run": run, ALL: {m: _json_value(v) for m, v in block.loc[ALL].items()}}
            if topics:
                entry["topics"] = {qid: {m: _json_value(v) for m, v in row.items()}
                                   for qid, row in block.iterrows() if qid != ALL}
            entry.update((notes or {}).get(run, {}))
            doc.append(entry)
        json.dump(doc, stream, indent=2, ensure_ascii=False)
        stream.write("\n")
    else:
        raise ValueError(f"unknown format {fmt!r}")


def read_scores(path: str | Path) -> pd.DataFrame:
    """Per-topic scores from a CSV or JSON file written by any `trecbench eval` command (with -q).

    Returns topic rows only (no `all` rows): index (run, query_id), a column per measure.
    """
    where = str(path)
    p = Path(path)
    if not p.is_file():
        raise InputError(where, 0, "no such file")
    text = p.read_text(encoding="utf-8", errors="replace")
    if text.lstrip().startswith("["):
        return _read_json(where, text)
    return _read_csv(where, p)


def _read_json(where: str, text: str) -> pd.DataFrame:
    doc, problem = parse_json(text)
    if problem:
        raise InputError(where, problem.line, f"invalid JSON: {problem.why}")
    rows = []
    for entry in doc if isinstance(doc, list) else []:
        if not isinstance(entry, dict) or "run" not in entry:
            continue
        for qid, values in (entry.get("topics") or {}).items():
            if isinstance(values, dict):
                rows.append((str(entry["run"]), str(qid), {m: math.nan if v is None else v for m, v in values.items()
                                                            if isinstance(v, (int, float)) or v is None}))
    if not rows:
        raise InputError(where, 0, "no per-topic scores: write the file with -q (--per-topic)")
    return _frame(rows)


def _read_csv(where: str, path: Path) -> pd.DataFrame:
    try:
        table = pd.read_csv(path, dtype={"run": str, "query_id": str}, keep_default_na=False,
                            na_values=["", "nan", "NaN"])
    except (ValueError, pd.errors.ParserError) as e:
        raise InputError(where, 0, f"cannot read as CSV: {e}") from None
    if not {"run", "query_id"} <= set(table.columns):
        raise InputError(where, 1, "expected a header with run and query_id (and measure,value or a column per "
                                   "measure)")
    if {"measure", "value"} <= set(table.columns):
        table["value"] = pd.to_numeric(table["value"], errors="coerce")
        table = table.pivot_table(index=["run", "query_id"], columns="measure", values="value", aggfunc="first",
                                  dropna=False, sort=False)
        table.columns.name = None
    else:
        table = table.set_index(["run", "query_id"]).apply(pd.to_numeric, errors="coerce")
    table = table[table.index.get_level_values("query_id") != ALL]
    if table.empty:
        raise InputError(where, 0, "no per-topic scores: write the file with -q (--per-topic)")
    return table.astype(np.float64)


def _frame(rows: list[tuple[str, str, dict[str, float]]]) -> pd.DataFrame:
    measures = list(dict.fromkeys(m for _, _, values in rows for m in values))
    index = pd.MultiIndex.from_tuples([(r, q) for r, q, _ in rows], names=["run", "query_id"])
    return pd.DataFrame([[float(v.get(m, math.nan)) for m in measures] for _, _, v in rows], index=index,
                        columns=measures, dtype=np.float64)


def emit(frame: pd.DataFrame, output: str | None, fmt: str = "table", *, topics: bool = False,
         notes: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """`write_scores` to the file `output`, or to standard output when it is None."""
    import sys

    if output is None:
        write_scores(frame, sys.stdout, fmt, topics=topics, notes=notes)
        return
    from trecbench.files.output import open_output

    with open_output(output) as stream:
        write_scores(frame, stream, fmt, topics=topics, notes=notes)
