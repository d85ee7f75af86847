"""Clean TREC files straight into numpy columns, with no Python object per line.

Most runs and qrels have exactly one space (or one tab) between fields and nothing else odd. Such a
file is split with a few vectorised passes over its bytes, a block of about 4 MB at a time: one pass
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

from collections.abc import Sequence
from typing import Any, BinaryIO, Iterator, NamedTuple

import numpy as np

_CHUNK = 1 << 22  # bytes parsed at a time: temporaries stay in cache, memory stays bounded
_LINES = 1 << 20  # rows handled at a time where a whole column is not needed
_HASH = np.uint64(0x9E3779B97F4A7C15)
_SIMPLE_DIGITS = 15  # decimal mantissas below 10**15 < 2**53 are exact doubles
_POW10 = 10.0 ** np.arange(23)  # exact doubles up to 1e22


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
    lines = _count_lines(source)
    out: dict[int, Any] = {}  # filled block by block, so no second copy of a column is made
    done = 0
    offset = 0  # of the block in the source
    delim = None
    for block in _blocks(source):
        if delim is None:
            delim = _delimiter(block, n_fields)
            if delim is None:
                return None
        if _odd_bytes(block, delim):
            return None
        buf = np.frombuffer(block, dtype=np.uint8)
        if buf.max() >= 0x80:
            try:
                block.decode("utf-8")
            except UnicodeDecodeError:
                return None
        got = _chunk(buf, n_fields, ord(delim), b"\r" in block, ids, floats, ints, spans, comments)
        if got is None:
            return None
        for f in spans:
            got[f] += offset
        offset += len(block)
        n_block = 0
        for f, col in got.items():
            values = col.words if isinstance(col, Ids) else col
            n_block = len(values)
            if f not in out:
                out[f] = np.zeros((lines, *values.shape[1:]), dtype=values.dtype)
            elif values.ndim == 2 and values.shape[1] > out[f].shape[1]:  # longer ids than so far
                out[f] = _widen(out[f], values.shape[1])
            target = out[f][done:done + len(values)]
            if values.ndim == 2:
                target[:, : values.shape[1]] = values
            else:
                target[:] = values
        done += n_block
    if not out or done != lines:
        return None
    return {f: Ids(out[f]) if f in ids else out[f] for f in out}


def _count_lines(source: bytes | BinaryIO) -> int:
    """Lines in the source, counting a last line without newline (a file is read once more, from the cache)."""
    if isinstance(source, (bytes, bytearray)):
        return source.count(b"\n") + (not source.endswith(b"\n") and len(source) > 0)
    count, last = 0, b"\n"
    while True:
        data = source.read(_CHUNK)
        if not data:
            break
        count += data.count(b"\n")
        last = data[-1:]
    source.seek(0)
    return count + (last != b"\n")


def _blocks(source: bytes | BinaryIO) -> Iterator[bytes]:
    """Newline-terminated blocks of about _CHUNK bytes (a last line without newline gets one)."""
    if isinstance(source, (bytes, bytearray)):
        start = 0
        while start < len(source):
            end = source.rfind(b"\n", start, start + _CHUNK) + 1 or source.find(b"\n", start) + 1 or len(source)
            block = source[start:end]
            yield block if block.endswith(b"\n") else block + b"\n"
            start = end
        return
    rest = b""
    while True:
        data = source.read(_CHUNK)
        if not data:
            break
        data = rest + data
        end = data.rfind(b"\n") + 1
        if end == 0:
            rest = data
            continue
        rest = data[end:]
        yield data[:end]
    if rest:
        yield rest + b"\n"


def _delimiter(data: bytes, n_fields: int) -> bytes | None:
    end = data.find(b"\n")
    first = (data if end < 0 else data[:end]).rstrip(b"\r")
    for delim in (b" ", b"\t"):
        if first.count(delim) == n_fields - 1:
            return delim
    return None


def _odd_bytes(data: bytes, delim: bytes) -> bool:
    """Bytes the general reader treats differently: other whitespace, NUL, a lone CR."""
    other = b"\t" if delim == b" " else b" "
    if other in data or b"\x00" in data or b"\x0b" in data or b"\x0c" in data:
        return True
    return b"\r" in data and data.count(b"\r") != data.count(b"\r\n")


def _chunk(seg: np.ndarray, n_fields: int, delim: int, crlf: bool, ids, floats, ints, spans, comments):
    # One pass finds every byte <= 32: in a clean block those are the separators, the CRs and the newlines,
    # so line i's are row i of a [lines, per line] matrix (any other control byte breaks that shape).
    per = n_fields + crlf
    found = np.flatnonzero(seg <= 32)
    n = len(found) // per
    if n == 0 or len(found) != n * per:
        return None
    marks = found.reshape(n, per)
    kinds = seg[marks]
    if (kinds[:, n_fields - 1 + crlf] != 10).any() or (kinds[:, : n_fields - 1] != delim).any() \
            or crlf and (kinds[:, n_fields - 1] != 13).any():
        return None
    line_start = np.empty(n, dtype=np.int64)
    line_start[0] = 0
    line_start[1:] = marks[:-1, -1] + 1
    # Every field non-empty: no two marks side by side, and none at a line's start.
    if (marks[:, 0] <= line_start).any() or (np.diff(marks[:, :n_fields], axis=1) <= 1).any():
        return None

    def span(f: int) -> tuple[np.ndarray, np.ndarray]:
        return (line_start if f == 0 else marks[:, f - 1] + 1), marks[:, f]

    if comments and (seg[line_start] == ord("#")).any():
        return None
    out: dict[int, Any] = {}
    for f in spans:
        out[f] = np.stack(span(f), axis=1).astype(np.int64)
    for f in ids:
        out[f] = _ids_at(seg, *span(f))
    for f in floats:
        values = _parse_numbers(seg, *span(f), np.float64)
        if values is None:
            return None
        out[f] = values
    for f in ints:
        values = _parse_numbers(seg, *span(f), np.int64)
        if values is None:
            return None
        out[f] = values
    return out


def gather_ids(source: bytes, spans: np.ndarray) -> Ids:
    """The ids at these [n, 2] (start, end) offsets of `source` (from `split_fields(..., spans=...)`)."""
    if not len(spans):
        return Ids(np.zeros((0, 1), dtype=np.uint64))
    return _ids_at(np.frombuffer(source, dtype=np.uint8), spans[:, 0], spans[:, 1])


def _ids_at(seg: np.ndarray, start: np.ndarray, end: np.ndarray) -> Ids:
    length = end - start
    width = -(-int(length.max()) // 8) * 8
    words = _fixed(seg, start, width).view(">u8").astype(np.uint64)  # [n, width / 8], the bytes big-endian
    words &= _word_masks(width)[np.minimum(length, width)]  # NULs past each id's end
    return Ids(words)


def _word_masks(width: int) -> np.ndarray:
    """[width + 1, width / 8] uint64: row L keeps the first L bytes of big-endian words, zeroes the rest."""
    kept = np.clip(np.arange(width + 1)[:, None] - 8 * np.arange(width // 8)[None, :], 0, 8)
    ones = np.uint64(0xFFFFFFFFFFFFFFFF)
    return np.where(kept == 0, np.uint64(0), ones << (np.uint64(8) * (8 - kept).astype(np.uint64)))


def _fixed(seg: np.ndarray, start: np.ndarray, width: int) -> np.ndarray:
    """[n, width] uint8: the `width` bytes of `seg` from each start (a start may lie before 0 or within width of
    the end: bytes outside `seg` are zero). One fancy index of overlapping `width`-byte items, no loop per byte."""
    out = np.zeros((len(start), width), dtype=np.uint8)
    inside = (start >= 0) & (start <= len(seg) - width)
    if inside.all():
        items = np.ndarray((len(seg) - width + 1,), dtype=np.dtype((np.void, width)), buffer=seg, strides=(1,))
        return items[start].view(np.uint8).reshape(len(start), width)
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
_PLACES = 19  # decimal places read as integers: 10**18 is the largest power of ten below 2**64 / 10
_POW10_INT = 10 ** np.arange(_PLACES, dtype=np.uint64)


def _parse_numbers(seg: np.ndarray, start: np.ndarray, end: np.ndarray, dtype) -> np.ndarray | None:
    """Decimal fields as float64 (correctly rounded, as strtod) or int64; None if one is not a finite number.

    Each field is taken right-aligned in a row of `width` bytes, so a column is a decimal place and the
    digits times their places (a dot's left side one place too high, taken out by a division) are the
    mantissa m as an integer. `[+-]digits[.digits]` with at most 15 digits is m / 10**f with both exact
    doubles, so one IEEE division gives the correctly rounded value. With 16 to 18 digits m is exact in
    x87's 64-bit mantissa: m / 10**f is rounded once there and once to a double, which is the correctly
    rounded value unless the first result lies exactly halfway between two doubles; those, and anything
    else, go through numpy's exact string conversion.
    """
    n = len(start)
    length = end - start
    width = -(-int(length.max()) // 8) * 8
    if width > 64:
        return _parse_text(seg, start, end, dtype, np.arange(n), np.zeros(n, dtype=dtype))
    matrix = _fixed(seg, end - width, width)
    matrix &= _byte_masks(width)[length].view(np.uint8).reshape(n, width)  # the bytes before the field (earlier fields) zeroed
    digits = matrix - np.uint8(48)  # bytes below '0' wrap around to large values
    is_digit = digits < 10
    digits *= is_digit
    # Which columns hold a digit, a dot: bits of one uint64 per row (column c is bit 63 - c). A clean field
    # is digits with at most one dot and a sign in front, and nothing else.
    digit_bits, dot_bits = _row_bits(is_digit), _row_bits(matrix == 46)
    first = matrix[np.arange(n), width - length]
    signed = (first == 43) | (first == 45)
    negative = first == 45
    shift = (64 - width + length).astype(np.uint64)  # bit of the field's first column, plus one
    ones = np.uint64(0xFFFFFFFFFFFFFFFF)
    region = np.where(shift >= 64, ones, (np.uint64(1) << np.minimum(shift, 63)) - np.uint64(1)) \
        & (ones << np.uint64(64 - width))
    sign_bit = np.where(signed, np.uint64(1) << (shift - np.uint64(1)), np.uint64(0))
    has_dot = dot_bits != 0
    clean = (digit_bits != 0) & ((digit_bits | dot_bits | sign_bit) == region) & ((dot_bits & (dot_bits - has_dot)) == 0)
    if dtype is np.int64:
        clean &= ~has_dot
    n_digits = length - has_dot - signed
    clean &= n_digits < _PLACES
    fraction = np.where(has_dot, np.frexp(dot_bits.astype(np.float64))[1] - 1 - 64 + width, 0)
    # a clean field's digits lie in the last 19 columns; a dot's left side counts ten times its value
    total = _decimal_value(digits)
    right = total % _POW10_INT[np.clip(fraction, 0, _PLACES - 1)]
    mantissa = np.where(has_dot, (total - right) // np.uint64(10) + right, total)
    simple = clean & (n_digits <= _SIMPLE_DIGITS)
    if dtype is np.int64:
        values = np.where(simple, mantissa, 0).astype(np.int64)
        values = np.where(negative, -values, values)
    else:
        values = np.where(simple, mantissa, 0).astype(np.float64) / _POW10[np.clip(fraction, 0, 22)]
        values = np.where(negative, -values, values)
    rest = np.flatnonzero(~simple)
    if len(rest) and dtype is not np.int64 and _LONG_DOUBLE:
        long = rest[clean[rest]]
        if len(long):
            exact = mantissa[long].astype(np.longdouble) / _POW10_LONG[fraction[long]]
            value = exact.astype(np.float64)
            off = np.abs(exact - value.astype(np.longdouble))
            step = np.spacing(np.abs(value)).astype(np.longdouble)
            # halfway between two doubles (a quarter below a power of two, where the step halves): rounded twice
            ok = (off != step / 2) & (off != step / 4)
            values[long[ok]] = np.where(negative[long[ok]], -value[ok], value[ok])
            rest = np.setdiff1d(rest, long[ok], assume_unique=True)
    if len(rest):
        parsed = _parse_text(seg, start, end, dtype, rest, values)
        if parsed is None:
            return None
        values = parsed
    if dtype is not np.int64 and not np.isfinite(values).all():
        return None
    return values


def _row_bits(flags: np.ndarray) -> np.ndarray:
    """[n, width <= 64] bool -> n uint64, column c as bit 63 - c: each 8 flag bytes of a little-endian word
    packed into a byte by one multiplication (bit i of the product's top byte is flag 7 - i)."""
    packed = (flags.view(np.uint8).view("<u8") * _PACK) >> np.uint64(56)
    out = np.zeros((len(flags), 8), dtype=np.uint8)
    out[:, : packed.shape[1]] = packed
    return out.view(">u8").ravel().astype(np.uint64)


def _decimal_value(digits: np.ndarray) -> np.ndarray:
    """[n, width] uint8 digits 0-9 -> n uint64: the last 24 columns read as one decimal number (wrapping
    past 2**64; a clean field's digits fill at most the last 19). Eight digits of a little-endian word at
    a time, by three multiplications (SWAR: pairs, then quads, then the eight)."""
    v = digits.view("<u8")[:, -3:] * np.uint64(2561) >> np.uint64(8)
    v = ((v & _LOW8) * np.uint64(6553601)) >> np.uint64(16)
    v = (((v & _LOW16) * np.uint64(42949672960001)) >> np.uint64(32)) & np.uint64(0xFFFFFFFF)
    total = v[:, 0].copy()
    for k in range(1, v.shape[1]):
        total *= np.uint64(100_000_000)
        total += v[:, k]
    return total


_PACK = np.uint64(0x8040201008040201)
_LOW8, _LOW16 = np.uint64(0x00FF00FF00FF00FF), np.uint64(0x0000FFFF0000FFFF)


_MASKS: dict[int, np.ndarray] = {}


def _byte_masks(width: int) -> np.ndarray:
    """[width + 1] items of `width` bytes: item L keeps the last L bytes (0xFF) and zeroes the others."""
    if width not in _MASKS:
        table = (np.arange(width)[None, :] >= width - np.arange(width + 1)[:, None]).astype(np.uint8) * np.uint8(255)
        _MASKS[width] = table.view(np.dtype((np.void, width))).ravel()
    return _MASKS[width]


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
