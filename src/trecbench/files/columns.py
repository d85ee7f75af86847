"""Clean TREC files straight into numpy columns, with no Python object per line.

Most runs and qrels have exactly one space (or one tab) between fields and nothing else odd. Such a
file is split with a few vectorised passes over its bytes, a block of about 1 MB at a time: one pass
finds every byte up to 32 (in a clean block: the separators, CRs and newlines, so line i's are row i
of a matrix of their positions), each wanted field is gathered as one fixed-width item per line (an
overlapping view of the block, one fancy index, no loop per byte), ids become big-endian 64-bit words
(`Ids`), which compare and sort exactly as C's strcmp compares the strings, and numbers are read
right-aligned, so that a column is a decimal place: eight digits per word by three multiplications,
which columns hold digits and dots as bits of one word per line. Up to 15 digits are exact by one
division, 16 to 18 by one x87 extended division (unless it lands on a midpoint between two doubles),
anything else by numpy's correctly rounded parser. Anything else in the file (other whitespace or
control bytes, missing or extra fields, a blank line, a comment, a value that is not a number, a
pair listed twice) makes `split_fields` return None and the exact line-by-line readers decide, so a
result never depends on which path read the file.

This is trecbench's one fast path for TREC files: evaluation (`read_run_columns`,
`read_qrels_columns`), pooling (pooling/rank.py), `read_run` and `read_qrels` all split clean bytes
here, and what it refuses goes to files/trec.py (pandas' C parser, then the exact line-by-line
reader and its `path:line: message` errors). It needs numpy only: pyarrow, whose CSV reader
`read_run` used until issue 20 and whose string arrays pooling used until issue 23, is not a
dependency. benchmarks/read_speed.py measures it against pyarrow's CSV reader and a raw read of the
bytes (the figures: docs/speed.md).
"""
from __future__ import annotations

import io
import sys
from collections.abc import Sequence
from typing import Any, BinaryIO, Iterator, NamedTuple

import numpy as np

_CHUNK = 1 << 20  # bytes parsed at a time: a block's temporaries stay in cache, memory stays bounded
_LINES = 1 << 20  # rows handled at a time where a whole column is not needed
_HASH = np.uint64(0x9E3779B97F4A7C15)
_SIMPLE_DIGITS = 15  # decimal mantissas below 10**15 < 2**53 are exact doubles
_POW10 = 10.0 ** np.arange(26)  # exact doubles up to 1e22 (the rest only for rows read again as text)


class Ids(NamedTuple):
    """Strings as rows of big-endian uint64 words of their UTF-8 bytes, NUL padded.

    Comparing rows word by word is comparing the strings with strcmp; `key` is the first word plus a
    hash of the others (exact for ids of up to 8 bytes; equal ids have equal keys at any padding).
    """

    words: np.ndarray  # [n, k] uint64

    @property
    def key(self) -> np.ndarray:
        """One uint64 per id; NUL padding words add nothing, so ids padded to any width get the same key."""
        w = self.words
        if w.shape[1] == 1:
            return w[:, 0]
        h = w[:, 0].copy()
        step = np.empty_like(h)  # one temporary, reused: a column of 7M ids costs 2 arrays, not 4
        for i in range(1, w.shape[1]):
            np.multiply(w[:, i], np.uint64(pow(int(_HASH), i, 1 << 64)), out=step)
            h += step
        return h

    def __len__(self) -> int:
        return self.words.shape[0]

    def take(self, index: np.ndarray | slice) -> Ids:
        return Ids(self.words[index])

    def to_pandas(self) -> Any:
        """The ids as a pandas Series of pandas' own string dtype (what it infers for a list of str: `str` on
        pandas 3, object before), each distinct stretch of equal ids one Python str (`objects`)."""
        return string_series(self.objects())

    def objects(self) -> np.ndarray:
        """The ids as a numpy object array of str. Rows of a stretch of equal ids (a run's topic) share one str
        object: a topic of 1,000 lines costs one decode, not 1,000."""
        n = len(self)
        starts = stretch_starts(self) if n else np.zeros(0, dtype=np.int64)
        if 2 * len(starts) > n:
            return _object_array(self.strings())
        return np.repeat(_object_array(self.take(starts).strings()), np.diff(np.append(starts, n)))

    def strings(self) -> list[str]:
        """The ids as Python str, a part of rows at a time: the rows' bytes joined by newlines, decoded and split
        in C (3x a decode per id); ids with a newline or a NUL inside are decoded one by one."""
        out: list[str] = []
        for i in range(0, len(self), _LINES):
            out += _decoded(np.ascontiguousarray(self.words[i:i + _LINES].astype(">u8")).view(np.uint8))
        return out

    @staticmethod
    def of(strings: Sequence[str]) -> Ids:
        raw = np.array([s.encode("utf-8") for s in strings], dtype=bytes)
        if raw.dtype.itemsize == 0 or not len(raw):
            return Ids(np.zeros((len(raw), 1), dtype=np.uint64))
        width = -(-raw.dtype.itemsize // 8) * 8
        matrix = np.zeros((len(raw), width), dtype=np.uint8)
        matrix[:, : raw.dtype.itemsize] = raw.view(np.uint8).reshape(len(raw), raw.dtype.itemsize)
        return Ids(_words(matrix))

    @staticmethod
    def concat(parts: list[Ids]) -> Ids:
        if not parts:
            return Ids(np.zeros((0, 1), dtype=np.uint64))
        k = max(p.words.shape[1] for p in parts)
        return Ids(np.concatenate([_widen(p.words, k) for p in parts]))


def _decoded(raw: np.ndarray) -> list[str]:
    """[n, 8k] uint8 rows of NUL-padded UTF-8 as n str."""
    n = len(raw)
    if not n:
        return []
    nonzero = raw != 0
    lines = np.empty((n, raw.shape[1] + 1), dtype=np.uint8)
    lines[:, :-1] = raw
    lines[:, -1] = 10
    text = lines[np.concatenate((nonzero, np.ones((n, 1), dtype=bool)), axis=1)].tobytes().decode("utf-8")
    inner_nul = raw.shape[1] > 1 and bool((nonzero[:, 1:] & ~nonzero[:, :-1]).any())
    if inner_nul or text.count("\n") != n:
        return [b.decode("utf-8") for b in raw.view(f"S{raw.shape[1]}").ravel().tolist()]
    return text.split("\n")[:-1]


def _object_array(strings: list[str]) -> np.ndarray:
    out = np.empty(len(strings), dtype=object)
    out[:] = strings
    return out


def string_series(values: Sequence[str] | np.ndarray) -> Any:
    """Python str as a pandas Series of the string dtype pandas infers for str (pyarrow-backed `str` on pandas
    3 with pyarrow, python-backed without it, object on pandas 2), without inferring it value by value."""
    import pandas as pd

    return pd.Series(values, dtype=pd.Series(["x"]).dtype)


def _widen(words: np.ndarray, k: int) -> np.ndarray:
    if words.shape[1] == k:
        return words
    out = np.zeros((words.shape[0], k), dtype=np.uint64)
    out[:, : words.shape[1]] = words
    return out


def stretch_starts(ids: Ids) -> np.ndarray:
    """Where each stretch of equal ids starts (row 0, and every row whose id differs from the row before)."""
    n = len(ids)
    change = np.ones(n, dtype=bool)
    if n > 1:
        change[1:] = (ids.words[1:] != ids.words[:-1]).any(axis=1)
    return np.flatnonzero(change)


def _words(matrix: np.ndarray) -> np.ndarray:
    """[n, 8k] uint8 -> [n, k] native uint64 holding the bytes big-endian (so integer order is byte order)."""
    return matrix.view(">u8").astype(np.uint64)


def same_ids(a: Ids, b: Ids) -> np.ndarray:
    """Row-wise equality of two aligned id columns."""
    k = max(a.words.shape[1], b.words.shape[1])
    return (_widen(a.words, k) == _widen(b.words, k)).all(axis=1)


def sort_order(ids: Ids, *, descending: bool = False) -> list[np.ndarray]:
    """lexsort keys (least significant first) that order rows by the ids (strcmp), optionally descending."""
    words = ~ids.words if descending else ids.words
    return [words[:, i] for i in range(words.shape[1] - 1, -1, -1)]


def order_within(groups: np.ndarray, ids: Ids) -> np.ndarray:
    """Order of rows by (group ascending, id descending by strcmp); a group's rows must be contiguous.

    Pairs (most ties) are put in order by one comparison; larger groups are sorted by the first
    word of each id, then, for rows that still tie, by the next word.
    """
    n = len(groups)
    order = np.arange(n)
    if n < 2:
        return order
    starts = np.flatnonzero(np.concatenate(([True], groups[1:] != groups[:-1])))
    sizes = np.diff(np.append(starts, n))
    first = starts[sizes == 2]
    if len(first):
        a, b = ids.words[first], ids.words[first + 1]
        less = np.zeros(len(first), dtype=bool)
        equal = np.ones(len(first), dtype=bool)
        for i in range(a.shape[1]):
            less |= equal & (a[:, i] < b[:, i])
            equal &= a[:, i] == b[:, i]
        swap = first[less]
        order[swap], order[swap + 1] = swap + 1, swap
    big = sizes > 2
    if big.any():
        rows = np.flatnonzero(np.repeat(big, sizes))
        order[rows] = rows[_sort_groups(groups[rows], ids.take(rows))]
    return order


def _sort_groups(groups: np.ndarray, ids: Ids) -> np.ndarray:
    words = ids.words
    order = np.lexsort((~words[:, 0], groups))
    for i in range(1, words.shape[1]):
        w = words[order]
        g = groups[order]
        tie = (g[1:] == g[:-1]) & (w[1:, :i] == w[:-1, :i]).all(axis=1)
        if not tie.any():
            break
        rows = np.zeros(len(order), dtype=bool)
        rows[1:] = tie
        rows[:-1] |= tie
        at = np.flatnonzero(rows)
        sub = np.cumsum(~np.concatenate(([False], tie)))[at]
        order[at] = order[at][np.lexsort((~w[at, i], sub))]
    return order


class Dictionary(NamedTuple):
    """Distinct ids sorted by strcmp, with a lookup of any id column into them."""

    ids: Ids  # distinct, in strcmp order
    by_key: np.ndarray  # positions into ids, sorted by key
    keys: np.ndarray  # ids.key[by_key]
    exact: dict[bytes, int] | None  # only when two distinct ids share a key (a hash collision)

    @staticmethod
    def build(ids: Ids) -> tuple[Dictionary, np.ndarray]:
        """The dictionary of `ids` and each row's code in it."""
        n = len(ids)
        order = np.lexsort(sort_order(ids)) if n else np.zeros(0, dtype=np.int64)
        w = ids.words[order]
        new = np.ones(n, dtype=bool)
        if n > 1:
            new[1:] = (w[1:] != w[:-1]).any(axis=1)
        uniq = Ids(w[new])
        codes = np.empty(n, dtype=np.int64)
        codes[order] = np.cumsum(new) - 1
        key = uniq.key
        by_key = np.argsort(key, kind="stable")
        keys = key[by_key]
        exact = None
        if len(keys) > 1 and (keys[1:] == keys[:-1]).any():
            exact = {s.encode("utf-8"): i for i, s in enumerate(uniq.strings())}
        return Dictionary(uniq, by_key, keys, exact), codes

    def find(self, ids: Ids) -> np.ndarray:
        """Code of each id in the dictionary, -1 where absent."""
        if self.exact is not None:
            return np.array([self.exact.get(s.encode("utf-8"), -1) for s in ids.strings()], dtype=np.int64)
        if not len(self.keys) or not len(ids):
            return np.full(len(ids), -1, dtype=np.int64)
        key = ids.key
        at = np.minimum(np.searchsorted(self.keys, key), len(self.keys) - 1)
        code = self.by_key[at]
        hit = self.keys[at] == key
        if self.ids.words.shape[1] > 1 or ids.words.shape[1] > 1:
            rows = np.flatnonzero(hit)
            hit[rows] = same_ids(self.ids.take(code[rows]), ids.take(rows))
        return np.where(hit, code, -1)


class HashIndex(NamedTuple):
    """Distinct uint64 keys -> their position, by open addressing (a few vectorised probes per lookup)."""

    slots: np.ndarray  # position of the key stored in each slot, -1 if empty
    keys: np.ndarray
    shift: np.uint64

    @staticmethod
    def build(keys: np.ndarray) -> HashIndex:
        """Keys must be distinct (the caller checks)."""
        bits = max(len(keys).bit_length() + 2, 4)  # at most a quarter full: misses end fast
        index = HashIndex(np.full(1 << bits, -1, dtype=np.int64), keys, np.uint64(64 - bits))
        slot = index._home(keys)
        pending = np.arange(len(keys))
        mask = len(index.slots) - 1
        while len(pending):
            free = index.slots[slot] == -1
            index.slots[slot[free]] = pending[free]
            placed = index.slots[slot] == pending
            pending, slot = pending[~placed], (slot[~placed] + 1) & mask
        return index

    def _home(self, keys: np.ndarray) -> np.ndarray:
        return ((keys * _HASH) >> self.shift).astype(np.int64)

    def find(self, keys: np.ndarray) -> np.ndarray:
        """Position of each key, -1 where absent."""
        out = np.full(len(keys), -1, dtype=np.int64)
        mask = len(self.slots) - 1
        active = np.arange(len(keys))
        slot = self._home(keys)
        while len(active):
            got = self.slots[slot]
            empty = got == -1
            hit = ~empty
            hit[hit] = self.keys[got[hit]] == keys[active[hit]]
            out[active[hit]] = got[hit]
            more = ~(empty | hit)
            active, slot = active[more], (slot[more] + 1) & mask
        return out


_PAIR = np.uint64(0xC2B2AE3D27D4EB4F)


def pair_keys(first: np.ndarray, second: Ids) -> np.ndarray:
    """One uint64 per (int, id) pair; equal pairs give equal keys."""
    return second.key ^ (first.astype(np.uint64) * _PAIR)


class PairIndex(NamedTuple):
    """(int, id) pairs, e.g. (topic row, docid) -> the first row that lists the pair."""

    table: HashIndex
    rows: np.ndarray  # row of each key in `table`
    first: np.ndarray
    second: Ids
    exact: dict[tuple[int, str], int] | None  # only when distinct pairs share a key (a hash collision)

    @staticmethod
    def build(first: np.ndarray, second: Ids) -> PairIndex:
        key = pair_keys(first, second)
        order = np.argsort(key, kind="stable")
        ordered = key[order]
        again = np.zeros(len(key), dtype=bool)
        again[1:] = ordered[1:] == ordered[:-1]
        exact: dict[tuple[int, str], int] | None = None
        if again.any():
            rows = np.flatnonzero(again)
            same = (first[order[rows]] == first[order[rows - 1]]) & same_ids(second.take(order[rows]),
                                                                            second.take(order[rows - 1]))
            if not same.all():
                exact = {}
                for row, pair in enumerate(zip(first.tolist(), second.strings())):
                    exact.setdefault(pair, row)
        keep = order[~again]
        return PairIndex(HashIndex.build(key[keep]), keep, first, second, exact)

    def find(self, first: np.ndarray, second: Ids) -> np.ndarray:
        """Row of each pair, -1 where absent."""
        if self.exact is not None:
            exact = self.exact
            return np.array([exact.get(p, -1) for p in zip(first.tolist(), second.strings())], dtype=np.int64)
        at = self.table.find(pair_keys(first, second))
        hit = np.flatnonzero(at >= 0)
        row = np.full(len(first), -1, dtype=np.int64)
        cand = self.rows[at[hit]]
        ok = (self.first[cand] == first[hit]) & same_ids(self.second.take(cand), second.take(hit))
        row[hit[ok]] = cand[ok]
        return row


def split_fields(source: bytes | BinaryIO, n_fields: int, ids: Sequence[int] = (), floats: Sequence[int] = (),
                 ints: Sequence[int] = (), *, spans: Sequence[int] = (), comments: bool = False) -> dict[int, object] | None:
    """Columns of a file with exactly `n_fields` fields per line, one space or tab between them.

    `source` is the file's bytes or a binary file, read a block at a time (the whole file is never
    held). Returns {field: Ids | float64 array | int64 array} for the fields named in `ids`,
    `floats`, `ints`, or None when the file is not that clean (the general reader must decide).
    Fields named in `spans` are not parsed: they come as an [n, 2] int64 array of each value's start
    and end offset in the source (`gather_ids` reads the rows wanted, e.g. only a run's top documents).
    With `comments`, a line starting with `#` sends the file to the general reader too.
    """
    out = _Columns(_source_size(source))
    delim = None
    for buf, lo, hi in _blocks(source):
        if delim is None:
            delim = _delimiter(buf, lo, hi, n_fields)
            if delim is None:
                return None
        seg = np.frombuffer(buf, dtype=np.uint8, count=hi - lo, offset=lo)
        lines = _lines(buf, lo, seg, n_fields, delim, comments)
        if lines is None:
            return None
        rows = out.rows(len(lines[0]), hi - lo)
        for f in spans:
            np.add(np.stack(_span(lines, f), axis=1), out.offset, out=out.column(f, rows, np.int64, 2))
        for f in ids:
            start, stop = _span(lines, f)
            width = -(-int((stop - start).max()) // 8) * 8
            _ids_at(seg, start, stop, width, out=out.column(f, rows, np.uint64, width // 8))
        for kind, fields in ((np.float64, floats), (np.int64, ints)):
            for f in fields:
                if _parse_numbers(seg, *_span(lines, f), kind, out=out.column(f, rows, kind)) is None:
                    return None
        out.offset += hi - lo
    if not out.columns:
        return None
    return {f: Ids(col) if f in ids else col for f, col in out.finish().items()}


class _Columns:
    """The columns `split_fields` fills block by block, in arrays sized from the first block's lines per byte
    (grown in place if the guess was short, trimmed to the lines read at the end), so no second copy is made."""

    def __init__(self, size: int | None) -> None:
        self.size = size  # bytes of the source, when known
        self.columns: dict[int, np.ndarray] = {}
        self.capacity = 0
        self.done = 0
        self.offset = 0  # of the current block in the source

    def rows(self, n: int, block: int) -> slice:
        """The rows of the next block's n lines (`block` bytes), making room for them."""
        need = self.done + n
        if need > self.capacity:
            left = max((self.size or 0) - self.offset, block)
            self.capacity = max(need, self.done + int(left * n / block * 1.02) + 16)
            for col in self.columns.values():
                col.resize((self.capacity, *col.shape[1:]), refcheck=False)
        rows = slice(self.done, need)
        self.done = need
        return rows

    def column(self, f: int, rows: slice, dtype: Any, width: int = 0) -> np.ndarray:
        """Where field f's values of these rows go ([n] or [n, width]; an id column is widened when needed)."""
        col = self.columns.get(f)
        if col is None:
            col = self.columns[f] = np.zeros((self.capacity, width) if width else self.capacity, dtype=dtype)
        elif width > (col.shape[1] if col.ndim == 2 else 0):  # longer ids than so far
            col = self.columns[f] = _widen(col, width)
        return col[rows, :width] if width else col[rows]

    def finish(self) -> dict[int, np.ndarray]:
        for col in self.columns.values():
            if len(col) != self.done:
                col.resize((self.done, *col.shape[1:]), refcheck=False)
        return self.columns


def _span(lines: tuple[np.ndarray, np.ndarray], f: int) -> tuple[np.ndarray, np.ndarray]:
    """Start and end of field f on each line of a block."""
    line_start, marks = lines
    return (line_start if f == 0 else marks[:, f - 1] + 1), marks[:, f]


def _source_size(source: bytes | BinaryIO) -> int | None:
    if isinstance(source, (bytes, bytearray)):
        return len(source)
    if isinstance(source, io.BytesIO):
        return len(source.getvalue()) - source.tell()  # the bytes it holds, not a copy
    try:
        import os

        return os.fstat(source.fileno()).st_size - source.tell()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None


def _blocks(source: bytes | BinaryIO) -> Iterator[tuple[bytes | bytearray, int, int]]:
    """(buffer, start, end): blocks of about _CHUNK bytes, each buffer[start:end] whole lines (a last line
    without newline gets one). Bytes (and a BytesIO's, which it shares) are cut where they are, with no copy;
    a file is read into one reused buffer, so a block costs no copy beyond the read. A buffer is valid until
    the next block."""
    if isinstance(source, io.BytesIO):
        at, source = source.tell(), source.getvalue()  # getvalue() shares the bytes a BytesIO was made from
        source = source[at:] if at else source
    if isinstance(source, (bytes, bytearray)):
        start = 0
        while start < len(source):
            end = source.rfind(b"\n", start, start + _CHUNK) + 1 or source.find(b"\n", start) + 1 or len(source)
            if source[end - 1] == 10:
                yield source, start, end
            else:  # the last line, without its newline
                yield source[start:end] + b"\n", 0, end - start + 1
            start = end
        return
    yield from _file_blocks(source)


def _file_blocks(source: BinaryIO) -> Iterator[tuple[bytearray, int, int]]:
    buf = bytearray(_CHUNK + 1)  # one byte more: room for the newline a last line may lack
    kept = 0  # bytes of an unfinished line carried to the buffer's start
    while True:
        with memoryview(buf) as view:
            got = source.readinto(view[kept:len(buf) - 1])  # type: ignore[attr-defined]
        if not got:
            if kept:
                buf[kept] = 10
                yield buf, 0, kept + 1
            return
        filled = kept + got
        end = buf.rfind(b"\n", 0, filled) + 1
        if end:
            yield buf, 0, end
            tail = bytes(buf[end:filled])
            kept = len(tail)
            with memoryview(buf) as view:
                view[:kept] = tail
        else:
            kept = filled
            if kept == len(buf) - 1:  # a line longer than the buffer
                buf = buf + bytearray(len(buf))


def _delimiter(buf: bytes | bytearray, lo: int, hi: int, n_fields: int) -> int | None:
    stop = buf.find(b"\n", lo, hi)
    first = buf[lo: hi if stop < 0 else stop].rstrip(b"\r")
    for delim in (b" ", b"\t"):
        if first.count(delim) == n_fields - 1:
            return ord(delim)
    return None


def _lines(buf: bytes | bytearray, lo: int, seg: np.ndarray, n_fields: int, delim: int, comments: bool
           ) -> tuple[np.ndarray, np.ndarray] | None:
    """(line starts, [lines, separators] positions) of a clean block, or None.

    One pass finds every byte up to 32: in a clean block those are the separators, the CRs and the
    newlines, so line i's are row i of a matrix of their positions. It is clean when there are exactly
    as many newlines as lines, each ending its row, as many delimiters as fields between them, a CR
    before every newline or none at all (so no other byte up to 32: no tab, NUL or other control byte),
    no two of them side by side but a CR and its newline (no field is empty, no line blank), no line
    starting with `#` when comments are refused, and valid UTF-8.
    """
    hi = lo + len(seg)  # seg is buf[lo:hi]
    crlf = buf.find(b"\r", lo, hi) >= 0
    per = n_fields + crlf
    low = seg <= 32
    found = np.flatnonzero(low)
    n = len(found) // per
    if n == 0 or len(found) != n * per or low[0]:
        return None
    kinds = seg[found]
    if np.count_nonzero(kinds == 10) != n or (kinds[per - 1::per] != 10).any() \
            or np.count_nonzero(kinds == delim) != n * (n_fields - 1):
        return None
    marks = found.reshape(n, per)
    if crlf and (np.count_nonzero(kinds == 13) != n or (marks[:, -2] + 1 != marks[:, -1]).any()):
        return None
    if np.count_nonzero(low[1:] & low[:-1]) != n * crlf:
        return None
    if seg.max() >= 0x80:
        import codecs

        try:
            with memoryview(buf) as view:
                codecs.utf_8_decode(view[lo:hi], "strict", True)
        except UnicodeDecodeError:
            return None
    line_start = np.empty(n, dtype=np.int64)
    line_start[0] = 0
    line_start[1:] = marks[:-1, -1] + 1
    if comments and (seg[line_start] == 35).any():
        return None
    return line_start, marks


def gather_ids(source: bytes, spans: np.ndarray) -> Ids:
    """The ids at these [n, 2] (start, end) offsets of `source` (from `split_fields(..., spans=...)`)."""
    if not len(spans):
        return Ids(np.zeros((0, 1), dtype=np.uint64))
    seg = np.frombuffer(source, dtype=np.uint8)
    width = -(-int((spans[:, 1] - spans[:, 0]).max()) // 8) * 8
    return Ids(_ids_at(seg, spans[:, 0], spans[:, 1], width))


def _ids_at(seg: np.ndarray, start: np.ndarray, end: np.ndarray, width: int, out: np.ndarray | None = None) -> np.ndarray:
    """[n, width / 8] uint64: each id's bytes as big-endian words, NULs past its end (into `out` if given)."""
    raw = _fixed(seg, start, width)
    raw &= _head_masks(width)[end - start].view(np.uint8).reshape(len(start), width)
    words = raw.view(">u8")
    if out is None:
        return words.astype(np.uint64)
    np.copyto(out, words)  # the byte swap to native order, straight into the column
    return out


def _fixed(seg: np.ndarray, start: np.ndarray, width: int) -> np.ndarray:
    """[n, width] uint8: the `width` bytes of `seg` from each start (a start may lie before 0 or within width of
    the end: bytes outside `seg` are zero). One fancy index of overlapping `width`-byte items, no loop per byte."""
    if len(start) and start.min() >= 0 and start.max() <= len(seg) - width:
        items = np.ndarray((len(seg) - width + 1,), dtype=np.dtype((np.void, width)), buffer=seg, strides=(1,))
        return items[start].view(np.uint8).reshape(len(start), width)
    out = np.zeros((len(start), width), dtype=np.uint8)
    inside = (start >= 0) & (start <= len(seg) - width)
    if inside.any():
        out[inside] = _fixed(seg, start[inside], width)
    edge = np.flatnonzero(~inside)
    padded = np.zeros(len(seg) + 2 * width, dtype=np.uint8)  # only near the edges (a few rows)
    padded[width: width + len(seg)] = seg
    out[edge] = _fixed(padded, start[edge] + width, width)
    return out


_NUMBER_BYTES = np.zeros(256, dtype=bool)
_NUMBER_BYTES[list(b"0123456789.+-eE")] = True
_NUMBER_BYTES[0] = True  # padding
_LONG_DOUBLE = np.finfo(np.longdouble).nmant >= 63  # x87 extended (or quad): a 64-bit mantissa holds 19 digits
_POW10_LONG = np.cumprod(np.r_[1, [10] * 27].astype(np.longdouble))  # 10**0..10**27, exact (5**27 < 2**63)
_PLACES = 18  # digits read as one integer: below 10**18 < 2**63, so exact as uint64 and as int64
_FAST_WIDTH = 24  # bytes of the widest number read by arithmetic: 18 digits, a dot and a sign take 20
_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
# By the place of the dot: a divisor that splits off the digits left of it (none without a dot), and 9 times the
# place of the dot (what each unit left of it counts too much when the dot is read as a 0 digit)
_SPLIT = np.array([0xFFFFFFFFFFFFFFFF] + [10**e if e <= 19 else 0xFFFFFFFFFFFFFFFF for e in range(1, 26)], dtype=np.uint64)
_NINES = np.array([0] + [9 * 10 ** (e - 1) if e <= 19 else 0 for e in range(1, 26)], dtype=np.uint64)


def _parse_numbers(seg: np.ndarray, start: np.ndarray, end: np.ndarray, dtype, out: np.ndarray | None = None
                   ) -> np.ndarray | None:
    """Decimal fields as float64 (correctly rounded, as strtod) or int64 (into `out` if given); None if one is
    not a finite number.

    Each field is taken right-aligned in a row of `width` bytes (the bytes before it zeroed), so a column is a
    decimal place. Which columns hold a digit, a dot become bits of one word per row (the last column bit 0),
    so a clean field, `[+-]digits[.digits]`, is one comparison, and the dot's bit is the number of digits after
    it. The digits, the dot read as a 0, are one integer t (`_decimal_value`); the digits left of the dot count
    ten times too much, so the mantissa is m = t - 9 * (t // 10**(f+1)) * 10**f. An integer of up to 18 digits is
    m. A decimal of up to 15 digits is m / 10**f with both exact doubles, so one IEEE division gives the
    correctly rounded value. With 16 to 18 digits m is exact in x87's 64-bit mantissa: m / 10**f is rounded once
    there and once to a double, which is the correctly rounded value unless the first result lies exactly
    halfway between two doubles; those, and anything else, go through numpy's exact string conversion.
    """
    n = len(start)
    length = end - start
    values = np.empty(n, dtype=dtype) if out is None else out
    longest = int(length.max())
    if longest == 1:  # one digit each (a qrels file's grades): the byte less '0'
        digit = seg[start] - np.uint8(48)
        if (digit < 10).all():
            np.copyto(values, digit, casting="unsafe")
            return values
    width = -(-min(longest, _FAST_WIDTH) // 8) * 8
    fit = np.minimum(length, width)
    matrix = _fixed(seg, end - width, width)
    matrix &= _byte_masks(width)[fit].view(np.uint8).reshape(n, width)  # the bytes before the field (earlier fields)
    is_dot = matrix == 46
    dot_bits = _row_bits(is_dot)
    matrix -= np.uint8(48)  # bytes below '0' wrap around to large values
    is_digit = matrix < 10
    matrix *= is_digit
    first = seg[start]
    signed = (first == 43) | (first == 45)
    has_dot = dot_bits != 0
    n_digits = length - has_dot - signed
    clean = (n_digits >= 1) & (n_digits <= _PLACES) & (length <= width)
    # A row's fields bytes are digits, dots and a leading sign, at most one dot: counted over the block at once
    # (a row's digits, dots and sign are distinct bytes of its `fit`, so the sums are equal only if each row's
    # are, and dot bytes equal rows with a dot only if none has two); only if not, row by row.
    dots = np.count_nonzero(is_dot)
    if np.count_nonzero(is_digit) + dots + np.count_nonzero(signed & clean) != fit.sum() \
            or dots != np.count_nonzero(has_dot):
        digit_bits = _row_bits(is_digit)
        one, shift = np.uint64(1), fit.astype(np.uint64)
        clean &= (digit_bits | dot_bits | (signed.astype(np.uint64) << (shift - one))) == (one << shift) - one
        clean &= (dot_bits & (dot_bits - one)) == 0
    if dtype is np.int64:
        clean &= ~has_dot
    # the dot's bit b as b + 1 (0: no dot), read from the exponent of the bits as a double
    place = np.maximum((dot_bits.astype(np.float64).view(np.int64) >> 52) - 1022, 0)
    total = _decimal_value(matrix)
    mantissa = total - (total // _SPLIT[place]) * _NINES[place]
    negative = first == 45
    if dtype is np.int64:
        np.copyto(values, mantissa.view(np.int64))
        np.negative(values, out=values, where=negative)
        todo = ~clean
    else:
        fraction = np.maximum(place - 1, 0)
        np.divide(mantissa, _POW10[fraction], out=values)
        np.negative(values, out=values, where=negative)
        todo = ~clean | (n_digits > _SIMPLE_DIGITS)
        if _LONG_DOUBLE:
            long = np.flatnonzero(todo & clean)
            if len(long):
                todo[long] = ~_extended(mantissa[long], fraction[long], negative[long], values, long)
    rest = np.flatnonzero(todo)
    if len(rest):
        if _parse_text(seg, start, end, dtype, rest, values) is None:
            return None
        if dtype is not np.int64 and not np.isfinite(values[rest]).all():
            return None
    return values


def _extended(mantissa: np.ndarray, fraction: np.ndarray, negative: np.ndarray, values: np.ndarray,
              rows: np.ndarray) -> np.ndarray:
    """Sets values[rows] to mantissa / 10**fraction rounded through x87's extended precision where that is the
    correctly rounded double; says where it is (not where the extended quotient lies halfway between doubles)."""
    exact = mantissa.astype(np.longdouble) / _POW10_LONG[fraction]
    value = exact.astype(np.float64)
    ok = ~_halfway(exact, value)
    values[rows[ok]] = np.where(negative[ok], -value[ok], value[ok])
    return ok


_X87 = np.finfo(np.longdouble).nmant == 63 and np.dtype(np.longdouble).itemsize == 16 and sys.byteorder == "little"


def _halfway(exact: np.ndarray, value: np.ndarray, bits: bool = _X87) -> np.ndarray:
    """Whether each extended quotient (positive, normal) lies exactly halfway between two doubles, `value` being
    it rounded to a double. With x87's layout (the 64-bit significand in an item's low 8 bytes) that is the 11
    bits a double drops being 100 0000 0000; else by arithmetic: half the step between doubles from `value`, a
    quarter where `value` is the power of two above it (the step halves below it)."""
    if bits:
        return (exact.view("<u8")[::2] & np.uint64(0x7FF)) == np.uint64(0x400)
    off = np.abs(exact - value.astype(np.longdouble))
    step = np.spacing(np.abs(value)).astype(np.longdouble)
    return (off == step / 2) | (off == step / 4)


def _row_bits(flags: np.ndarray) -> np.ndarray:
    """[n, width <= 64] bool -> n uint64, column c as bit width - 1 - c (the last column is bit 0): each 8 flag
    bytes of a little-endian word packed into a byte by one multiplication (bit i of the product's top byte is
    flag 7 - i)."""
    packed = (flags.view(np.uint8).view("<u8") * _PACK) >> np.uint64(56)
    k = packed.shape[1]
    out = packed[:, k - 1].copy()
    for j in range(k - 2, -1, -1):
        out |= packed[:, j] << np.uint64(8 * (k - 1 - j))
    return out


def _decimal_value(digits: np.ndarray) -> np.ndarray:
    """[n, width] uint8 digits 0-9 -> n uint64: the last 24 columns read as one decimal number (wrapping
    past 2**64; a clean field's digits fill at most the last 19). Eight digits of a little-endian word at
    a time, by three multiplications (SWAR: pairs, then quads, then the eight)."""
    v = digits.view("<u8")[:, -3:]  # in place: the digits are not needed after
    v *= np.uint64(2561)
    v >>= np.uint64(8)
    v &= _LOW8
    v *= np.uint64(6553601)
    v >>= np.uint64(16)
    v &= _LOW16
    v *= np.uint64(42949672960001)
    v >>= np.uint64(32)
    total = v[:, 0].copy()
    for k in range(1, v.shape[1]):
        total *= np.uint64(100_000_000)
        total += v[:, k]
    return total


_PACK = np.uint64(0x8040201008040201)
_LOW8, _LOW16 = np.uint64(0x00FF00FF00FF00FF), np.uint64(0x0000FFFF0000FFFF)


_MASKS: dict[tuple[int, bool], np.ndarray] = {}


def _byte_masks(width: int, head: bool = False) -> np.ndarray:
    """[width + 1] items of `width` bytes: item L keeps the last L bytes (0xFF), or the first L with `head`, and
    zeroes the others."""
    if (width, head) not in _MASKS:
        cols, keep = np.arange(width)[None, :], np.arange(width + 1)[:, None]
        table = ((cols < keep) if head else (cols >= width - keep)).astype(np.uint8) * np.uint8(255)
        _MASKS[width, head] = table.view(np.dtype((np.void, width))).ravel()
    return _MASKS[width, head]


def _head_masks(width: int) -> np.ndarray:
    return _byte_masks(width, head=True)


def _parse_text(seg: np.ndarray, start: np.ndarray, end: np.ndarray, dtype, rows: np.ndarray,
                values: np.ndarray) -> np.ndarray | None:
    """`values` with `rows` parsed by numpy's exact string conversion; None if one is not a number."""
    length = end[rows] - start[rows]
    width = int(length.max())
    matrix = _fixed(seg, start[rows], width) * (np.arange(width)[None, :] < length[:, None])
    if not _NUMBER_BYTES[matrix].all():
        return None
    text = np.ascontiguousarray(matrix).view(f"S{width}").ravel()
    try:
        values[rows] = text.astype(dtype)
    except (ValueError, OverflowError):
        return None
    return values


def usable_cores(limit: int = 8) -> int:
    """Cores this process may run on (its CPU affinity, e.g. under taskset), at most `limit`: how many
    files to read side by side (threads beyond the cores only add switching and memory)."""
    import os

    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, limit))


def open_plain(path: object) -> BinaryIO | None:
    """A regular file opened for `split_fields`, or None for what only the general readers handle.

    Standard input, compressed files and files with a byte order mark go to the general readers.
    """
    import os

    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return None
    try:
        f = open(path, "rb")  # noqa: SIM115  (the caller closes it)
    except OSError:
        return None
    head = f.peek(3)[:3]
    if head[:2] == b"\x1f\x8b" or head == b"\xef\xbb\xbf":
        f.close()
        return None
    return f


def last_line(source: BinaryIO) -> bytes:
    """The last non-blank line of a file (read from its end)."""
    end = source.seek(0, 2)
    size = 4096
    while True:
        source.seek(max(0, end - size))
        tail = source.read()
        lines = [line for line in tail.splitlines() if line.strip()]
        if len(lines) > 1 or size >= end:
            return lines[-1] if lines else b""
        size *= 4


def has_repeats(first: Ids, second: Ids) -> bool:
    """Whether some (first, second) pair occurs on two rows (a docid twice within a topic).

    Files list a topic's rows together; then each stretch of about _LINES rows of whole topics is
    checked alone, so memory holds one stretch's keys.
    """
    return any(_repeats_in(first.take(part), second.take(part)) for part in _grouped_parts(first))




def _grouped_parts(first: Ids) -> list[slice]:
    """Stretches of rows, each holding whole groups of equal `first` ids and together covering every row,
    when each id's rows are together; else one stretch of all rows."""
    n = len(first)
    if n <= _LINES:
        return [slice(0, n)]
    starts = stretch_starts(first)
    if len(np.unique(first.words[starts], axis=0)) != len(starts):  # an id comes back later
        return [slice(0, n)]
    block = starts // _LINES
    cut = starts[np.flatnonzero(np.diff(block)) + 1]
    bounds = np.concatenate(([0], cut, [n]))
    return [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


def _repeats_in(first: Ids, second: Ids) -> bool:
    if len(first) < 2:
        return False
    key = pair_keys(first.key, second)
    key.sort()
    if not (key[1:] == key[:-1]).any():
        return False
    key = pair_keys(first.key, second)
    order = np.argsort(key)
    ordered = key[order]
    same = ordered[1:] == ordered[:-1]
    rows = np.unique(np.concatenate((order[1:][same], order[:-1][same])))
    pairs = list(zip(first.take(rows).strings(), second.take(rows).strings()))
    return len(set(pairs)) < len(pairs)


LINE_BLOCK = 1 << 20  # bytes of whole lines split at a time by the validate summaries


def line_blocks(source: BinaryIO) -> Iterator[bytes]:
    """An open file's bytes, a block of whole lines at a time (the last block may lack its newline)."""
    rest = b""
    while chunk := source.read(LINE_BLOCK):
        data = rest + chunk
        cut = data.rfind(b"\n") + 1
        rest = data[cut:]
        if cut:
            yield data[:cut]
    if rest:
        yield rest


class Topics:
    """The topics of a file read a block at a time, and the current topic's docids.

    This is the line-by-line check's rule for a docid twice in a topic (`trecbench.files.trec.PairLines`),
    on a block's columns: while a topic's lines are together only its own docids are kept. `add` says False
    when a docid comes twice in a topic or an earlier topic comes back; then the line-by-line check decides
    (and words) it.
    """

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.topic: str | None = None
        self.docids: set[str] = set()

    def add(self, qids: Ids, docids: Ids) -> bool:
        """Take a block's columns; False if they repeat a (topic, docid) or bring an earlier topic back."""
        if has_repeats(qids, docids):
            return False
        starts = stretch_starts(qids)
        for name in qids.take(starts).strings():
            if name == self.topic:  # only the block's first stretch can go on with the current topic
                end = int(starts[1]) if len(starts) > 1 else len(qids)
                if not self.docids.isdisjoint(docids.take(slice(0, end)).strings()):
                    return False
            else:
                if name in self.seen:
                    return False
                self.seen.add(name)
                self.topic = name
                self.docids = set()
        self.docids.update(docids.take(slice(int(starts[-1]), None)).strings())
        return True
