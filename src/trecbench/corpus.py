"""Documents looked up by id in a JSONL or TSV file (through a byte-offset index) or an ir_datasets docstore."""
from __future__ import annotations

import hashlib
import json
import os
import sys
from abc import ABC, abstractmethod
from array import array
from bisect import bisect_left
from pathlib import Path
from typing import Any, Iterable, Iterator, NamedTuple

import numpy as np

from trecbench.files.lines import content_lines, decode, looks_like_jsonl, parse_json, read_line_at, record_id
from trecbench.errors import InputError, Problem

ID_KEYS = ("id", "docid", "_id", "doc_id")
TEXT_KEYS = ("contents", "text", "segment", "body")
INDEX_FORMAT = "trecbench-offsets/2"
# Layouts of a corpus file: JSONL, TSV `docid<TAB>text`, TSV `docid<TAB>title<TAB>text`.
JSONL, TSV, TSV_TITLE = "jsonl", "tsv", "tsv+title"


class Document(NamedTuple):
    """One document (or passage/segment): its id, its text and, if the corpus has one, its title."""

    docid: str
    text: str
    title: str | None = None


class Corpus(ABC):
    """Documents by id: `get`, `text`, `in`, `len` and iteration in corpus order."""

    source: str

    @abstractmethod
    def get(self, docid: str) -> Document | None:
        """The document with this id, or None if the corpus has none."""

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def __iter__(self) -> Iterator[Document]: ...

    def __contains__(self, docid: object) -> bool:
        return isinstance(docid, str) and self.get(docid) is not None

    def __getitem__(self, docid: str) -> Document:
        doc = self.get(docid)
        if doc is None:
            raise KeyError(docid)
        return doc

    def lookup(self, docids: Iterable[str]) -> tuple[list[tuple[str, Document]], list[str]]:
        """[(docid, document)] for the ids the corpus has, in the given order, and the docids it does not have."""
        found, missing = [], []
        for docid in docids:
            doc = self.get(docid)
            if doc is None:
                missing.append(docid)
            else:
                found.append((docid, doc))
        return found, missing

    def text(self, docid: str) -> str | None:
        """The text of the document with this id (title not included), or None if there is none."""
        doc = self.get(docid)
        return None if doc is None else doc.text


def open_corpus(source: str | Path, *, cache_index: bool = True) -> Corpus:
    """Open a corpus: a JSONL or TSV file (optionally `.gz`), or `irds:<dataset-id>`.

    JSONL records take the id from `id`/`docid`/`_id`/`doc_id`, the text from `contents`/`text`/`segment`/
    `body` and an optional `title` (pyserini, BEIR and MS MARCO v2.1 segment files read as they are).
    TSV lines are `docid<TAB>text`, or `docid<TAB>title<TAB>text` when the first line has three columns;
    every line must then have the same number of columns. A file is scanned once to validate it and to
    index the byte offset of each document (offsets only, never text: see OffsetIndex, 16 bytes a
    document); the index is kept in `<file>.idx` when the directory is writable and `cache_index` is
    true, and reused while the file is unchanged, from the file (StoredIndex: two small reads a lookup).
    Raises InputError listing every problem (bad JSON, missing id or text, duplicate docids, bad UTF-8).
    """
    if isinstance(source, str) and source.startswith("irds:"):
        return IrdsCorpus(source)
    return FileCorpus(Path(source), cache_index=cache_index)


def id_hash(docid: str) -> int:
    """A document id's 64-bit key in the offset index (BLAKE2b of its UTF-8, 8 bytes, little-endian)."""
    return int.from_bytes(hashlib.blake2b(docid.encode("utf-8"), digest_size=8).digest(), "little")


class OffsetIndex:
    """Where each document of a corpus file starts: its id's hash and its byte offset, sorted by hash.

    Two arrays of unsigned 64-bit integers, 16 bytes a document (a Python dict of ids took ~190): `hashes`
    (sorted, see id_hash) and `offsets` in the same order. A lookup finds the hash by binary search and
    returns the offsets of the lines that carry it (almost always one); the caller reads the line and
    checks its id, so two ids with one hash are told apart. This one is held in memory (a corpus just
    scanned); StoredIndex reads the same arrays from the index file.
    """

    def __init__(self, hashes: np.ndarray, offsets: np.ndarray):
        self.hashes = hashes
        self.offsets = offsets

    @classmethod
    def build(cls, hashes: array, offsets: array) -> tuple["OffsetIndex", np.ndarray]:
        """The index of documents given in file order; also the permutation that sorted them."""
        h = np.frombuffer(hashes, dtype=np.uint64) if len(hashes) else np.zeros(0, np.uint64)
        order = np.argsort(h, kind="stable")
        o = np.frombuffer(offsets, dtype=np.uint64) if len(offsets) else np.zeros(0, np.uint64)
        return cls(h[order], o[order]), order

    def __len__(self) -> int:
        return len(self.hashes)

    def candidates(self, docid: str) -> list[int]:
        """Byte offsets of the lines whose id has the hash of `docid`."""
        hashes, key = self.hashes, np.uint64(id_hash(docid))
        i = int(hashes.searchsorted(key))
        found = []
        while i < len(hashes) and hashes[i] == key:
            found.append(int(self.offsets[i]))
            i += 1
        return found

    def shared_hashes(self) -> list[np.ndarray]:
        """Positions of runs of equal hashes (a duplicate id, or two ids with one hash)."""
        if len(self.hashes) < 2:
            return []
        same = np.flatnonzero(self.hashes[1:] == self.hashes[:-1])  # i: hashes i and i + 1 are equal
        if not len(same):
            return []
        runs = np.split(same, np.flatnonzero(np.diff(same) != 1) + 1)
        return [np.append(run, run[-1] + 1) for run in runs]


BLOCK = 512  # hashes a StoredIndex reads at once (4 KB)


class StoredIndex:
    """An OffsetIndex that stays in its file: in memory only every BLOCK-th hash (0.016 bytes a document).

    A lookup searches those, reads the one block of hashes that can hold the id's hash and the offsets of
    the matches, with os.pread: two small reads, and memory that does not grow with the corpus or with
    the lookups made.
    """

    def __init__(self, file: Any, start: int, count: int, block: int, fences: array):
        self._file, self._start, self._count, self._block, self._fences = file, start, count, block, fences

    def __len__(self) -> int:
        return self._count

    def _read(self, first: int, n: int, array_start: int) -> array:
        """`n` numbers of the array that starts at byte `array_start`, from its `first`."""
        return _numbers(os.pread(self._file.fileno(), 8 * n, array_start + 8 * first))

    def candidates(self, docid: str) -> list[int]:
        key = id_hash(docid)
        b = bisect_left(self._fences, key)  # fences before b are < key: its first match is after them
        first = max(0, (b - 1) * self._block)
        found: list[int] = []
        while first < self._count:
            n = min(self._block + 1, self._count - first)
            hashes = self._read(first, n, self._start)
            i = bisect_left(hashes, key)
            while i < n and hashes[i] == key:
                found.append(self._read(first + i, 1, self._start + 8 * self._count)[0])
                i += 1
            if i < n or first + n >= self._count:  # more of the same hash only past a block's end
                break
            first += n
        return found


def _numbers(raw: bytes) -> array:
    """Little-endian unsigned 64-bit integers as an array (Python's bisect searches it)."""
    numbers = array("Q")
    numbers.frombytes(raw)
    if sys.byteorder == "big":
        numbers.byteswap()
    return numbers


class FileCorpus(Corpus):
    """A JSONL or TSV corpus file; `index` (an OffsetIndex or StoredIndex) finds each docid's line."""

    def __init__(self, path: Path, *, cache_index: bool = True):
        if not path.is_file():
            raise InputError(str(path), 0, "no such file")
        self.path = path
        self.source = str(path)
        self._file: Any = None
        self.index: OffsetIndex | StoredIndex
        cached = _load_index(path) if cache_index else None
        if cached is None:
            self.layout, self.index = _scan(path)
            if cache_index:
                _save_index(path, self.layout, self.index)
        else:
            self.layout, self.index = cached

    def get(self, docid: str) -> Document | None:
        for offset in self.index.candidates(docid):
            doc, _ = _parse(self.layout, self._line_at(offset))
            if doc is not None and doc.docid == docid:
                return doc
        return None

    def _line_at(self, offset: int) -> str:
        """The line at `offset`: read with os.pread from a file kept open (no seek, so threads may share it)."""
        if self.path.name.lower().endswith(".gz") or not hasattr(os, "pread"):
            return read_line_at(self.path, offset)
        if self._file is None:
            self._file = open(self.path, "rb")
        raw, size = b"", 8192
        while True:
            chunk = os.pread(self._file.fileno(), size, offset + len(raw))
            end = chunk.find(b"\n")
            if end >= 0 or len(chunk) < size:
                raw += chunk if end < 0 else chunk[:end + 1]
                break
            raw, size = raw + chunk, size * 2
        text, _ = decode(raw, 0)
        return text or ""

    def __len__(self) -> int:
        return len(self.index)

    def __iter__(self) -> Iterator[Document]:
        for line in content_lines(self.path):
            if line.text:
                doc, _ = _parse(self.layout, line.text)
                if doc is not None:
                    yield doc


def _parse(layout: str, text: str) -> tuple[Document | None, str]:
    """Parse one non-blank line of a corpus file into (document, "") or (None, what is wrong)."""
    if layout != JSONL:
        cells = text.split("\t")
        expected = 2 if layout == TSV else 3
        if len(cells) != expected:
            what = "docid, text" if layout == TSV else "docid, title, text"
            return None, f"expected {expected} tab-separated columns ({what}), found {len(cells)}"
        docid = cells[0].strip()
        if not docid:
            return None, "empty docid"
        return Document(docid, cells[-1], cells[1] if layout == TSV_TITLE else None), ""
    record, problem = parse_json(text)
    if problem:
        return None, problem.message
    if not isinstance(record, dict):
        return None, "expected a JSON object"
    return _from_record(record)


def _from_record(record: dict[str, Any]) -> tuple[Document | None, str]:
    _, docid, why = record_id(record, ID_KEYS)
    if docid is None:
        return None, why
    text_key = next((k for k in TEXT_KEYS if k in record), None)
    if text_key is None:
        return None, f"missing text field (one of {', '.join(TEXT_KEYS)}) for docid {docid!r}"
    if not isinstance(record[text_key], str):
        return None, f"field {text_key!r} of docid {docid!r} must be a string"
    title = record.get("title")
    return Document(docid, record[text_key], title if isinstance(title, str) else None), ""


def _scan(path: Path) -> tuple[str, OffsetIndex]:
    """Validate the whole file in one pass; return its layout and the offset index of its documents."""
    where = str(path)
    layout = JSONL if looks_like_jsonl(path) else ""
    hashes, offsets, numbers = array("Q"), array("Q"), array("Q")
    problems: list[Problem] = []
    for line in content_lines(path):
        if line.text is None:
            problems.append(Problem(where, line.number, line.error))
            continue
        if not layout:  # the first TSV line fixes the number of columns
            layout = TSV_TITLE if line.text.count("\t") == 2 else TSV
        doc, error = _parse(layout, line.text)
        if doc is None:
            problems.append(Problem(where, line.number, error))
        else:
            hashes.append(id_hash(doc.docid))
            offsets.append(line.offset)
            numbers.append(line.number)
    index, order = OffsetIndex.build(hashes, offsets)
    lines = np.frombuffer(numbers, dtype=np.uint64)[order] if len(numbers) else np.zeros(0, np.uint64)
    for run in index.shared_hashes():  # equal hashes: read the lines to tell a duplicate from a collision
        first: dict[str, int] = {}
        for i in sorted(run, key=lambda k: lines[k]):
            doc, _ = _parse(layout, read_line_at(path, int(index.offsets[i])))
            assert doc is not None
            if doc.docid in first:
                problems.append(Problem(where, int(lines[i]),
                                        f"duplicate docid {doc.docid!r} (first on line {first[doc.docid]})"))
            else:
                first[doc.docid] = int(lines[i])
    if not len(index) and not problems:
        problems.append(Problem(where, 0, "no documents found"))
    if problems:
        raise InputError.of(sorted(problems, key=lambda p: p.line))
    return layout, index


def _index_path(path: Path) -> Path:
    return path.with_name(path.name + ".idx")


def _load_index(path: Path) -> tuple[str, StoredIndex] | None:
    """The cached (layout, index) of `path`, left in its file, or None if absent, unreadable or stale.

    The file is a JSON header line (format, the corpus file's size and mtime, layout, count, block;
    padded to a multiple of 8 bytes) followed by the sorted hashes, the offsets in their order, and every
    block-th hash (the fences), all little-endian unsigned 64-bit integers.
    """
    target = _index_path(path)
    try:
        file = open(target, "rb")
    except OSError:
        return None
    try:
        head = file.readline(4096)
        data = json.loads(head)
        stat = path.stat()
        fresh = (data["format"], data["size"], data["mtime_ns"]) == (INDEX_FORMAT, stat.st_size, stat.st_mtime_ns)
        count, block = data["count"], data["block"]
        if (not fresh or data["layout"] not in (JSONL, TSV, TSV_TITLE) or not isinstance(count, int) or count < 1
                or not isinstance(block, int) or block < 1):
            file.close()
            return None
        fences = -(-count // block)
        if os.fstat(file.fileno()).st_size != len(head) + 16 * count + 8 * fences:
            file.close()
            return None
        fence_array = _numbers(os.pread(file.fileno(), 8 * fences, len(head) + 16 * count))
        return data["layout"], StoredIndex(file, len(head), count, block, fence_array)
    except (OSError, ValueError, KeyError, TypeError):
        file.close()
        return None


def _save_index(path: Path, layout: str, index: OffsetIndex) -> None:
    """Write the sidecar index atomically; a read-only directory just means no cache."""
    stat = path.stat()
    head = json.dumps({"format": INDEX_FORMAT, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "layout": layout,
                       "count": len(index), "block": BLOCK}).encode("utf-8")
    head += b" " * (-(len(head) + 1) % 8) + b"\n"  # the arrays start 8-byte aligned
    target = _index_path(path)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(head)
            f.write(index.hashes.astype("<u8").tobytes())
            f.write(index.offsets.astype("<u8").tobytes())
            f.write(index.hashes[::BLOCK].astype("<u8").tobytes())
        os.replace(tmp, target)
    except OSError:
        tmp.unlink(missing_ok=True)


class IrdsCorpus(Corpus):
    """The documents of an ir_datasets dataset, looked up in its docstore; text is the doc's `default_text()`."""

    def __init__(self, source: str):
        from trecbench.files.irds import load_dataset

        self.source = source
        self.dataset = load_dataset(source)
        if not self.dataset.has_docs():
            raise InputError(source, 0, "this ir_datasets dataset has no documents")
        self._store: Any = None

    def _docstore(self) -> Any:
        if self._store is None:
            self._store = self.dataset.docs_store()
        return self._store

    def get(self, docid: str) -> Document | None:
        try:
            return _from_irds(self._docstore().get(docid))
        except KeyError:
            return None

    def __len__(self) -> int:
        count = self.dataset.docs_count()
        if count is None:
            store = self._docstore()
            count = store.count() if hasattr(store, "count") else sum(1 for _ in self.dataset.docs_iter())
        return count

    def __iter__(self) -> Iterator[Document]:
        for doc in self.dataset.docs_iter():
            yield _from_irds(doc)


def _from_irds(doc: Any) -> Document:
    text = doc.default_text() if hasattr(doc, "default_text") else getattr(doc, "text", "")
    title = getattr(doc, "title", None)
    return Document(str(doc.doc_id), text, title if isinstance(title, str) else None)
