"""Read, validate and write TREC qrels files (`qid iteration docid grade`), `#` comment lines allowed;
read an ir_datasets dataset's qrels (`irds:<dataset-id>`) into the same frame."""
from __future__ import annotations

import os
import re
from typing import TextIO, Union, cast

import numpy as np
import pandas as pd

from trecbench.files.columns import Ids, has_repeats, split_fields
from trecbench.files.output import open_output
from trecbench.files.irds import is_irds, iter_qrels
from trecbench.files.trec import (
    PathLike,
    check_ids,
    fast_table,
    has_duplicate_pairs,
    numbered_fields,
    object_column,
    quoted,
    read_bytes,
    strict_ints,
)
from trecbench.errors import InputError, Problem

QRELS_FORMAT = "qid iteration docid grade"
_INTEGER = re.compile(r"[+-]?[0-9]+")
_INT64 = (-(2**63), 2**63 - 1)


def read_qrels(path: PathLike) -> pd.DataFrame:
    """Qrels as columns `query_id`, `iteration`, `doc_id` (str) and `relevance` (int64), in file order.

    Lines whose first non-blank character is `#` are comments; `#` elsewhere is part of a field
    (MS MARCO v2.1 segment ids contain it). Grades may be negative (-1: pooled, not judged).
    `path` may also be `irds:<dataset-id>`: that ir_datasets dataset's qrels, `path` in attrs.
    Raises InputError listing every problem, each as `path:line: what is wrong`.
    """
    frame, problems = check_qrels(path)
    if problems:
        raise InputError.of(problems)
    assert frame is not None
    return frame


def check_qrels(path: PathLike) -> tuple[pd.DataFrame | None, list[Problem]]:
    """Read and validate in one pass: the qrels (None if there is any problem) and every problem.

    For `irds:<dataset-id>` a problem's line is the record's position among the dataset's qrels.
    """
    if is_irds(path):
        return _irds_qrels(str(path))
    try:
        data = read_bytes(path)
    except InputError as e:
        return None, e.problems
    frame = _columns_qrels(data, str(path))
    if frame is None:
        frame = _fast_qrels(data, str(path))
    if frame is not None:
        return frame, []
    return _scan_qrels(data, str(path))


def validate_qrels(path: PathLike) -> list[Problem]:
    """Every problem in a qrels file, in line order; an empty list means the file is clean."""
    return check_qrels(path)[1]


def write_qrels(df: pd.DataFrame, path: Union[str, "os.PathLike[str]", TextIO]) -> None:
    """Write `qid iteration docid grade` lines in the frame's order; iteration is "0" if the frame has none.

    `path` may also be an open text stream. Raises ValueError for ids that would not read back as one field.
    """
    iterations = df["iteration"].astype(str).tolist() if "iteration" in df.columns else ["0"] * len(df)
    for column, values in (("query_id", df["query_id"]), ("iteration", iterations), ("doc_id", df["doc_id"])):
        check_ids(values, column)
    lines = [
        f"{q} {i} {d} {int(r)}\n"
        for q, i, d, r in zip(df["query_id"].tolist(), iterations, df["doc_id"].tolist(), df["relevance"].tolist())
    ]
    if hasattr(path, "write"):
        path.writelines(lines)  # type: ignore[union-attr]
        return
    with open_output(path) as f:
        f.writelines(lines)


def _irds_qrels(source: str) -> tuple[pd.DataFrame | None, list[Problem]]:
    """An ir_datasets dataset's qrels, checked as a file's are (a pair judged twice is a problem)."""
    try:
        records = list(iter_qrels(source))
    except InputError as e:
        return None, e.problems
    problems: list[Problem] = []
    first: dict[tuple[str, str], int] = {}
    for number, (qid, _, docid, _) in enumerate(records, start=1):
        seen = first.setdefault((qid, docid), number)
        if seen != number:
            message = f"docid {quoted(docid)} judged twice for topic {quoted(qid)} (first in qrels record {seen})"
            problems.append(Problem(source, number, message))
    if not records:
        problems.append(Problem(source, 0, "no qrels in this ir_datasets dataset"))
    if problems:
        return None, problems
    qids, iterations, docids, grades = zip(*records)
    frame = pd.DataFrame(
        {
            "query_id": object_column(list(qids)),
            "iteration": object_column(list(iterations)),
            "doc_id": object_column(list(docids)),
            "relevance": np.array(grades, dtype=np.int64),
        }
    )
    frame.attrs["path"] = source
    return frame, []


def _columns_qrels(data: bytes, path: str) -> pd.DataFrame | None:
    """files.columns' split of clean qrels (one space or one tab between four fields); None for any other file."""
    cols = split_fields(data, 4, ids=(0, 1, 2), ints=(3,), comments=True)
    if cols is None:
        return None
    qids, iterations, docids = (cast(Ids, cols[f]) for f in (0, 1, 2))
    if has_repeats(qids, docids):
        return None
    # ids are object dtype (Python str), as the other paths give them: pyarrow makes them from the bytes
    frame = pd.DataFrame({name: pd.Series(ids.to_arrow().to_numpy(zero_copy_only=False), dtype=object)
                          for name, ids in (("query_id", qids), ("iteration", iterations), ("doc_id", docids))})
    frame["relevance"] = cols[3]
    frame.attrs["path"] = path
    return frame


def _fast_qrels(data: bytes, path: str) -> pd.DataFrame | None:
    """The qrels if pandas reads them and every vectorised check passes, else None (the slow path decides)."""
    table = fast_table(data, comments=True)
    if table is None or table.shape[1] != 4 or (table[3].to_numpy() == "").any():
        return None
    grades = strict_ints(table[3])
    if grades is None or has_duplicate_pairs(table[0], table[2]):
        return None
    frame = pd.DataFrame({"query_id": table[0], "iteration": table[1], "doc_id": table[2], "relevance": grades})
    frame.attrs["path"] = path
    return frame


def _scan_qrels(data: bytes, path: str) -> tuple[pd.DataFrame | None, list[Problem]]:
    """Line by line: the qrels (None if there is any problem) and every problem with its line."""
    columns: tuple[list[str], list[str], list[str]] = ([], [], [])
    grades: list[int] = []
    problems: list[Problem] = []
    first_line: dict[tuple[str, str], int] = {}
    lines = 0
    for item in numbered_fields(data, path, comments=True):
        if isinstance(item, Problem):
            problems.append(item)
            continue
        line, fields = item
        lines += 1
        if len(fields) != 4:
            n = len(fields)
            problems.append(Problem(path, line, f"{n} field{'s' * (n != 1)}, expected 4: {QRELS_FORMAT}"))
            continue
        qid, iteration, docid, text = fields
        grade = int(text) if _INTEGER.fullmatch(text) else None
        if grade is None:
            problems.append(Problem(path, line, f"grade {quoted(text)} is not an integer"))
        elif not _INT64[0] <= grade <= _INT64[1]:
            problems.append(Problem(path, line, f"grade {quoted(text)} is out of range"))
        first = first_line.setdefault((qid, docid), line)
        if first != line:
            message = f"docid {quoted(docid)} judged twice for topic {quoted(qid)} (first on line {first})"
            problems.append(Problem(path, line, message))
        for column, value in zip(columns, (qid, iteration, docid)):
            column.append(value)
        grades.append(grade or 0)
    if not lines and not problems:
        problems.append(Problem(path, 0, f"empty file: no qrels lines ({QRELS_FORMAT})"))
    if problems:
        return None, problems
    frame = pd.DataFrame(
        {
            "query_id": object_column(columns[0]),
            "iteration": object_column(columns[1]),
            "doc_id": object_column(columns[2]),
            "relevance": np.array(grades, dtype=np.int64),
        }
    )
    frame.attrs["path"] = path
    return frame, []
