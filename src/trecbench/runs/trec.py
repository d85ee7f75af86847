"""Read and validate TREC run files (`qid Q0 docid rank score tag`): vectorised fast path, exact line checks."""
from __future__ import annotations

import io
import math
import re
from typing import IO, Any, BinaryIO, Callable, Iterator, NamedTuple, cast

import numpy as np
import pandas as pd

from trecbench.files.columns import Ids, Topics, has_repeats, last_line, line_blocks, split_fields
from trecbench.files.trec import (
    open_trec,
    PairLines,
    check_grouped_first,
    Fields,
    PathLike,
    fast_table,
    has_duplicate_pairs,
    numbered_fields,
    object_column,
    quoted,
    read_bytes,
    strict_floats,
    file_shape,
)
from trecbench.files.shapes import is_stream, stream_bytes
from trecbench.errors import InputError, Problem, ProblemList

RUN_FORMAT = "qid Q0 docid rank score tag"
_EMPTY_LINE = re.compile(rb"(?m)^\r?\n")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def read_run(path: PathLike | IO[Any], *, strict: bool = False) -> pd.DataFrame:
    """A run as columns `query_id`, `doc_id` (str), `score` (float64) in file order.

    `path`: a file's path, `-` (standard input), or a stream (a binary or text file object, read to its
    end; its problems are reported under its `name`, else `<stream>`).
    `df.attrs["runid"]` is the tag of the last line (the one trec_eval prints), `df.attrs["path"]` the
    path. The rank and Q0 columns are ignored. Lines whose first non-blank character is `#` are comments
    (trec_eval 10 skips them). Fields after the sixth are tolerated, as trec_eval does, unless `strict`.
    Raises InputError listing every problem, each as `path:line: what is wrong`; when every line is a
    qrels line, the error's `looks_like` is "qrels" (files given in the wrong order).
    """
    if is_stream(path):
        data, where = stream_bytes(path)
    else:
        data, where = read_bytes(cast(PathLike, path)), str(path)
    return _run_of(data, where, strict=strict)


def _run_of(data: bytes, path: str, *, strict: bool) -> pd.DataFrame:
    frame = _fast_run(data, path, all_columns=strict)
    if frame is not None:
        return frame
    frame, found = _scan_run(data, path)
    problems = [p for p, blocks in found if blocks or strict]
    if problems:
        raise InputError.of(problems, looks_like="qrels" if file_shape(data, path) == "qrels" else "")
    assert frame is not None
    return frame


def check_run(path: PathLike) -> tuple[pd.DataFrame | None, list[Problem]]:
    """Validate and read: the run (None if there is any problem) and every problem, extra fields included.

    Streams, so memory does not grow with the file: a clean file (one space or tab between six fields)
    is split into columns a block at a time, its ids kept as Arrow strings; any other file is checked
    line by line keeping only the current topic's docids (every docid when a topic's lines are not
    together) and the first errors.KEPT problems, the rest counted in a last `N more problems not
    listed`. A file with no problem that is not clean is then read as `read_run(path, strict=True)`.
    Standard input, gzip and a file with a byte order mark are read whole first (their text is kept).
    """
    name = str(path)
    try:
        opened = open_trec(path)
        with opened.source:
            frame = _clean_run(opened.source, name)
        if frame is not None:
            return frame, []
        problems = _run_problems(opened.lines, name)
        if problems:
            return None, problems
        return _run_of(read_bytes(path) if opened.data is None else opened.data, name, strict=True), []
    except InputError as e:
        return None, e.problems


class RunSummary(NamedTuple):
    """What `runs validate` says of a good run: its distinct topics, its run lines and the last line's tag."""

    topics: int
    lines: int
    runid: str


def summarize_run(path: PathLike) -> tuple[RunSummary | None, list[Problem]]:
    """`check_run`'s problems, and for a run without any its summary instead of its frame.

    Memory is bounded by the problems kept and the topics, not by the file: a clean file is split a
    block at a time and each block's columns are dropped once counted, keeping the topics seen and the
    current topic's docids (`Topics`); any other file goes through the same line-by-line check as
    `check_run`. Standard input, gzip and a file with a byte order mark are read whole first.
    """
    try:
        opened = open_trec(path)
        with opened.source:
            summary = _clean_run_summary(opened.source)
        if summary is not None:
            return summary, []
        return _checked_run(opened.lines, str(path))
    except InputError as e:
        return None, e.problems


def _clean_run_summary(source: BinaryIO) -> RunSummary | None:
    """The summary of a clean run (what `_clean_run` reads), split a block at a time; None for any other file."""
    end = source.seek(0, 2)
    if end:
        source.seek(end - 1)
        if source.read(1) == b"\r":  # a last line ending in a lone carriage return: the exact reader decides
            return None
    source.seek(0)
    topics = Topics()
    lines = 0
    for block in line_blocks(source):
        cols = split_fields(block, 6, ids=(0, 2), floats=(4,), comments=True)
        if cols is None or not topics.add(cast(Ids, cols[0]), cast(Ids, cols[2])):
            return None
        lines += len(cast(Ids, cols[0]))
    if not lines:
        return None
    return RunSummary(len(topics.seen), lines, last_line(source).split()[5].decode("utf-8"))


def validate_run(path: PathLike) -> list[Problem]:
    """Every problem in a run file, in line order (at most errors.KEPT, then how many more); an empty list
    means the file is a clean run."""
    return check_run(path)[1]


def _fast_run(data: bytes, path: str, *, all_columns: bool) -> pd.DataFrame | None:
    """The run if pandas reads it and every vectorised check passes, else None (the slow path decides).

    With `all_columns` every field is read, so a line with extra fields is caught (it makes pandas fail
    or widens the table); otherwise only the four fields needed, which is faster.
    """
    if not all_columns:
        frame = _columns_run(data, path)
        if frame is not None:
            return frame
    if all_columns:
        table = fast_table(data, comments=True)
        if table is None or table.shape[1] != 6:
            return None
        scores = strict_floats(table[4])
    else:
        table = fast_table(data, usecols=[0, 2, 4, 5], floats=(4,), comments=True)
        scores = None if table is None else table[4].to_numpy(dtype=np.float64)
    if table is None or scores is None or not np.isfinite(scores).all():
        return None
    if (table[5].to_numpy() == "").any():  # a short line: pandas pads it with empty fields
        return None
    if has_duplicate_pairs(table[0], table[2]):
        return None
    frame = pd.DataFrame({"query_id": table[0], "doc_id": table[2], "score": scores})
    return _finish(frame, runid=table[5].iat[-1], path=path)


def _columns_run(data: bytes, path: str) -> pd.DataFrame | None:
    """files.columns' split of a clean run (one space or one tab between six fields); None for any other file.

    Ids come as pandas' string dtype (`Ids.to_pandas`), decoded from the bytes in C, a topic's id once.
    Empty lines after the first line are dropped; a file that starts with an empty line or ends in a
    lone carriage return is left to the other paths. So this path gives the same frame as the reader
    it replaced (pyarrow's CSV reader) for every file that reader read right; the files it read wrong
    (an empty field after the first line, a space inside a tab-separated field) now go to the exact
    reader and get its result.
    """
    if data.endswith(b"\r"):
        return None
    cols = split_fields(data, 6, ids=(0, 2), floats=(4,), comments=True)
    # only a file the split refuses is searched for empty lines (the two searches cost about 1.7 ms per MB)
    if cols is None and not data.startswith((b"\n", b"\r\n")) and (b"\n\n" in data or b"\n\r\n" in data):
        data = _EMPTY_LINE.sub(b"", data)
        cols = split_fields(data, 6, ids=(0, 2), floats=(4,), comments=True)
    if cols is None:
        return None
    qids, docids = cast(Ids, cols[0]), cast(Ids, cols[2])
    if has_repeats(qids, docids):
        return None
    frame = pd.DataFrame({"query_id": qids.to_pandas(), "doc_id": docids.to_pandas(), "score": cols[4]})
    return _finish(frame, runid=last_line(io.BytesIO(data)).split()[5].decode("utf-8"), path=path)


def _run_problems(lines: Callable[[], Iterator[Fields | Problem]], path: str) -> list[Problem]:
    """`_scan_run`'s problems, in its order and words, with memory bounded by the problems kept."""
    return _checked_run(lines, path)[1]


def _checked_run(lines: Callable[[], Iterator[Fields | Problem]],
                 path: str) -> tuple[RunSummary | None, list[Problem]]:
    """`_run_problems`, and the run's summary when there are none."""
    return check_grouped_first(lambda grouped: _streamed_run_problems(lines(), path, grouped=grouped))


def _streamed_run_problems(lines: Iterator[Fields | Problem], path: str, *,
                           grouped: bool) -> tuple[RunSummary | None, list[Problem]]:
    """With `grouped`, only the current topic's docids are kept (`PairLines`)."""
    found = ProblemList(path)
    pairs = PairLines(grouped)
    runs = 0
    runid = ""
    for item in lines:
        if isinstance(item, Problem):
            found.add(item.line, item.message)
            continue
        line, fields = item
        n = len(fields)
        if n < 6:
            found.add(line, f"{n} field{'s' * (n != 1)}, expected 6: {RUN_FORMAT}")
            continue
        runs += 1
        if n > 6:
            found.add(line, f"{n} fields, expected 6: {RUN_FORMAT} (extra: {quoted(' '.join(fields[6:]))})")
        qid, docid, text, runid = fields[0], fields[2], fields[4], fields[5]
        _, why = _parse_score(text)
        if why:
            found.add(line, f"score {quoted(text)} {why}")
        first = pairs.first(qid, docid, line)
        if first != line:
            found.add(line, f"docid {quoted(docid)} appears twice in topic {quoted(qid)} (first on line {first})")
    if not runs and not found:
        found.add(0, f"empty file: no run lines ({RUN_FORMAT})")
    problems = found.listed()
    return (None if problems else RunSummary(len(pairs.seen), runs, runid)), problems


def _clean_run(source: BinaryIO, path: str) -> pd.DataFrame | None:
    """`_columns_run` of an open file, a block at a time: the run of a clean file, else None."""
    end = source.seek(0, 2)
    if end:
        source.seek(end - 1)
        if source.read(1) == b"\r":  # a last line ending in a lone carriage return: the exact reader decides
            return None
    source.seek(0)
    cols = split_fields(source, 6, ids=(0, 2), floats=(4,), comments=True)
    if cols is None:
        return None
    if has_repeats(cast(Ids, cols[0]), cast(Ids, cols[2])):
        return None
    frame = pd.DataFrame({"query_id": cast(Ids, cols.pop(0)).to_pandas()})  # each column's words freed once converted
    frame["doc_id"] = cast(Ids, cols.pop(2)).to_pandas()
    frame["score"] = cols.pop(4)
    return _finish(frame, runid=last_line(source).split()[5].decode("utf-8"), path=path)


def _scan_run(data: bytes, path: str) -> tuple[pd.DataFrame | None, list[tuple[Problem, bool]]]:
    """Line by line: the run (None if anything blocks reading) and every (problem, blocks reading) in file order.

    Extra fields are the one problem that does not block reading.
    """
    qids: list[str] = []
    docids: list[str] = []
    scores: list[float] = []
    found: list[tuple[Problem, bool]] = []  # (problem, blocks reading), in the order found
    first_line: dict[tuple[str, str], int] = {}
    runid = None
    for item in numbered_fields(data, path, comments=True):
        if isinstance(item, Problem):
            found.append((item, True))
            continue
        line, fields = item
        n = len(fields)
        if n < 6:
            found.append((Problem(path, line, f"{n} field{'s' * (n != 1)}, expected 6: {RUN_FORMAT}"), True))
            continue
        if n > 6:
            extra = quoted(" ".join(fields[6:]))
            found.append((Problem(path, line, f"{n} fields, expected 6: {RUN_FORMAT} (extra: {extra})"), False))
        qid, docid, text = fields[0], fields[2], fields[4]
        runid = fields[5]
        score, why = _parse_score(text)
        if why:
            found.append((Problem(path, line, f"score {quoted(text)} {why}"), True))
        first = first_line.setdefault((qid, docid), line)
        if first != line:
            message = f"docid {quoted(docid)} appears twice in topic {quoted(qid)} (first on line {first})"
            found.append((Problem(path, line, message), True))
        qids.append(qid)
        docids.append(docid)
        scores.append(score)
    if not qids and not found:
        found.append((Problem(path, 0, f"empty file: no run lines ({RUN_FORMAT})"), True))
    if any(blocks for _, blocks in found):
        return None, found
    frame = pd.DataFrame(
        {"query_id": object_column(qids), "doc_id": object_column(docids), "score": np.array(scores, dtype=np.float64)}
    )
    return _finish(frame, runid=runid, path=path), found


def _parse_score(text: str) -> tuple[float, str]:
    """(value, "") for a finite decimal number, else (nan, why not)."""
    if _NUMBER.fullmatch(text):
        value = float(text)
        return (value, "") if math.isfinite(value) else (math.nan, "is not a finite number")
    if text.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        return math.nan, "is not a finite number"
    return math.nan, "is not a number"


def _finish(frame: pd.DataFrame, *, runid: str | None, path: str) -> pd.DataFrame:
    frame.attrs["runid"] = runid
    frame.attrs["path"] = path
    return frame
