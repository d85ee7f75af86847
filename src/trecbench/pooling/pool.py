"""The pool: every candidate document per topic, the runs that retrieved it, its judging priority and duplicate group.

A `Pool` is a candidates DataFrame plus `PoolInfo` metadata (strategy, depth, budget, runs with their
sha256, parameters); it is written as a TSV file with a header and read back unchanged, and a workspace
stores it (`trecbench.pool_runs`).
"""
from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence, Union

import numpy as np
import pandas as pd

from trecbench.files.columns import Dictionary, Ids, same_ids, sort_order, stretch_starts, string_series
from trecbench.files.output import write_output
from trecbench.helpers.messages import some
from trecbench.errors import InputError, Problem
from trecbench.pooling.rank import RunInfo, RunLike, read_runs
from trecbench.pooling.strategies import get_strategy
from trecbench.pooling.strategies.base import (
    Candidates,
    StaticStrategy,
    Strategy,
    aggregate,
    grouped,
    judging_order,
    narrow,
)

POOL_FORMAT = "trecbench-pool/1"
COLUMNS = ["query_id", "doc_id", "priority", "best_rank", "n_runs", "runs", "ranks", "group", "representative"]
DEFAULT_DEPTH = 100


@dataclass(frozen=True)
class PoolInfo:
    """How a pool was made: enough to make it again and to check the runs are the same files."""

    strategy: str = "depth"
    depth: int | None = DEFAULT_DEPTH
    budget: int | None = None
    params: dict[str, Any] = field(default_factory=dict, hash=False)
    dedup: str = "none"
    threshold: float | None = None
    corpus: str | None = None
    topics: str | None = None
    runs: tuple[RunInfo, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        record = {k: getattr(self, k) for k in ("strategy", "depth", "budget", "params", "dedup", "threshold",
                                                   "corpus", "topics")}
        record["runs"] = [r.as_dict() for r in self.runs]
        return record

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> "PoolInfo":
        runs = tuple(RunInfo(**r) for r in record.get("runs", []))
        known = {k: record[k] for k in ("strategy", "depth", "budget", "params", "dedup", "threshold", "corpus",
                                         "topics") if k in record}
        return cls(runs=runs, **known)


@dataclass(eq=False)
class Pool:
    """Candidates to judge, one row per (query_id, doc_id), in judging order, and how they were pooled.

    Columns: query_id, doc_id, priority (1 = judge first, per topic), best_rank (best rank in any run),
    n_runs, runs (names joined by ';', best rank first), ranks (each of those runs' rank, joined by ';'),
    group (docid of the group's representative; its own docid when it has no duplicate) and
    representative (the one document of its group that is judged).
    """

    candidates: pd.DataFrame
    info: PoolInfo = field(default_factory=PoolInfo)
    problems: list[Problem] = field(default_factory=list)
    _rows: Any = field(default=None, repr=False, compare=False)  # (candidates, topic -> row positions) cache

    def __len__(self) -> int:
        return len(self.candidates)

    @property
    def topics(self) -> list[str]:
        return list(pd.unique(self.candidates["query_id"]))

    @property
    def judgments_saved(self) -> int:
        """Candidates that need no judgment of their own: their duplicate group's representative's is theirs."""
        return int((~self.candidates["representative"]).sum())

    def to_judge(self) -> pd.DataFrame:
        """The representatives, in judging order: what a judge (model or person) is given."""
        return self.candidates[self.candidates["representative"]].reset_index(drop=True)

    def ranked_lists(self, topic: str) -> dict[str, list[str]]:
        """Each run's pooled docids for one topic, in the run's (trec_eval) order: what adaptive strategies walk."""
        if self._rows is None or self._rows[0] is not self.candidates:
            by_topic = self.candidates.groupby("query_id", sort=False).indices
            self._rows = (self.candidates, by_topic)
        at = self._rows[1].get(topic)
        rows = self.candidates.iloc[at if at is not None else []]
        if rows.empty:
            return {r.name: [] for r in self.info.runs}
        runs = rows["runs"].str.split(";").explode()
        ranks = rows["ranks"].str.split(";").explode()
        frame = pd.DataFrame({"run": runs.to_numpy(), "rank": ranks.to_numpy(dtype=object).astype(np.int64),
                              "doc_id": rows["doc_id"].to_numpy(dtype=object)[np.repeat(np.arange(len(rows)),
                                                                                      rows["n_runs"].to_numpy())]})
        frame = frame.sort_values(["run", "rank"], kind="stable")
        lists: dict[str, list[str]] = {r.name: [] for r in self.info.runs}
        for run, docs in frame.groupby("run", sort=False)["doc_id"]:
            lists.setdefault(str(run), []).extend(docs.tolist())
        return lists

    def group_of(self) -> dict[tuple[str, str], str]:
        """(query_id, doc_id) -> docid of its group's representative, for candidates that have duplicates."""
        dup = self.candidates[self.candidates["group"] != self.candidates["doc_id"]]
        return dict(zip(zip(dup["query_id"], dup["doc_id"]), dup["group"]))

    def summary(self) -> str:
        """One line on the pool (and one on de-duplication): what `trecbench pool` prints."""
        c, info = self.candidates, self.info
        topics = c["query_id"].nunique()
        runs = len(info.runs)
        line = (f"pool: {len(c)} candidates over {topics} topic{'s' * (topics != 1)} from {runs} run{'s' * (runs != 1)}"
                f" ({info.strategy}, depth {info.depth}{f', budget {info.budget}' if info.budget else ''})")
        if info.dedup != "none":
            saved = self.judgments_saved
            share = saved / len(c) if len(c) else 0.0
            line += (f"\nde-duplication ({info.dedup}): {len(c) - saved} to judge; judgments saved: {saved} "
                     f"({share:.1%})")
        return line

    def session(self, strategy: str | Strategy | None = None, *, budget: int | None = None):
        """A judging loop over this pool (`next()` / `record()`), by the pool's strategy unless another is given."""
        from trecbench.pooling.session import JudgingSession

        if strategy is None:
            strategy = get_strategy(self.info.strategy, **self.info.params)
        elif isinstance(strategy, str):
            strategy = get_strategy(strategy)
        return JudgingSession(self, strategy, budget=self.info.budget if budget is None else budget)

    def write(self, path: Union[str, "os.PathLike[str]", io.TextIOBase]) -> None:
        write_pool(self, path)


def build_pool(
    runs: RunLike | Iterable[RunLike] | Mapping[str, RunLike],
    *,
    depth: int | None = DEFAULT_DEPTH,
    strategy: str | Strategy = "depth",
    budget: int | None = None,
    topics: Sequence[str] | None = None,
    topics_source: str | None = None,
    corpus: Any = None,
    dedup: str = "none",
    threshold: float = 0.9,
) -> Pool:
    """Pool runs: each run's top `depth` documents per topic (trec_eval order), one candidate per docid.

    runs: run paths or DataFrames (query_id, doc_id, score), a list of them or a {name: run} mapping.
    strategy: a name (`depth`, `rrf`, `rbp`, `mtf`, `maxmean`) or a strategy object; static strategies
        order candidates by their fused score, adaptive ones start from depth order (they choose during judging).
    budget: judgments per topic; static strategies keep the first `budget` representatives (and their
        duplicates), adaptive ones stop judging after `budget` (the pool keeps every candidate).
    topics: if given, only these topics are pooled; run topics not among them are reported in `problems`.
    corpus: a `trecbench.corpus.Corpus` or its source, needed by `dedup` "exact" or "near".
    dedup: "none", "exact" (identical normalised text) or "near" (word 5-shingle Jaccard >= threshold).
    Raises InputError for unreadable runs; problems that do not stop pooling are in `pool.problems`. A run
    file's docids are read only on the lines that can make its top `depth`, so a docid listed twice in a
    topic is an error there and not below the depth (`trecbench runs validate` checks whole files).
    """
    if depth is not None and depth < 1:
        raise ValueError(f"depth must be positive, not {depth}")
    if budget is not None and budget < 1:
        raise ValueError(f"budget must be positive, not {budget}")
    from trecbench.pooling.dedup import DEDUP_MODES

    if dedup not in DEDUP_MODES:
        raise ValueError(f"dedup must be none, exact or near, not {dedup!r}")
    if dedup != "none" and corpus is None:
        raise ValueError(f"dedup {dedup!r} needs the documents' text: give a corpus")
    if isinstance(strategy, str):
        strategy = get_strategy(strategy)
    infos, cuts, problems = read_runs(runs, depth)
    qids = Ids.concat([c.query_id for c in cuts])
    docs = Ids.concat([c.doc_id for c in cuts])
    rank = np.concatenate([c.rank for c in cuts]).astype(np.int64) if cuts else np.empty(0, dtype=np.int64)
    run = np.repeat(np.arange(len(cuts), dtype=np.int64), [len(c) for c in cuts])
    del cuts  # the concatenated columns replace them
    # Topics in string order (trec_eval's; strcmp of UTF-8 is Python's order of str), a code per topic; each
    # run's cut lists a topic's rows together, so the dictionary is built from the stretches.
    starts = stretch_starts(qids) if len(qids) else np.zeros(0, dtype=np.int64)
    topic_names, codes = Dictionary.build(qids.take(starts))
    qcode = np.repeat(codes, np.diff(np.append(starts, len(qids))))
    quniq = np.asarray(topic_names.ids.strings(), dtype=object)
    del qids
    if topics is not None:
        keep, more = _only_topics(qcode, quniq, run, list(topics), infos, topics_source)
        problems += more
        qcode, docs, rank, run = qcode[keep], docs.take(keep), rank[keep], run[keep]
    cands = _candidates(qcode, docs, run, rank)
    topic = qcode[cands.first]
    fused = strategy.fused(rank[cands.row_order], cands.row_candidate, len(cands.first)) \
        if isinstance(strategy, StaticStrategy) else None
    order = judging_order(topic, fused, cands)
    names = [r.name for r in infos]
    frame = pd.DataFrame({
        "query_id": np.asarray(quniq, dtype=object)[topic[order]],
        "doc_id": _strings(docs.take(cands.first[order]).strings()),
        "priority": _positions(topic[order]) + 1,
        "best_rank": cands.best_rank[order],
        "n_runs": cands.n_runs[order],
        "runs": _strings(_joined(cands, order, run, names)),
        "ranks": _strings(_joined(cands, order, rank, [str(i) for i in range(int(rank.max()) + 1 if len(rank) else 1)])),
    })
    frame["group"] = frame["doc_id"]
    frame["representative"] = True
    info = PoolInfo(strategy=strategy.name, depth=depth, budget=budget, params=strategy.params(), dedup=dedup,
                    threshold=threshold if dedup == "near" else None, topics=topics_source, runs=tuple(infos),
                    corpus=getattr(corpus, "source", corpus) if corpus is not None else None)
    pool = Pool(frame, info, problems)
    if dedup != "none":
        from trecbench.pooling.dedup import dedup_pool

        pool = dedup_pool(pool, corpus, mode=dedup, threshold=threshold)
    if budget is not None and not strategy.adaptive:
        pool = _cut(pool, budget)
    return pool


_MIX = np.uint64(0x9E3779B97F4A7C15)  # an odd constant: key * _MIX's top bits hash a docid's key (Fibonacci hashing)


def _candidates(qcode: np.ndarray, docs: Ids, run: np.ndarray, rank: np.ndarray) -> Candidates:
    """A candidate per (topic, docid), its rows in (rank, run) order; candidates by topic, in no set order within one
    (the judging order never looks at it: a run has one row per rank in a topic, so (best rank, first run) is a
    candidate's alone).

    One sort of 64-bit values (numpy sorts values, not argsort, by vectorised quicksort): each row's word holds its
    topic code, a hash of its docid and its position in (rank, run) order, so equal words mean equal topic and hash,
    and the position orders a candidate's rows. Rows whose hash is equal but whose docids are not (checked) send
    the pool, or one too wide for a word, to the exact sort by (topic, docid, rank, run) (`aggregate`)."""
    n = len(rank)
    row_bits = max(1, (n - 1).bit_length())
    hash_bits = 64 - row_bits - (int(qcode.max()).bit_length() if n else 0)
    if n and hash_bits >= 24:
        by_rank = np.lexsort((narrow(run), narrow(rank)))
        topic_hash = qcode.astype(np.uint64) << np.uint64(hash_bits) | (docs.key * _MIX) >> np.uint64(64 - hash_bits)
        word = topic_hash[by_rank] << np.uint64(row_bits) | np.arange(n, dtype=np.uint64)
        word.sort()
        order = by_rank[(word & np.uint64((1 << row_bits) - 1)).astype(np.int64)]
        word >>= np.uint64(row_bits)
        new = np.r_[True, word[1:] != word[:-1]]
        del word
        firsts = order[np.flatnonzero(new)]
        if same_ids(docs.take(order), docs.take(np.repeat(firsts, np.diff(np.r_[np.flatnonzero(new), n])))).all():
            return grouped(order, new, run, rank)
    return aggregate([*sort_order(docs), qcode], run, rank)


def _only_topics(qcode: np.ndarray, quniq: np.ndarray, run: np.ndarray, topics: list[str], infos: list[RunInfo],
                 source: str | None) -> tuple[np.ndarray, list[Problem]]:
    """Which rows (of topic codes `qcode` into the names `quniq`) are of the given topics; each run's topics
    that are not among them, reported."""
    wanted = list(dict.fromkeys(str(t) for t in topics))
    wanted_set = set(wanted)
    known = np.array([name in wanted_set for name in quniq.tolist()], dtype=bool)
    keep = known[qcode] if len(qcode) else np.zeros(0, dtype=bool)
    problems = []
    where = source or "topics"
    for i, info in enumerate(infos):
        absent = quniq[np.unique(qcode[(run == i) & ~keep])].tolist()
        if absent:
            problems.append(Problem(info.path or info.name, 0, f"{len(absent)} topic(s) not in {where}, not pooled: "
                                                                f"{some(sorted(map(str, absent)))}"))
    pooled = set(quniq[np.unique(qcode[keep])].tolist())
    unpooled = sorted(set(wanted) - pooled)
    if unpooled:
        problems.append(Problem(where, 0, f"{len(unpooled)} topic(s) retrieved by no run, nothing to pool: "
                                          f"{some(unpooled)}"))
    return keep, problems


def _strings(values: list[str]) -> pd.Series:
    """Python str as a column of pandas' string dtype (object when empty, as pandas gives an empty column)."""
    return string_series(values) if len(values) else pd.Series([], dtype=object)


def _positions(sorted_codes: np.ndarray) -> np.ndarray:
    """0-based position of each element within its stretch of equal values."""
    if not len(sorted_codes):
        return np.empty(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    counts = np.diff(np.r_[starts, len(sorted_codes)])
    return np.arange(len(sorted_codes)) - np.repeat(starts, counts)


_JOIN_BYTES = 1 << 23  # bytes of texts joined at a time: the temporaries stay a few MB


def _joined(cands, order: np.ndarray, value: np.ndarray, texts: list[str]) -> list[str]:
    """Per candidate (in `order`), the texts of its rows' values (`texts[value]`: a run's name or a rank's digits)
    joined by ';', best rank first. Built from bytes: a table holds each text with its ';' (and again with a newline
    instead, for a candidate's last row) in rows of one width, NUL padded; every row's entry is gathered at once,
    the padding dropped, then one decode and one split (no Python call per candidate)."""
    if not len(order):
        return []
    encoded = [t.encode("utf-8") for t in texts]
    width = max(len(e) for e in encoded) + 1
    table = np.frombuffer(b"".join(e + end + bytes(width - len(e) - 1) for end in (b";", b"\n") for e in encoded),
                          dtype=np.uint8).reshape(2 * len(texts), width)
    length = np.array([len(e) + 1 for e in encoded], dtype=np.int64)
    # each row's entry of the table, in row_order (its candidate's rows together, best rank first): a small array
    entry = narrow(value)[cands.row_order].astype(np.int64)
    entry[np.cumsum(cands.n_runs) - 1] += len(texts)  # each candidate's last row ends its line
    counts = cands.n_runs[order]
    starts = np.r_[0, np.cumsum(cands.n_runs)[:-1]][order]  # where each candidate's rows start in row_order
    ends = np.cumsum(counts)
    part = max(1, _JOIN_BYTES // width)  # rows at a time: a part's rows of the table take about _JOIN_BYTES
    cuts = np.unique(np.r_[0, np.searchsorted(ends, np.arange(part, ends[-1], part), side="right"), len(ends)])
    nul = any(b"\0" in e for e in encoded)
    out: list[str] = []
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        first = ends[lo - 1] if lo else 0
        n = counts[lo:hi]
        rows = entry[np.repeat(starts[lo:hi] - (ends[lo:hi] - n - first), n) + np.arange(ends[hi - 1] - first)]
        text = table[rows]
        kept = (np.arange(width) < length[rows % len(texts)][:, None]) if nul else text != 0
        out += text[kept].tobytes().decode("utf-8").split("\n")[:-1]
    return out


def _cut(pool: Pool, budget: int) -> Pool:
    """Keep, per topic, the first `budget` representatives in judging order and their duplicates."""
    c = pool.candidates
    nth = c.groupby("query_id", sort=False)["representative"].cumsum()
    rep_nth = pd.Series(nth.to_numpy(), index=pd.MultiIndex.from_arrays([c["query_id"], c["doc_id"]]))
    group_nth = rep_nth.reindex(pd.MultiIndex.from_arrays([c["query_id"], c["group"]])).to_numpy()
    kept = c[group_nth <= budget].copy()
    kept["priority"] = kept.groupby("query_id", sort=False).cumcount().to_numpy() + 1
    return replace(pool, candidates=kept.reset_index(drop=True))


# --- the pool file -------------------------------------------------------------------------------


def write_pool(pool: Pool, path: Union[str, "os.PathLike[str]", io.TextIOBase]) -> None:
    """Write the pool as TSV: a `#trecbench-pool/1 {json metadata}` line, a header line, one line per candidate."""
    c = pool.candidates
    head = f"#{POOL_FORMAT} {json.dumps(pool.info.as_dict(), ensure_ascii=False, sort_keys=True)}\n"
    text = _plain_lines(c)
    if text is None:
        body = io.StringIO()
        frame = c[COLUMNS].copy()
        frame["representative"] = np.where(frame["representative"].to_numpy(dtype=bool), "1", "0")
        frame.to_csv(body, sep="\t", index=False, lineterminator="\n")
        text = body.getvalue()
    text = head + text
    if hasattr(path, "write"):
        path.write(text)
        return
    write_output(path, text)


def _plain_lines(c: pd.DataFrame) -> str | None:
    """The header and candidate lines as pandas' `to_csv` writes them (tabs, quotes only where needed), joined
    directly (half its CPU on 569,039 candidates); None when a field would need quoting or is missing (`to_csv`
    writes those)."""
    if not len(c) or any(c[name].dtype.kind not in "iu" for name in ("priority", "best_rank", "n_runs")):
        return None
    columns = [c[name].tolist() if name not in ("priority", "best_rank", "n_runs") else list(map(str, c[name].tolist()))
               for name in COLUMNS[:-1]]
    columns.append(np.where(c["representative"].to_numpy(dtype=bool), "1", "0").tolist())
    try:
        body = "\n".join(map("\t".join, zip(*columns)))
    except TypeError:  # a missing value (NaN, None): not a str
        return None
    if '"' in body or "\r" in body or body.count("\t") != (len(COLUMNS) - 1) * len(c) or body.count("\n") != len(c) - 1:
        return None  # a tab, newline, CR or quote inside a field: quoted by to_csv
    return "\t".join(COLUMNS) + "\n" + body + "\n"


def read_pool(path: Union[str, "os.PathLike[str]"]) -> Pool:
    """Read a pool file written by `write_pool`; InputError with `path:line: message` for anything wrong."""
    where = str(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError(where, 0, f"cannot read: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(where, data[: e.start].count(b"\n") + 1, "invalid UTF-8") from None
    lines = text.split("\n")
    if not lines or not lines[0].startswith(f"#{POOL_FORMAT} "):
        raise InputError(where, 1, f"not a pool file: the first line must be `#{POOL_FORMAT} {{metadata}}`")
    try:
        info = PoolInfo.from_dict(json.loads(lines[0][len(POOL_FORMAT) + 2:]))
    except (ValueError, TypeError) as e:
        raise InputError(where, 1, f"bad pool metadata: {e}") from None
    if len(lines) < 2 or lines[1].rstrip("\r").split("\t") != COLUMNS:
        raise InputError(where, 2, f"expected the header line: {' '.join(COLUMNS)}")
    problems: list[Problem] = []
    rows: list[list[str]] = []
    for number, raw in enumerate(lines[2:], start=3):
        line = raw.rstrip("\r")
        if not line:
            continue
        cells = line.split("\t")
        if len(cells) != len(COLUMNS):
            problems.append(Problem(where, number, f"{len(cells)} fields, expected {len(COLUMNS)}: {' '.join(COLUMNS)}"))
            continue
        bad = [name for name, value in zip(("priority", "best_rank", "n_runs"), cells[2:5]) if not value.isdigit()]
        if bad:
            problems.append(Problem(where, number, f"{', '.join(bad)} must be a positive integer"))
            continue
        if cells[8] not in ("0", "1"):
            problems.append(Problem(where, number, f"representative must be 0 or 1, not {cells[8]!r}"))
            continue
        if len(cells[5].split(";")) != int(cells[4]) or len(cells[6].split(";")) != int(cells[4]):
            problems.append(Problem(where, number, "runs and ranks must each list n_runs entries"))
            continue
        rows.append(cells)
        if len(problems) > 100:
            break
    if problems:
        raise InputError.of(problems)
    arr = np.array(rows, dtype=object).reshape(-1, len(COLUMNS))
    frame = pd.DataFrame({
        "query_id": arr[:, 0], "doc_id": arr[:, 1],
        "priority": arr[:, 2].astype(np.int64), "best_rank": arr[:, 3].astype(np.int64),
        "n_runs": arr[:, 4].astype(np.int64), "runs": arr[:, 5], "ranks": arr[:, 6], "group": arr[:, 7],
        "representative": arr[:, 8] == "1",
    })
    return Pool(frame, info)
