"""Line-level reading shared by every file reader (topics, corpora, nuggets, answers, evidence, contexts,
assignments): gzip, byte offsets, UTF-8 problems, JSONL lines and ids, telling JSONL from TSV.

Files are read a block at a time and a block holding a NUL byte ends the read with one problem (a
binary file, not text), so a gzip bomb (a little text, then gigabytes of NUL bytes, which have no
newline) is refused after one block instead of being inflated into one enormous line."""
from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import Any, BinaryIO, Iterator, NamedTuple

from trecbench.errors import InputError

JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")
_BLOCK = 1 << 20  # bytes read (and checked for NUL) at a time


class Line(NamedTuple):
    """One line of a file: 1-based number, byte offset of its start, text without the line ending.

    `text` is None when the line is not valid UTF-8; `error` then says why.
    """

    number: int
    offset: int
    text: str | None
    error: str = ""


def open_bytes(path: Path) -> BinaryIO:
    """Open a file for binary reading, decompressing `.gz` transparently."""
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def decode(raw: bytes, number: int) -> tuple[str | None, str]:
    """Decode one raw line (ending stripped, UTF-8 BOM dropped on line 1) into (text, error)."""
    raw = raw.rstrip(b"\r\n")
    if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return raw.decode("utf-8"), ""
    except UnicodeDecodeError as e:
        return None, f"invalid UTF-8 at byte {e.start + 1} of the line"


def raw_lines(f: BinaryIO, path: "Path | str") -> Iterator[bytes]:
    """The lines of an open binary file, each with its `\\n` (the last one may lack it), as iterating the
    file gives them; InputError `binary file (NUL bytes), not text` at the first block holding a NUL."""
    partial: list[bytes] = []  # the start of a line longer than a block
    while block := f.read(_BLOCK):
        if b"\x00" in block:
            raise InputError(str(path), 0, "binary file (NUL bytes), not text")
        end = block.rfind(b"\n") + 1
        if not end:
            partial.append(block)
            continue
        whole = b"".join([*partial, block[:end]]) if partial else block[:end]
        partial = [block[end:]] if end < len(block) else []
        yield from io.BytesIO(whole)  # complete lines, split by the C line reader
    if partial:
        yield b"".join(partial)


def iter_lines(path: Path) -> Iterator[Line]:
    """Yield every line of `path` with its byte offset (in the decompressed stream for `.gz`).

    InputError `binary file (NUL bytes), not text` (line 0) as soon as a NUL byte is read.
    """
    offset = 0
    with open_bytes(path) as f:
        for number, raw in enumerate(raw_lines(f, path), start=1):
            text, error = decode(raw, number)
            yield Line(number, offset, text, error)
            offset += len(raw)


def content_lines(path: Path) -> Iterator[Line]:
    """`iter_lines` without the blank lines (a line that cannot be decoded is kept: its `error` says why)."""
    return (line for line in iter_lines(path) if line.text is None or line.text.strip())


def read_line_at(path: Path, offset: int) -> str:
    """Return the decoded line that starts at byte `offset` of `path`."""
    with open_bytes(path) as f:
        f.seek(offset)
        raw = f.readline()
    text, _ = decode(raw, 0)
    return text or ""


def json_id(value: object) -> str | None:
    """An id read from a JSON record: a non-empty string or an integer (not a boolean), stripped; else None."""
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        return None
    return str(value).strip()


def record_id(record: dict, keys: tuple[str, ...]) -> tuple[str | None, str | None, str]:
    """(the field used, the id, "") from the first of `keys` a JSON record has, or (field, None, why)."""
    key = next((k for k in keys if k in record), None)
    if key is None:
        return None, None, f"missing id field (one of {', '.join(keys)})"
    value = json_id(record[key])
    if value is None:
        return key, None, f"field {key!r} must be a non-empty string or integer"
    return key, value, ""


def looks_like_jsonl(path: Path) -> bool:
    """Tell JSONL from TSV: by extension (`.jsonl`/`.json`/`.ndjson`, `.tsv`), else by a leading `{`."""
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(JSONL_SUFFIXES):
        return True
    if name.endswith(".tsv"):
        return False
    with open_bytes(path) as f:
        for raw in raw_lines(f, path):
            stripped = raw.strip().removeprefix(b"\xef\xbb\xbf")
            if stripped:
                return stripped.startswith(b"{")
    return False


class JSONProblem(NamedTuple):
    """Why a text is not JSON: what json says (`why`), and where in the text (0 when not known)."""

    why: str
    line: int = 0
    column: int = 0

    @property
    def message(self) -> str:
        """`invalid JSON: why (column n)`, the column left out when not known."""
        return f"invalid JSON: {self.why}" + (f" (column {self.column})" if self.column else "")


def parse_json(text: str) -> tuple[Any, JSONProblem | None]:
    """(the JSON value, None), or (None, why not): every reader of JSON parses it here.

    Nesting deeper than Python's recursion limit (e.g. `{"x":` 200,000 times), which json's parser
    meets as a RecursionError, is invalid JSON too: `nested too deeply`.
    """
    import json

    try:
        return json.loads(text), None
    except json.JSONDecodeError as e:
        return None, JSONProblem(e.msg, e.lineno, e.colno)
    except RecursionError:
        return None, JSONProblem("nested too deeply")


def iter_json_objects(path: "Path | str") -> Iterator[tuple[int, "dict | None", str]]:
    """(line number, object, "") for each non-blank JSONL line, or (line number, None, what is wrong).

    A missing file gives one (0, None, "no such file").
    """
    path = Path(path)
    if not path.is_file():
        yield 0, None, "no such file"
        return
    for line in content_lines(path):
        if line.text is None:
            yield line.number, None, line.error
            continue
        record, problem = parse_json(line.text)
        if problem:
            yield line.number, None, problem.message
            continue
        if not isinstance(record, dict):
            yield line.number, None, "expected a JSON object"
            continue
        yield line.number, record, ""
