"""Plumbing shared by the TREC run and qrels readers: a fast pandas table, or numbered fields for exact checks."""
from __future__ import annotations

import csv
import gzip
import io
import os
import re
import sys
import zlib
from typing import BinaryIO, Callable, Iterable, Iterator, NamedTuple, TypeVar, Union

import numpy as np
import pandas as pd

from trecbench.errors import InputError, Problem

PathLike = Union[str, "os.PathLike[str]"]
Fields = tuple[int, list[str]]

_BOM = b"\xef\xbb\xbf"
_COMMENT_LINE = re.compile(rb"(?m)^[ \t]*#[^\n]*")
# Characters a number may be written with; float()/int() accept more ("1_0", Arabic digits, "nan").
_FLOAT_CHARS = re.compile(r"[^0-9.eE+\-]")
_INT_CHARS = re.compile(r"[^0-9+\-]")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_ASCII_WHITESPACE = re.compile(r"[ \t\n\r\x0b\x0c]")  # what bytes.split() and trec_eval split fields on
# pandas 3 parses floats exactly by default (and deprecates the option); pandas 2 needs "round_trip".
_PRECISE = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}


_GZIP = b"\x1f\x8b"
# magic numbers of compressed and binary formats that are never text
_BINARY = {b"PK\x03\x04": "a zip archive", b"BZh": "bzip2-compressed", b"\xfd7zXZ\x00": "xz-compressed",
           b"\x28\xb5\x2f\xfd": "zstd-compressed", b"PAR1": "a Parquet file", b"\x93NUMPY": "a NumPy array"}
STDIN = "-"
_BLOCK = 1 << 20  # bytes checked at a time: a file that is not text is refused after one block


def read_bytes(path: PathLike) -> bytes:
    """The file's bytes without a leading UTF-8 byte order mark; gzip is decompressed, `-` is standard input.

    InputError `cannot read` if it cannot be opened, one `binary file` problem if it is not text. The
    file is read a block at a time and the first block that is not text ends the read, so a gzip bomb
    (a little text, then gigabytes of NUL bytes) costs one block of memory, not what it inflates to.
    """
    name = str(path)
    try:
        data = b"".join(text_blocks(path, whole=True))
    except (OSError, EOFError, zlib.error) as e:
        raise _cannot_read(name, e) from None
    return data[len(_BOM):] if data.startswith(_BOM) else data


def _cannot_read(name: str, e: Exception) -> InputError:
    return InputError(name, 0, f"cannot read: {getattr(e, 'strerror', None) or e}")


def text_blocks(path: PathLike, *, whole: bool = False) -> Iterator[bytes]:
    """The file's bytes (decompressed if gzip, `-` is standard input) as blocks, each checked to be text.

    Blocks are about _BLOCK bytes; with `whole`, a plain file that starts as text comes as one block
    (what `read_bytes` keeps anyway: joining one block copies nothing).
    InputError `binary file (...)` at the first block that holds a NUL byte (or, first, a binary format's
    magic number). OSError, EOFError or zlib.error when the file cannot be read or decompressed.
    """
    name = str(path)
    first = True
    for block in _raw_blocks(path, whole):
        if first:
            first = False
            what = _binary_format(block)
            if what:
                raise InputError(name, 0, f"binary file ({what}), not text")
        if b"\x00" in block:
            raise InputError(name, 0, "binary file (NUL bytes), not text")
        yield block


def _binary_format(head: bytes) -> str:
    """What a file starting with `head` is if its magic number says it is not text, else ""."""
    return next((what for magic, what in _BINARY.items() if head.startswith(magic)), "")


def _raw_blocks(path: PathLike, whole: bool) -> Iterator[bytes]:
    """The bytes as blocks of _BLOCK (the last shorter); with `whole`, a plain file that starts as text
    comes as one block."""
    if str(path) == STDIN:
        source = sys.stdin.buffer
        head = source.read(len(_GZIP))
        if head == _GZIP:  # the compressed bytes are kept (they are what was sent); what they inflate to is not
            yield from _blocks_of(gzip.GzipFile(fileobj=io.BytesIO(head + source.read())))
            return
        yield head + source.read(_BLOCK)
        yield from _blocks_of(source)
        return
    with open(path, "rb") as f:
        head = f.read(_BLOCK)
        if head.startswith(_GZIP):
            f.seek(0)
            with gzip.GzipFile(fileobj=f) as inflated:
                yield from _blocks_of(inflated)
            return
        if not whole or len(head) < _BLOCK or b"\x00" in head or _binary_format(head):
            yield head  # all of it, or a first block text_blocks refuses, or the first of many
            if whole or len(head) < _BLOCK:
                return
            yield from _blocks_of(f)
            return
        f.seek(0)
        yield f.read()


def _blocks_of(source: BinaryIO | io.BufferedIOBase) -> Iterator[bytes]:
    while block := source.read(_BLOCK):
        yield block


def has_comment_lines(data: bytes) -> bool:
    """Whether some line's first non-blank character is `#` (a comment in qrels and runs)."""
    return _COMMENT_LINE.search(data) is not None


def fast_table(
    data: bytes, *, usecols: list[int] | None = None, floats: tuple[int, ...] = (), comments: bool = False
) -> pd.DataFrame | None:
    """The fields as str (object dtype) via pandas' C parser, or None when only the line-by-line path can tell.

    Columns in `floats` (only with `usecols`) come back as float64, parsed as exactly as C's strtod.
    None means: the bytes are not plain UTF-8 text that the C parser splits exactly like `bytes.split()`
    (NUL, vertical tab, form feed, a lone carriage return), or pandas could not parse it at all
    (no data lines, a line longer than the first one, a float column that is not all numbers, ...).
    """
    if b"\x00" in data or b"\x0b" in data or b"\x0c" in data:
        return None
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if comments and b"#" in data and has_comment_lines(data):
        data = _COMMENT_LINE.sub(b"", data)  # a comment becomes a blank line, which pandas skips
    dtype = {c: ("float64" if c in floats else object) for c in usecols} if floats and usecols else object
    table = _read_csv(data, usecols, dtype)
    if table is None:
        return None
    for c in floats:
        # Where pandas cannot parse a float column it infers a type and casts: "True"/"False" -> 1.0/0.0.
        # Only then can a 0 or 1 appear from a non-number, so such files get their text checked.
        if np.isin(table[c].to_numpy(), (0.0, 1.0)).any() and _mentions_booleans(data):
            text = _read_csv(data, [c], object)
            exact = None if text is None else strict_floats(text[c])
            if exact is None:
                return None
            table[c] = exact
    return table


def _mentions_booleans(data: bytes) -> bool:
    lowered = data.lower()  # pandas matches "true"/"false" in any case
    return b"true" in lowered or b"false" in lowered


def _read_csv(data: bytes, usecols: list[int] | None, dtype: object) -> pd.DataFrame | None:
    try:
        table = pd.read_csv(
            io.BytesIO(data),
            sep=r"\s+",
            header=None,
            usecols=usecols,
            dtype=dtype,  # ids stay str ("007" is not 7)
            engine="c",
            quoting=csv.QUOTE_NONE,  # docids may contain '"'
            na_filter=False,  # "NA", "null", "nan" are ids, not missing values
            skip_blank_lines=True,
            encoding="utf-8",
            **_PRECISE,
        )
    except Exception:  # any parser complaint sends the file to the exact line-by-line checks
        return None
    # pandas can quietly return other columns than asked for when the first line is short.
    return table if usecols is None or list(table.columns) == usecols else None


def strict_floats(values: pd.Series) -> np.ndarray | None:
    """Decimal strings -> finite float64 (correctly rounded, like C's strtod), or None if any is not one."""
    raw = values.to_numpy(dtype=object)
    if _FLOAT_CHARS.search("".join(raw)):
        return None
    try:
        out = raw.astype(np.float64)
    except (ValueError, TypeError, OverflowError):
        return None
    return out if np.isfinite(out).all() else None


def strict_ints(values: pd.Series) -> np.ndarray | None:
    """Integer strings -> int64, or None if any is not one or does not fit."""
    raw = values.to_numpy(dtype=object)
    if _INT_CHARS.search("".join(raw)):
        return None
    try:
        return raw.astype(np.int64)
    except (ValueError, TypeError, OverflowError):
        return None


def has_duplicate_pairs(first: pd.Series, second: pd.Series) -> bool:
    """Whether some (first, second) pair occurs twice, e.g. a docid twice within a topic."""
    codes, uniques = pd.factorize(second.to_numpy(dtype=object))
    if len(uniques) == len(codes):
        return False
    groups = pd.factorize(first.to_numpy(dtype=object))[0].astype(np.int64)
    return bool(pd.Series(groups * len(uniques) + codes).duplicated().any())


def numbered_fields(data: bytes, path: str, *, comments: bool = False) -> Iterator[Fields | Problem]:
    """(line number, fields) for every non-blank line, or a Problem for a line that is not UTF-8.

    Fields are split on ASCII whitespace, as trec_eval does; with `comments`, a line whose first
    non-blank character is `#` is skipped.
    """
    return _fields_of_lines(enumerate(data.split(b"\n"), 1), path, comments)


def streamed_fields(path: PathLike, *, comments: bool = False) -> Iterator[Fields | Problem]:
    """`numbered_fields` of the file `read_bytes` would read, read a block at a time (memory: one block).

    InputError as `read_bytes` raises it (cannot read, binary file), when the block that shows it is read.
    """
    name = str(path)
    try:
        yield from _fields_of_lines(_numbered_lines(text_blocks(path)), name, comments)
    except (OSError, EOFError, zlib.error) as e:
        raise _cannot_read(name, e) from None


def _numbered_lines(blocks: Iterator[bytes]) -> Iterator[tuple[int, bytes]]:
    """(number, line without its newline) of the bytes the blocks make up, split on `\\n` as bytes.split does;
    a leading byte order mark is dropped."""
    number = 0
    partial = b""
    for block in blocks:
        pieces = block.split(b"\n")
        pieces[0] = partial + pieces[0]
        partial = pieces.pop()
        for raw in pieces:
            number += 1
            yield number, _without_bom(raw) if number == 1 else raw
    yield number + 1, _without_bom(partial) if number == 0 else partial


def _without_bom(first_line: bytes) -> bytes:
    """The first line without a leading byte order mark (the text starts with one exactly when its first line does)."""
    return first_line[len(_BOM):] if first_line.startswith(_BOM) else first_line


def _fields_of_lines(lines: Iterable[tuple[int, bytes]], path: str, comments: bool) -> Iterator[Fields | Problem]:
    for number, raw in lines:
        fields = raw.split()
        if not fields or (comments and fields[0].startswith(b"#")):
            continue
        try:
            yield number, [f.decode("utf-8") for f in fields]
        except UnicodeDecodeError:
            yield Problem(path, number, _utf8_message(raw))


def file_shape(data: bytes, path: str) -> str:
    """The shape (`trec_shape`) every non-blank, non-comment line of the text has, or "" if they differ:
    a run given where qrels belong (or the reverse) has the other format's shape on every line."""
    shapes = {trec_shape(item[1]) if not isinstance(item, Problem) else "" for item in
              numbered_fields(data, path, comments=True)}
    return shapes.pop() if len(shapes) == 1 else ""


def trec_shape(fields: list[str]) -> str:
    """The TREC format a line's fields have: "run" (`qid Q0 docid rank score tag`, rank an integer, score a
    number), "qrels" (`qid iteration docid grade`, grade an integer), or "" for neither."""
    if len(fields) == 6 and _INTEGER.fullmatch(fields[3]) and _DECIMAL.fullmatch(fields[4]):
        return "run"
    if len(fields) == 4 and _INTEGER.fullmatch(fields[3]):
        return "qrels"
    return ""


def _utf8_message(raw: bytes) -> str:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"invalid UTF-8: byte 0x{raw[e.start]:02x} at column {e.start + 1}"
    return "invalid UTF-8"


def ids_are_clean(values: object) -> bool:
    """Whether every value is a non-empty str without ASCII whitespace (one field of a TREC line)."""
    ids = pd.Series(values).to_numpy(dtype=object)
    if not all(isinstance(i, str) for i in ids):
        return False
    return not (ids == "").any() and not _ASCII_WHITESPACE.search("".join(ids))


def check_ids(values: object, column: str) -> None:
    """ValueError unless every value is a non-empty str without ASCII whitespace (so it reads back as one field)."""
    ids = pd.Series(values).to_numpy(dtype=object)
    if not all(isinstance(i, str) for i in ids):
        raise ValueError(f"{column} values must be str")
    if not ids_are_clean(ids):
        raise ValueError(f"{column} values must be non-empty and contain no whitespace")
    if column == "query_id" and any(i.startswith("#") for i in ids):
        raise ValueError("query_id values must not start with '#' (the line would read back as a comment)")


def object_column(values: list[str]) -> pd.Series:
    """A list of str as an object-dtype Series (pandas 3 would otherwise infer its own str dtype)."""
    return pd.Series(values, dtype=object)


def quoted(text: str, limit: int = 60) -> str:
    """repr() of a field for a message, shortened if long."""
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


T = TypeVar("T")


class Opened(NamedTuple):
    """A TREC file opened for the validators: `source` read a block at a time, and `lines()` its numbered
    fields line by line (as often as asked), either streamed from the file or, for standard input, gzip and
    a byte order mark, from its text read whole (`data`)."""

    source: BinaryIO
    data: bytes | None
    lines: Callable[[], Iterator[Fields | Problem]]


def open_trec(path: PathLike) -> Opened:
    """`path` opened as the run and qrels validators read it (`Opened`): a plain file is streamed."""
    from trecbench.files.columns import open_plain

    source = open_plain(path)
    if source is not None:
        return Opened(source, None, lambda: streamed_fields(path, comments=True))
    data = read_bytes(path)
    return Opened(io.BytesIO(data), data, lambda: numbered_fields(data, str(path), comments=True))


class TopicReturns(Exception):
    """A topic's lines are not all together: a docid's first line must then be looked up in the whole file."""


class PairLines:
    """The line-by-line readers' rule for a docid twice in a topic, in memory bounded by the topics: while a
    topic's lines are together (`grouped`) only its own docids' first lines are kept, and an earlier topic
    coming back raises TopicReturns (`check_grouped_first` then checks again keeping every pair)."""

    def __init__(self, grouped: bool):
        self.grouped = grouped
        self.seen: set[str] = set()
        self.topic: str | None = None
        self.first_line: dict[object, int] = {}

    def first(self, qid: str, docid: str, line: int) -> int:
        """The line the pair (qid, docid) was first on: `line` itself when it is new."""
        if self.grouped and qid != self.topic:
            if qid in self.seen:
                raise TopicReturns
            self.topic = qid
            self.first_line.clear()
        self.seen.add(qid)
        return self.first_line.setdefault(docid if self.grouped else (qid, docid), line)


def check_grouped_first(check: Callable[[bool], T]) -> T:
    """`check(grouped=True)`, or `check(grouped=False)` when a topic's lines turn out not to be together."""
    try:
        return check(True)
    except TopicReturns:
        return check(False)
