"""Runs and qrels in the shapes the field's tools use, turned into trecbench's own, and results given back in them.

Every entry point that takes runs or qrels (evaluate and score_runs through evaluation.retrieval.frames
and rankings, build_pool and leave_one_out's runs through pooling.rank, agreement, compare_runs' scores)
calls this module first, so each shape is read in one place and scores the same wherever it is given:

- a TREC file's path, or a DataFrame (query_id, doc_id, score | relevance): trecbench's own, as given;
- a stream (a binary or text file object) of a TREC run: handed to the run reader as it is;
- a PyTerrier DataFrame (qid, docno, score, rank | qid, docno, label): renamed; PyTerrier's `docid`
  column (its index's integer ids) and `rank` are left alone and play no part, as a run file's rank;
- integer id columns (numeric ids read from a CSV): taken as text. A column of mixed strings and numbers
  stays refused row by row (it is a mistake more often than not);
- pytrec_eval's and ranx's dict of dicts: {qid: {docid: score}} runs, {qid: {docid: grade}} qrels;
- ranx's Qrels and Run objects, read through their documented interface (`to_dict()`, `name`), so ranx
  is not needed to read them;
- ir_measures' records, a list or an iterator of ScoredDoc(query_id, doc_id, score) or
  Qrel(query_id, doc_id, relevance, iteration), or of anything with those attributes.

Measures are one name, one ir_measures measure object (`ir_measures.nDCG@10`), or a list of either.
Results go back as trecbench's DataFrame, as dicts (pytrec_eval's and ranx's shape) or as PyTerrier's
Experiment tables (`results_in`); runs and qrels as PyTerrier frames or dicts (`pyterrier_run` ...).
pandas is imported only when a DataFrame is made.
"""
from __future__ import annotations

import numbers
import os
from collections.abc import Iterable, Mapping
from typing import IO, TYPE_CHECKING, Any, NamedTuple, Protocol, Union

from trecbench.errors import InputError

if TYPE_CHECKING:
    import pandas as pd



class Ranx(Protocol):
    """ranx's Qrels and Run as this module reads them: their documented `to_dict()` and `name`."""

    name: Any

    def to_dict(self) -> Any: ...


# What a run or a qrels parameter takes (records are an Iterable, ir_measures' ScoredDoc or Qrel)
RunLike = Union[str, "os.PathLike[str]", "pd.DataFrame", "IO[Any]", "Mapping[Any, Mapping[Any, float]]", Ranx,
                "Iterable[Any]"]
QrelsLike = Union[str, "os.PathLike[str]", "pd.DataFrame", "Mapping[Any, Mapping[Any, int]]", Ranx, "Iterable[Any]"]

SHAPES = ("frame", "dict", "pyterrier")  # the shapes results can be given back in
PYTERRIER_RUN = {"qid": "query_id", "docno": "doc_id"}
PYTERRIER_QRELS = {"qid": "query_id", "docno": "doc_id", "label": "relevance"}
RUN_SHAPES = ("a run file's path or stream, a DataFrame (query_id, doc_id, score, or PyTerrier's qid, docno, "
              "score), a {qid: {docid: score}} dict, a ranx Run or ir_measures ScoredDoc records")
QRELS_SHAPES = ("a qrels file's path, a DataFrame (query_id, doc_id, relevance, or PyTerrier's qid, docno, "
                "label), a {qid: {docid: grade}} dict, a ranx Qrels or ir_measures Qrel records")


def is_path(value: object) -> bool:
    """A file named by a str or a path."""
    return isinstance(value, (str, os.PathLike))


def is_stream(value: object) -> bool:
    """A file object open for reading (binary or text)."""
    return callable(getattr(value, "read", None)) and not is_path(value)


def stream_bytes(stream: Any) -> tuple[bytes, str]:
    """A stream's bytes (text encoded as UTF-8, gzip decompressed, no leading byte order mark) and the
    name its problems are reported under: its file's name, else `<stream>`."""
    name = getattr(stream, "name", None)
    where = name if isinstance(name, str) else "<stream>"
    data = stream.read()
    if isinstance(data, str):
        data = data.encode("utf-8")
    data = bytes(data)
    if data.startswith(b"\x1f\x8b"):
        import gzip  # only for a gzipped stream: reading a plain file does not pay for it
        import zlib

        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise InputError(where, 0, f"cannot read: {e}") from None
    return data.removeprefix(b"\xef\xbb\xbf"), where


class GivenRuns(NamedTuple):
    """The runs an entry point was given, as (name given or None, run); `single` when one run was given
    (not a list or mapping of them), so results can drop the run level."""

    items: list[tuple[Any, Any]]
    single: bool


def given_runs(runs: Any) -> GivenRuns:
    """One run of any shape, a list of runs, or a {name: run} mapping, as GivenRuns (given ones pass through).

    A {qid: {docid: score}} dict is one run, not a mapping of names to runs; a list or an iterator of
    records is one run, a list of anything else many.
    """
    if isinstance(runs, GivenRuns):
        return runs
    if _is_one_run(runs):
        return GivenRuns([(None, runs)], True)
    if isinstance(runs, Mapping):
        return GivenRuns(list(runs.items()), False)
    if not isinstance(runs, Iterable):
        raise InputError("<runs>", 0, f"runs are one run or a list or {{name: run}} mapping of them: {RUN_SHAPES}; "
                                      f"not {type(runs).__name__}")
    items = list(runs)  # an iterator is read once, here
    if items and _is_record(items[0]):
        return GivenRuns([(None, items)], True)
    return GivenRuns([(None, run) for run in items], False)


def run_input(run: Any) -> Any:
    """One run as trecbench reads it: a path or stream as given (the TREC readers read it), trecbench's
    own columns as given, any other shape as a DataFrame (query_id, doc_id, score; attrs["runid"] is a
    ranx Run's name). Raises InputError for anything that is not a run."""
    if is_path(run) or is_stream(run) or _is_own_columns(run):
        return run
    if hasattr(run, "columns"):
        return _renamed(run, PYTERRIER_RUN)
    if _is_ranx(run):
        frame = _nested_frame(run.to_dict(), "score", "run")
        frame.attrs["runid"] = str(run.name) if run.name else None
        return frame
    if isinstance(run, Mapping):
        return _nested_frame(run, "score", "run")
    if isinstance(run, Iterable):
        return _records_frame(list(run), ("query_id", "doc_id", "score"), "run")
    raise InputError("<run>", 0, f"a run is {RUN_SHAPES}; not {type(run).__name__}")


def qrels_input(qrels: Any) -> Any:
    """Qrels as trecbench reads them: a path as given, trecbench's own columns as given, any other shape
    as a DataFrame (query_id, doc_id, relevance, and iteration when the records have one). Raises
    InputError for anything that is not qrels."""
    if is_path(qrels) or _is_own_columns(qrels):
        return qrels
    if hasattr(qrels, "columns"):
        return _renamed(qrels, PYTERRIER_QRELS)
    if _is_ranx(qrels):
        return _nested_frame(qrels.to_dict(), "relevance", "qrels")
    if isinstance(qrels, Mapping):
        return _nested_frame(qrels, "relevance", "qrels")
    if isinstance(qrels, Iterable) and not is_stream(qrels):
        records = list(qrels)
        fields: tuple[str, ...] = ("query_id", "doc_id", "relevance")
        if records and hasattr(records[0], "iteration"):
            fields = ("query_id", "iteration", "doc_id", "relevance")
        return _records_frame(records, fields, "qrels")
    raise InputError("<qrels>", 0, f"qrels are {QRELS_SHAPES}; not {type(qrels).__name__}")


def measure_names(measures: Any) -> list[str]:
    """Measure names from one name, one ir_measures measure object, or an iterable of either (a single
    str is one name, never its letters). Anything else is named by str() and left to the measure parser."""
    if isinstance(measures, str) or _is_measure(measures):
        measures = [measures]
    return [m if isinstance(m, str) else str(m) for m in measures]


def _is_measure(value: object) -> bool:
    # ir_measures' Measure objects: a NAME and the params they were given (ir_measures.measures.base)
    return hasattr(value, "NAME") and isinstance(getattr(value, "params", None), Mapping)


def _is_one_run(value: object) -> bool:
    return (is_path(value) or is_stream(value) or hasattr(value, "columns") or _is_own_columns(value)
            or _is_ranx(value) or _is_nested(value))


def _is_own_columns(value: object) -> bool:
    # trecbench's RunColumns and QrelsColumns (NamedTuples of columns), not one record
    fields = getattr(value, "_fields", None)
    return isinstance(value, tuple) and fields is not None and "query_id" not in fields


def _is_ranx(value: object) -> bool:
    # ranx's Qrels and Run are no Mappings; their documented interface is to_dict() and a name
    return (callable(getattr(value, "to_dict", None)) and hasattr(value, "name")
            and not hasattr(value, "columns") and not hasattr(value, "dtype"))


def _is_record(value: object) -> bool:
    # a DataFrame has its columns as attributes too: it is a run, never one record
    return hasattr(value, "query_id") and hasattr(value, "doc_id") and not hasattr(value, "columns")


def _is_nested(value: object) -> bool:
    """{qid: {docid: number}}: every value a mapping, the first document's value a number."""
    if not isinstance(value, Mapping) or not value:
        return False
    for docs in value.values():
        if not isinstance(docs, Mapping):
            return False
        for v in docs.values():
            return isinstance(v, numbers.Number)
    return True  # topics without documents: a run that retrieved nothing


def _text(value: Any) -> Any:
    """An integer id as text; anything else as it is (the checks refuse what is not text)."""
    return str(value) if isinstance(value, numbers.Integral) and not isinstance(value, bool) else value


def _renamed(frame: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """A PyTerrier frame renamed to trecbench's columns, integer id columns as text; the frame itself when
    neither applies (no copy)."""
    import pandas as pd

    out = frame
    if all(c in frame.columns for c in ("qid", "docno")) and not {"query_id", "doc_id"} & set(frame.columns):
        out = out.rename(columns={a: b for a, b in names.items() if a in frame.columns and b not in frame.columns})
    for column in ("query_id", "doc_id"):
        if column in out.columns and pd.api.types.is_integer_dtype(out[column].dtype) \
                and not pd.api.types.is_bool_dtype(out[column].dtype):
            out = out.assign(**{column: out[column].astype(str)})
    if out is not frame:
        out.attrs = dict(frame.attrs)
    return out


def _nested_frame(nested: Mapping, value: str, what: str) -> pd.DataFrame:
    """{qid: {docid: value}} as a DataFrame (query_id, doc_id, value), topics and documents in dict order."""
    import pandas as pd

    qids: list[Any] = []
    docs: list[Any] = []
    values: list[Any] = []
    for qid, ranked in nested.items():
        if not isinstance(ranked, Mapping):
            raise InputError(f"<{what} dict>", 0, f"topic {qid!r}: {{docid: {value}}} expected, "
                                                  f"not {type(ranked).__name__}")
        qids.extend([_text(qid)] * len(ranked))
        docs.extend(_text(doc) for doc in ranked)
        values.extend(ranked.values())
    return pd.DataFrame({"query_id": pd.Series(qids, dtype=object), "doc_id": pd.Series(docs, dtype=object),
                         value: pd.Series(values, dtype=object if not values else None)})


def _records_frame(records: list, fields: tuple[str, ...], what: str) -> pd.DataFrame:
    """Records with the `fields` attributes (ir_measures' ScoredDoc or Qrel) as a DataFrame of those columns."""
    import pandas as pd

    shapes = RUN_SHAPES if what == "run" else QRELS_SHAPES
    for record in records[:1]:
        missing = [f for f in fields if not hasattr(record, f)]
        if missing:
            raise InputError(f"<{what}>", 0, f"a {what} is {shapes}; not a list of {type(record).__name__} "
                                             f"(no {', '.join(missing)})")
    try:
        columns = {f: [getattr(r, f) for r in records] for f in fields}
    except AttributeError as e:
        raise InputError(f"<{what}>", 0, f"a record lacks a field: {e}") from None
    ids = {"query_id", "doc_id", "iteration"}
    return pd.DataFrame({f: pd.Series([_text(v) for v in col] if f in ids else col,
                                      dtype=object if f in ids or not col else None)
                         for f, col in columns.items()})


def results_in(frame: pd.DataFrame, shape: str, *, per_topic: bool, single: bool) -> Any:
    """`evaluate`'s table in `shape` (one of SHAPES):

    - frame: as it is;
    - dict: {run: {measure: value}}, with per_topic {run: {qid: {measure: value}}} (pytrec_eval's shape,
      topics only); the run level is left out when one run was given (ranx's and pytrec_eval's results);
    - pyterrier: PyTerrier's Experiment table (name, then a column per measure), with per_topic its
      perquery table (name, qid, measure, value; topics only).
    """
    if shape == "frame":
        return frame
    if per_topic:
        frame = frame[frame.index.get_level_values("query_id") != "all"]
    if shape == "pyterrier":
        if not per_topic:
            return frame.rename_axis("name").reset_index()
        wide = frame.rename_axis(["name", "qid"]).reset_index()
        long = wide.melt(id_vars=["name", "qid"], var_name="measure", value_name="value", ignore_index=False)
        # row by row (a topic's measures together), as PyTerrier lists them
        return long.sort_index(kind="stable").dropna(subset=["value"]).reset_index(drop=True)
    out: dict[str, Any] = {}
    for key, row in frame.iterrows():
        values = {m: v for m, v in row.items() if v is not None and v == v}
        if per_topic:
            run, qid = key
            out.setdefault(str(run), {})[str(qid)] = values
        else:
            out[str(key)] = values
    return next(iter(out.values()), {}) if single else out


def per_topic_frame(scores: Any) -> pd.DataFrame:
    """Per-topic scores as compare_runs takes them (index (run, query_id), a column per measure) from:
    that frame (index levels may be PyTerrier's name, qid); PyTerrier's perquery table (name, qid,
    measure, value); {run: {qid: {measure: value}}} (pytrec_eval's results per run, `evaluate(...,
    shape="dict", per_topic=True)`); or {run: records} (ir_measures' iter_calc Metric(query_id, measure,
    value) records). Measures are named by str() (ir_measures' measure objects)."""
    import pandas as pd

    if hasattr(scores, "columns"):
        if {"name", "qid", "measure", "value"} <= set(scores.columns):
            long = scores.assign(measure=scores["measure"].map(str))
            wide = long.pivot_table(index=["name", "qid"], columns="measure", values="value", sort=False,
                                    aggfunc="first")
            wide.columns.name = None
            scores = wide[list(dict.fromkeys(long["measure"]))]
        names = {"name": "run", "qid": "query_id"}
        if any(n in names for n in scores.index.names):
            scores = scores.rename_axis([names.get(n, n) for n in scores.index.names])
        return scores
    if not isinstance(scores, Mapping):
        raise InputError("<scores>", 0, "per-topic scores are a DataFrame indexed (run, query_id), PyTerrier's "
                                        "perquery table, {run: {qid: {measure: value}}} or {run: ir_measures "
                                        f"Metric records}}; not {type(scores).__name__}")
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for run, per in scores.items():
        if isinstance(per, Mapping):
            for qid, values in per.items():
                rows[(str(run), str(qid))] = {str(m): v for m, v in values.items()}
        else:
            for metric in per:
                rows.setdefault((str(run), str(metric.query_id)), {})[str(metric.measure)] = metric.value
    index = pd.MultiIndex.from_tuples(list(rows), names=["run", "query_id"])
    return pd.DataFrame(list(rows.values()), index=index)


def pyterrier_run(run: Any) -> pd.DataFrame:
    """A run (any shape but a file: read files with `read_run`) as PyTerrier's frame: qid, docno, score, rank,
    in trec_eval's ranking order, rank 0 at the top of each topic (PyTerrier's ranks start at 0)."""
    from trecbench.runs.write import trec_order

    frame = trec_order(_in_memory(run_input(run), "run"))
    out = frame[["query_id", "doc_id", "score"]].rename(columns={"query_id": "qid", "doc_id": "docno"})
    out["rank"] = out.groupby("qid", sort=False).cumcount()
    out.attrs = dict(frame.attrs)
    return out


def pyterrier_qrels(qrels: Any) -> pd.DataFrame:
    """Qrels (any shape but a file: read files with `read_qrels`) as PyTerrier's frame: qid, docno, label."""
    frame = _in_memory(qrels_input(qrels), "qrels")
    return frame[["query_id", "doc_id", "relevance"]].rename(columns={v: k for k, v in PYTERRIER_QRELS.items()})


def run_dict(run: Any) -> dict[str, dict[str, float]]:
    """A run (any shape but a file) as pytrec_eval's and ranx's {qid: {docid: score}}."""
    return _as_nested(_in_memory(run_input(run), "run"), "score", float)


def qrels_dict(qrels: Any) -> dict[str, dict[str, int]]:
    """Qrels (any shape but a file) as pytrec_eval's and ranx's {qid: {docid: grade}}."""
    return _as_nested(_in_memory(qrels_input(qrels), "qrels"), "relevance", int)


def _in_memory(value: Any, what: str) -> pd.DataFrame:
    if not hasattr(value, "columns"):
        raise InputError(f"<{what}>", 0, f"read the {what} first (trecbench.read_{what}): this takes one in memory")
    return value


def _as_nested(frame: pd.DataFrame, value: str, kind: type) -> dict:
    out: dict[str, dict[str, Any]] = {}
    for qid, doc, v in zip(frame["query_id"].tolist(), frame["doc_id"].tolist(), frame[value].tolist()):
        out.setdefault(str(qid), {})[str(doc)] = kind(v)
    return out


__all__ = [
    "SHAPES", "RunLike", "QrelsLike", "Ranx", "GivenRuns", "given_runs", "run_input", "qrels_input", "measure_names",
    "results_in", "per_topic_frame", "pyterrier_run", "pyterrier_qrels", "run_dict", "qrels_dict", "is_path",
    "is_stream", "stream_bytes",
]
