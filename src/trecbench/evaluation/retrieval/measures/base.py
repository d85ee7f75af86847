"""The measure registry: each trec_eval measure family is one small registered object.

A family (`P`, `ndcg_cut`, `map` ...) knows its parameters, the names it prints (`P_10`), how it
is summarised over topics (mean, sum, geometric mean) and how to compute per-topic values from
`Rankings`. Computation mirrors trec_eval's own order of floating-point operations, so the
printed digits match it exactly.
"""
from __future__ import annotations

import math
import re
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Mapping, NamedTuple, Sequence

import numpy as np

from trecbench.evaluation.retrieval.rankings import PAD, Rankings

if TYPE_CHECKING:
    import numpy.typing as npt

# How a family's per-topic values become the `all` row.
MEAN, SUM, GEOMETRIC, NONE, RUNID, NUM_Q = "mean", "sum", "gm", "none", "runid", "num_q"
# How values print: %6.4f doubles, %ld counts, quoted strings.
DOUBLE, LONG, STRING = "double", "long", "string"

MIN_GEO_MEAN = 0.00001


class Output(NamedTuple):
    """One printed measure of a family (e.g. `P_10` of `P`) and its per-topic values."""

    name: str
    values: np.ndarray
    kind: str = DOUBLE


class Family(NamedTuple):
    """A trec_eval measure family. `params` is parsed from the text after the first dot."""

    name: str
    doc: str
    compute: Callable[["Derived", Any], list[Output]]  # the second argument is what `parse` returns
    parse: Callable[[str | None], object]
    summary: str = MEAN
    kind: str = DOUBLE
    per_topic: bool = True
    versions: tuple[int, ...] = (9, 10)

    def outputs(self, d: "Derived", raw_params: str | None) -> list[Output]:
        return self.compute(d, self.parse(raw_params))


REGISTRY: dict[str, Family] = {}
# trec_eval prints measures in the order of its measure table, not the order asked for.
TABLE_ORDER: list[str] = []


def register(family: Family) -> Family:
    REGISTRY[family.name] = family
    return family


# ---- parameter parsers (trec_eval's meas_init conventions) ----

_C_INT = re.compile(r"[ \t]*[+-]?[0-9]+(?:\.[0-9]*)?")
_C_FLOAT = re.compile(r"[ \t]*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def c_atol(text: str) -> int:
    """An integer parameter as trec_eval reads it (C's atol: `23.4` is 23); ValueError where atol would
    stop early and read another number than written (`1e2` is 1 to trec_eval) or read nothing ('' is 0)."""
    if not _C_INT.fullmatch(text):
        raise ValueError(f"{text!r} is not an integer")
    return int(text.strip().split(".")[0])


def c_atof(text: str) -> float:
    """A decimal parameter (C's atof on a plain number); ValueError for anything else (`inf`, `1_0`, '')."""
    if not _C_FLOAT.fullmatch(text):
        raise ValueError(f"{text!r} is not a number")
    return float(text)


def _no_duplicates(values: list, raw: str) -> None:
    if len(set(values)) != len(values):
        raise ValueError(f"duplicate cutoffs in {raw!r} (trec_eval refuses them)")


def long_cutoffs(default: Sequence[int]) -> Callable[[str | None], tuple[int, ...]]:
    """Comma-separated positive cutoffs, sorted (`P.5,7,3` -> 3,5,7); duplicates refused, as trec_eval does."""

    def parse(raw: str | None) -> tuple[int, ...]:
        if not raw:
            return tuple(default)
        values = sorted(c_atol(v) for v in raw.split(","))
        if values[0] <= 0:
            raise ValueError(f"cutoffs must be positive integers: {raw!r}")
        _no_duplicates(values, raw)
        return tuple(values)

    return parse


def double_cutoffs(default: Sequence[float]) -> Callable[[str | None], tuple[float, ...]]:
    def parse(raw: str | None) -> tuple[float, ...]:
        if not raw:
            return tuple(default)
        values = sorted(c_atof(v) for v in raw.split(","))
        _no_duplicates(values, raw)
        return tuple(values)

    return parse


class RawParams(NamedTuple):
    """Parameters printed verbatim in the measure name (`ndcg_1=3,2=9`, `utility_2,-1,0,0`)."""

    raw: str | None
    values: tuple = ()
    pairs: Mapping[str, float] = MappingProxyType({})  # read-only, so one empty mapping serves every instance

    def suffix(self, base: str) -> str:
        return base if not self.raw else f"{base}_{self.raw}"


def pairs_params(raw: str | None) -> RawParams:
    pairs: dict[str, float] = {}
    if raw:
        for item in raw.split(","):
            key, _, value = item.partition("=")
            if not _:
                raise ValueError(f"expected name=value pairs: {raw!r}")
            pairs[key] = c_atof(value)
    return RawParams(raw, (), pairs)


def doubles_params(default: Sequence[float]) -> Callable[[str | None], RawParams]:
    def parse(raw: str | None) -> RawParams:
        if not raw:
            return RawParams(None, tuple(default))
        return RawParams(raw, tuple(c_atof(v) for v in raw.split(",")))  # as given, as trec_eval keeps them

    return parse


def no_params(raw: str | None) -> None:
    """A family without parameters; trec_eval ignores any given (the caller says so)."""
    return None


# ---- per-run derived arrays shared by the families ----

_LOG2 = [np.zeros(0)]  # the table so far, read-only; replaced whole when a longer one is needed


def log2_table(n: int) -> np.ndarray:
    """log2(0..n) from the C library (math.log2), as trec_eval computes its discounts (read-only). A longer
    table is built whole and then swapped in, so threads scoring runs side by side never see half of one."""
    if len(_LOG2[0]) < n + 1:
        size = max(n + 1, 2 * len(_LOG2[0]))
        table = np.array([-math.inf] + [math.log2(i) for i in range(1, size)], dtype=np.float64)
        table.flags.writeable = False
        _LOG2[0] = table
    return _LOG2[0][: n + 1]


class Derived:
    """Arrays several measures need, computed once per run and cached."""

    def __init__(self, r: Rankings, version: int = 9):
        self.r = r
        self.level = r.rel_level
        self.version = version  # the trec_eval version whose semantics apply (9 or 10)

    @cached_property
    def rel(self) -> np.ndarray:
        return self.r.rel

    @cached_property
    def isrel(self) -> np.ndarray:
        """Relevant as trec_eval's measures test the ranked list: value >= -l. Under a negative -l that takes
        in documents the qrels do not list (NONPOOL, -1) or list unjudged (UNJUDGED, -2); never the padding."""
        if self.level <= PAD:
            return (self.rel >= self.level) & (self.rel != PAD)
        return self.rel >= self.level

    @cached_property
    def judged_rel(self) -> np.ndarray:
        """Relevant and judged (grade >= 0 and >= -l): what trec_eval counts in num_rel_ret, bpref and infAP.
        The same as `isrel` unless -l is negative."""
        return self.isrel & (self.rel >= 0) if self.level < 0 else self.isrel

    @cached_property
    def relcum(self) -> np.ndarray:
        """relevant retrieved at or above each rank."""
        return np.cumsum(self.isrel, axis=1, dtype=np.int64)

    @cached_property
    def ranks(self) -> np.ndarray:
        return np.arange(1, self.r.depth + 1, dtype=np.float64)

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        """Judged relevant documents retrieved (trec_eval's form_res_rels count; see `judged_rel`)."""
        if self.r.depth == 0:
            return np.zeros(len(self.r.qids), dtype=np.int64)
        if self.level < 0:
            return self.judged_rel.sum(axis=1, dtype=np.int64)
        return self.relcum[:, -1]

    @cached_property
    def num_ret(self) -> np.ndarray:
        return self.r.num_ret

    @cached_property
    def num_rel(self) -> np.ndarray:
        return self.r.num_rel

    @cached_property
    def num_nonrel(self) -> np.ndarray:
        return self.r.num_nonrel

    @cached_property
    def precision(self) -> np.ndarray:
        """precision at every rank: relcum / rank."""
        return self.relcum / self.ranks

    def at(self, matrix: np.ndarray, k: int | np.ndarray) -> np.ndarray:
        """matrix[:, k-1] with k clipped to the depth; rows for k <= 0 give 0."""
        n = len(self.r.qids)
        if self.r.depth == 0:
            return np.zeros(n, dtype=matrix.dtype)
        if isinstance(k, int):  # one cutoff for every topic (P_10, recall_100 ...): one column
            return matrix[:, min(k, self.r.depth) - 1].copy() if k > 0 else np.zeros(n, dtype=matrix.dtype)
        k = np.broadcast_to(np.asarray(k, dtype=np.int64), (n,))
        col = np.clip(k, 1, self.r.depth) - 1
        out = matrix[np.arange(n), col]
        return np.where(k > 0, out, 0)

    def gains(self, pairs: Mapping[str, float] | None = None) -> "Gains":
        key = tuple(sorted((pairs or {}).items()))
        cache = self.__dict__.setdefault("_gains", {})
        if key not in cache:
            cache[key] = Gains(self, pairs or {})
        return cache[key]


def safe_divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den where den != 0, else 0 (trec_eval leaves the value at its initial 0)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def divide_once_found(num: np.ndarray, den: np.ndarray, found: npt.ArrayLike) -> np.ndarray:
    """num / den where `found` (a relevant document was seen), else 0: trec_eval then divides whatever den is,
    so under a negative -l a topic without relevant judgments gives C's x / 0 (inf)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        quotient = np.asarray(num, dtype=np.float64) / np.asarray(den, dtype=np.float64)
    return np.where(found, quotient, 0.0)


def row_sums(values: np.ndarray) -> np.ndarray:
    """Sum each row left to right (sequentially, as a C loop does), not pairwise."""
    if values.shape[1] == 0:
        return np.zeros(values.shape[0], dtype=np.float64)
    return np.cumsum(values, axis=1)[:, -1]


def discounted(gains: np.ndarray) -> np.ndarray:
    """Running DCG: gain / log2(rank + 1), summed left to right as trec_eval's loops add."""
    if gains.shape[1] == 0:
        return np.zeros((gains.shape[0], 0))
    disc = log2_table(gains.shape[1] + 1)[2:]
    contrib = np.where(gains != 0, gains / disc, 0.0)
    return np.cumsum(contrib, axis=1)


def stretched(running: np.ndarray, width: int) -> np.ndarray:
    """A running sum (DCG, counts) carried on to `width` columns: past its last rank it stays the same,
    as summing zero gains would leave it."""
    if running.shape[1] >= width:
        return running
    out = np.empty((running.shape[0], width), dtype=running.dtype)
    out[:, : running.shape[1]] = running
    out[:, running.shape[1]:] = running[:, -1:] if running.shape[1] else 0
    return out


def sums_at(mask: np.ndarray, values: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Each row's sum, left to right, of `values(rows, cols)` at the cells of `mask` (0 elsewhere): the terms
    are computed only where a measure adds one (relevant documents are few) and summed as `row_sums` does,
    each row's terms moved to its front (the zeros between them would leave each partial sum as it is)."""
    rows, cols = np.nonzero(mask)
    counts = np.bincount(rows, minlength=mask.shape[0])
    terms = np.zeros((mask.shape[0], int(counts.max()) if len(counts) else 0), dtype=np.float64)
    terms[rows, np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts)] = values(rows, cols)
    return row_sums(terms)


class Gains:
    """trec_eval's gain table: gain per grade (default: the grade), ideal gain per rank."""

    def __init__(self, d: Derived, pairs: Mapping[str, float]):
        levels = d.r.rel_levels  # [topic, grade] counts
        n_levels = levels.shape[1]
        explicit = {int(k): float(v) for k, v in pairs.items() if _is_int(k)}
        top = max([n_levels - 1, *explicit]) if explicit else n_levels - 1
        table = np.arange(top + 1, dtype=np.float64)
        for level, gain in explicit.items():
            if level >= 0:
                table[level] = gain
        self.table = table
        self.explicit = explicit
        # the gain of each value in the rankings, from PAD (-3) up: 0 for PAD, NONPOOL and UNJUDGED
        of_value = np.concatenate((np.zeros(-PAD), table))
        self.results = of_value[d.rel - PAD]  # [topic, rank] gain of each retrieved document
        self.ideal = self._ideal(levels, table)

    @cached_property
    def dcg(self) -> np.ndarray:
        """[topic, rank] DCG of the results down to each rank (shared by the nDCG families)."""
        return discounted(self.results)

    @cached_property
    def ideal_dcg(self) -> np.ndarray:
        """[topic, rank] DCG of the ideal ranking down to each rank."""
        return discounted(self.ideal)

    @staticmethod
    def _ideal(levels: np.ndarray, table: np.ndarray) -> np.ndarray:
        """[topic, rank] gains of the ideal ranking: judged documents by gain, while gain > 0."""
        n_topics, n_levels = levels.shape
        gain_of = table[:n_levels]
        # grades ordered by gain descending (stable on grade for equal gains)
        order = np.argsort(-gain_of, kind="stable")
        positive = order[gain_of[order] > 0]
        counts = levels[:, positive]  # [topic, positive grade]
        lengths = counts.sum(axis=1)
        width = int(lengths.max()) if n_topics and len(positive) else 0
        ideal = np.zeros((n_topics, width), dtype=np.float64)
        # each topic's positive grades in that order, each as often as the topic has it
        values = np.repeat(np.tile(gain_of[positive], n_topics), counts.ravel())
        rows = np.repeat(np.arange(n_topics), lengths)
        ideal[rows, np.arange(len(values)) - np.repeat(np.cumsum(lengths) - lengths, lengths)] = values
        return ideal


def _is_int(text: str) -> bool:
    t = text[1:] if text[:1] in "+-" else text
    return t.isdigit()


def pad_to(matrix: np.ndarray, width: int) -> np.ndarray:
    if matrix.shape[1] >= width:
        return matrix
    out = np.zeros((matrix.shape[0], width), dtype=matrix.dtype)
    out[:, : matrix.shape[1]] = matrix
    return out


__all__ = [
    "PAD", "Derived", "Family", "Output", "REGISTRY", "TABLE_ORDER", "register", "safe_divide", "divide_once_found",
    "row_sums", "long_cutoffs", "double_cutoffs", "pairs_params", "doubles_params", "no_params",
    "RawParams", "c_atol", "c_atof", "MEAN", "SUM", "GEOMETRIC", "NONE", "RUNID", "NUM_Q", "DOUBLE", "LONG", "STRING",
    "MIN_GEO_MEAN", "log2_table", "pad_to", "discounted", "stretched", "sums_at",
]
