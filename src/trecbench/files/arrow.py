"""The fastest path for clean TREC files: pyarrow's multi-threaded CSV reader on one delimiter.

Most runs and qrels are written with exactly one space or one tab between fields. Such a file is
parsed by pyarrow in a fraction of the time pandas needs; anything else (runs of spaces, extra or
missing fields, a value that is not a number) makes this path return None and the general reader
takes over, so results never depend on which path read the file.
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd


def sniff_delimiter(data: bytes, n_fields: int) -> str | None:
    """' ' or '\\t' if the first line has exactly `n_fields` fields separated by single ones."""
    end = data.find(b"\n")
    first = (data if end < 0 else data[:end]).rstrip(b"\r")
    for delim in (b"\t", b" "):
        parts = first.split(delim)
        if len(parts) == n_fields and all(p and not any(c in p for c in b" \t") for p in parts):
            return delim.decode()
    return None


def read_fields(data: bytes, names: list[str], keep: dict[str, str]) -> pd.DataFrame | None:
    """Columns `keep` ({name: "str" | "float64" | "int64"}) of a file with exactly len(names) fields per line."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pcsv
    except ImportError:
        return None
    delim = sniff_delimiter(data, len(names))
    if delim is None:
        return None
    types = {"str": pa.string(), "float64": pa.float64(), "int64": pa.int64()}
    try:
        table = pcsv.read_csv(
            io.BytesIO(data),
            read_options=pcsv.ReadOptions(column_names=names, use_threads=True),
            parse_options=pcsv.ParseOptions(delimiter=delim, quote_char=False, double_quote=False,
                                            escape_char=False, newlines_in_values=False, ignore_empty_lines=True),
            convert_options=pcsv.ConvertOptions(
                include_columns=list(keep), column_types={k: types[v] for k, v in keep.items()},
                strings_can_be_null=False, quoted_strings_can_be_null=False, null_values=[], check_utf8=True),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if table.num_rows == 0 or any(table.column(k).null_count for k in keep):
        return None
    frame = table.to_pandas()
    for name, kind in keep.items():
        if kind == "str" and (frame[name].str.len() == 0).any():
            return None
        if kind == "float64" and not np.isfinite(frame[name].to_numpy()).all():
            return None
    return frame


def duplicated_pairs(first: pd.Series, second: pd.Series) -> bool:
    """Whether some (first, second) pair occurs twice (a docid twice within a topic)."""
    a, ua = pd.factorize(first)
    b, ub = pd.factorize(second)
    if len(ub) == len(b):
        return False
    return bool(pd.Series(a.astype(np.int64) * len(ub) + b).duplicated().any())
