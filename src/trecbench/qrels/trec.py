"""Read, validate and write TREC qrels files (`qid iteration docid grade`), `#` comment lines allowed;
read an ir_datasets dataset's qrels (`irds:<dataset-id>`) into the same frame."""
from __future__ import annotations

import os
import re
from typing import BinaryIO, Callable, Iterator, NamedTuple, TextIO, Union, cast

import numpy as np
import pandas as pd

from trecbench.files.columns import Ids, Topics, has_repeats, line_blocks, split_fields
from trecbench.files.output import open_output
from trecbench.files.irds import is_irds, iter_qrels
from trecbench.files.trec import (
    open_trec,
    PairLines,
    check_grouped_first,
    Fields,
    PathLike,
    check_ids,
    fast_table,
    file_shape,
    has_duplicate_pairs,
    numbered_fields,
    object_column,
    quoted,
    read_bytes,
    strict_ints,
)
from trecbench.errors import InputError, Problem, ProblemList

QRELS_FORMAT = "qid iteration docid grade"
_INTEGER = re.compile(r"[+-]?[0-9]+")
_INT64 = (-(2**63), 2**63 - 1)


def read_qrels(path: PathLike) -> pd.DataFrame:
    """Qrels as columns `query_id`, `iteration`, `doc_id` (str) and `relevance` (int64), in file order.

    Lines whose first non-blank character is `#` are comments; `#` elsewhere is part of a field
    (MS MARCO v2.1 segment ids contain it). Grades may be negative (-1: pooled, not judged).
    `path` may also be `irds:<dataset-id>`: that ir_datasets dataset's qrels, `path` in attrs.
    Raises InputError listing every problem, each as `path:line: what is wrong`; when every line is a
    run line, the error's `looks_like` is "run" (files given in the wrong order).
    """
    if is_irds(path):
        frame, problems = _irds_qrels(str(path))
        if problems:
            raise InputError.of(problems)
        assert frame is not None
        return frame
    data = read_bytes(path)
    frame, problems = _qrels_of(data, str(path))
    if problems:
        raise InputError.of(problems, looks_like="run" if file_shape(data, str(path)) == "run" else "")
    assert frame is not None
    return frame


def _qrels_of(data: bytes, path: str) -> tuple[pd.DataFrame | None, list[Problem]]:
    frame = _columns_qrels(data, path)
    if frame is None:
        frame = _fast_qrels(data, path)
    if frame is not None:
        return frame, []
    return _scan_qrels(data, path)


def check_qrels(path: PathLike) -> tuple[pd.DataFrame | None, list[Problem]]:
    """Validate and read: the qrels (None if there is any problem) and every problem.

    Streams, as `runs.check_run` does: a clean file is split into columns a block at a time (ids as Arrow
    strings); any other file is checked line by line keeping only the current topic's docids (every docid
    when a topic's lines are not together) and the first errors.KEPT problems, the rest counted in a last
    `N more problems not listed`; a file with no problem that is not clean is then read by `read_qrels`.
    For `irds:<dataset-id>` a problem's line is the record's position among the dataset's qrels.
    """
    if is_irds(path):
        return _irds_qrels(str(path))
    name = str(path)
    try:
        opened = open_trec(path)  # standard input, gzip, a byte order mark: their text is read whole
        with opened.source:
            frame = _clean_qrels(opened.source, name)
        if frame is not None:
            return frame, []
        problems = _qrels_problems(opened.lines, name)
        if problems:
            return None, problems
        return _qrels_of(read_bytes(path) if opened.data is None else opened.data, name)
    except InputError as e:
        return None, e.problems


class QrelsSummary(NamedTuple):
    """What `qrels validate` says of good qrels: distinct topics, judgments, and judgments graded above 0."""

    topics: int
    judgments: int
    relevant: int


def summarize_qrels(path: PathLike) -> tuple[QrelsSummary | None, list[Problem]]:
    """`check_qrels`'s problems, and for qrels without any their summary instead of their frame.

    Memory is bounded as in `runs.trec.summarize_run`: a clean file is split a block at a time keeping
    the topics seen and the current topic's docids; any other file goes through `check_qrels`'s
    line-by-line check. `irds:<dataset-id>` qrels are read whole, as `check_qrels` reads them.
    """
    if is_irds(path):
        frame, problems = _irds_qrels(str(path))
        if frame is None:
            return None, problems
        return QrelsSummary(frame["query_id"].nunique(), len(frame), int((frame["relevance"] > 0).sum())), problems
    try:
        opened = open_trec(path)
        with opened.source:
            summary = _clean_qrels_summary(opened.source)
        if summary is not None:
            return summary, []
        return _checked_qrels(opened.lines, str(path))
    except InputError as e:
        return None, e.problems


def _clean_qrels_summary(source: BinaryIO) -> QrelsSummary | None:
    """The summary of clean qrels (what `_clean_qrels` reads), split a block at a time; None for any other file."""
    topics = Topics()
    judgments = relevant = 0
    for block in line_blocks(source):
        cols = split_fields(block, 4, ids=(0, 1, 2), ints=(3,), comments=True)
        if cols is None or not topics.add(cast(Ids, cols[0]), cast(Ids, cols[2])):
            return None
        grades = cast(np.ndarray, cols[3])
        judgments += len(grades)
        relevant += int((grades > 0).sum())
    if not judgments:
        return None
    return QrelsSummary(len(topics.seen), judgments, relevant)


def validate_qrels(path: PathLike) -> list[Problem]:
    """Every problem in a qrels file, in line order (at most errors.KEPT, then how many more); an empty list
    means the file is clean."""
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
    # ids are object dtype (Python str), as the other paths give them, decoded from the bytes (Ids.objects)
    frame = pd.DataFrame({name: pd.Series(ids.objects(), dtype=object)
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


def _clean_qrels(source: BinaryIO, path: str) -> pd.DataFrame | None:
    """`_columns_qrels` of an open file, a block at a time, ids as pandas' string dtype: the qrels of a clean file, else None."""
    cols = split_fields(source, 4, ids=(0, 1, 2), ints=(3,), comments=True)
    if cols is None:
        return None
    if has_repeats(cast(Ids, cols[0]), cast(Ids, cols[2])):
        return None
    frame = pd.DataFrame({"query_id": cast(Ids, cols.pop(0)).to_pandas()})  # each column's words freed once converted
    frame["iteration"] = cast(Ids, cols.pop(1)).to_pandas()
    frame["doc_id"] = cast(Ids, cols.pop(2)).to_pandas()
    frame["relevance"] = cols.pop(3)
    frame.attrs["path"] = path
    return frame


def _qrels_problems(lines: Callable[[], Iterator[Fields | Problem]], path: str) -> list[Problem]:
    """`_scan_qrels`'s problems, in its order and words, with memory bounded by the problems kept."""
    return _checked_qrels(lines, path)[1]


def _checked_qrels(lines: Callable[[], Iterator[Fields | Problem]],
                   path: str) -> tuple[QrelsSummary | None, list[Problem]]:
    """`_qrels_problems`, and the qrels' summary when there are none."""
    return check_grouped_first(lambda grouped: _streamed_qrels_problems(lines(), path, grouped=grouped))


def _streamed_qrels_problems(lines: Iterator[Fields | Problem], path: str, *,
                             grouped: bool) -> tuple[QrelsSummary | None, list[Problem]]:
    """With `grouped`, only the current topic's docids are kept (`PairLines`)."""
    found = ProblemList(path)
    pairs = PairLines(grouped)
    count = relevant = 0
    for item in lines:
        if isinstance(item, Problem):
            found.add(item.line, item.message)
            continue
        line, fields = item
        count += 1
        if len(fields) != 4:
            n = len(fields)
            found.add(line, f"{n} field{'s' * (n != 1)}, expected 4: {QRELS_FORMAT}")
            continue
        qid, _, docid, text = fields
        why = _grade_problem(text)
        if why:
            found.add(line, why)
        else:
            relevant += int(text) > 0
        first = pairs.first(qid, docid, line)
        if first != line:
            found.add(line, f"docid {quoted(docid)} judged twice for topic {quoted(qid)} (first on line {first})")
    if not count and not found:
        found.add(0, f"empty file: no qrels lines ({QRELS_FORMAT})")
    problems = found.listed()
    return (None if problems else QrelsSummary(len(pairs.seen), count, relevant)), problems


def _grade_problem(text: str) -> str:
    """What is wrong with a grade field, or ""."""
    if not _INTEGER.fullmatch(text):
        return f"grade {quoted(text)} is not an integer"
    if not _INT64[0] <= int(text) <= _INT64[1]:
        return f"grade {quoted(text)} is out of range"
    return ""


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
        why = _grade_problem(text)
        if why:
            problems.append(Problem(path, line, why))
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
