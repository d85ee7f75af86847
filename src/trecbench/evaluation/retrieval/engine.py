"""Score one run against qrels with trec_eval's semantics: topics, depth, relevance level, `-c`, versions."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trecbench.files.columns import Ids

from .measures import REGISTRY, TABLE_ORDER, Derived, Family, Output
from .measures.base import DOUBLE, GEOMETRIC, LONG, MEAN, MIN_GEO_MEAN, NONE, NUM_Q, RUNID, STRING, SUM
from .rankings import (
    NONPOOL,
    PAD,
    SLICE_LINES,
    QrelsTable,
    Rankings,
    form_rankings,
    qrels_table,
    run_columns,
    topic_slices,
)


@dataclass(frozen=True)
class Request:
    """One measure family to compute: trec_eval family, its raw parameter text, and relevance level."""

    family: str
    raw: str | None = None
    rel_level: int | None = None  # None: the run-wide level (-l)
    label: str | None = None  # name to report it by (an ir-measures name); None: trec_eval's names
    extra: str | None = None  # measures trec_eval lacks (Judged, RR@k), computed by `extras`


@dataclass
class Score:
    """One printed measure: per-topic values (aligned with RunScores.topics) and the `all` value."""

    name: str  # trec_eval's printed name (`ndcg_cut_10`)
    kind: str
    values: np.ndarray | None
    summary: object
    per_topic: bool = True
    in_summary: bool = True
    family: str = ""
    label: str = ""  # the name the user asked for (`nDCG@10`); trec_eval's name if they used it
    order: int = 0  # position of its request among those asked for (tables keep the user's order)


@dataclass
class RunScores:
    runid: str
    topics: list[str]  # evaluated topics in trec_eval order, missing ones included under -c
    missing: list[str]  # topics of the qrels absent from the run (scored 0 under -c)
    scores: list[Score] = field(default_factory=list)
    unjudged: list[str] = field(default_factory=list)  # topics of the run the qrels do not judge (not scored)
    judged: Score | None = None  # Judged@k kept aside for the coverage check (`retrieval.low_judged`)
    name: str | None = None  # the name tables show (see `shown`); set by `score_runs`
    path: str | None = None  # the run file, when read from one

    @property
    def shown(self) -> str:
        """The run's name in tables: its given name, else its runid."""
        return self.name or self.runid

    def by_name(self) -> dict[str, Score]:
        return {s.name: s for s in self.scores}


def _summarise(family: Family, values: np.ndarray, kind: str, n_topics: int) -> object:
    if family.summary == SUM or kind == LONG:
        return int(np.sum(values, dtype=np.int64))
    if family.summary == GEOMETRIC:
        total = 0.0
        for v in values:
            total += math.log(max(float(v), MIN_GEO_MEAN))
        return math.exp(total / n_topics) if n_topics else 0.0
    total = 0.0
    for v in values:  # in topic order, one addition at a time, as trec_eval accumulates
        total += float(v)
    return total / n_topics if n_topics else 0.0


def score_run(
    run: Any,
    qrels: Any,
    requests: list[Request],
    *,
    rel_level: int = 1,
    depth: int | None = None,
    version: int = 9,
    missing_topics: str = "zero",
    runid: str | None = None,
    tables: dict[int, QrelsTable] | None = None,
    judged_only: bool = False,
    slice_lines: int = SLICE_LINES,
) -> RunScores:
    """Compute every requested measure for one run; see `trecbench.evaluate` for the options.

    `run`: RunColumns or a DataFrame; `qrels`: QrelsColumns, a DataFrame or a QrelsTable. Runs longer
    than `slice_lines` are ranked and measured in blocks of whole topics (same numbers, less memory).
    """
    tables = tables if tables is not None else {}
    run = run_columns(run)
    runid = runid or str(run.runid if run.runid is not None else "run")
    asked = {id(r): i for i, r in enumerate(requests)}
    ordered = sorted(requests, key=lambda r: (TABLE_ORDER.index(r.family) if r.family in TABLE_ORDER
                                              else len(TABLE_ORDER)))
    levels = sorted({r.rel_level if r.rel_level is not None else rel_level for r in ordered})
    for level in levels:
        if level not in tables:
            if isinstance(qrels, QrelsTable):
                if qrels.rel_level != level:
                    raise TypeError("pass the qrels DataFrame to score at another relevance level")
                tables[level] = qrels
            else:
                tables[level] = qrels_table(qrels, level)
    for req in ordered:
        family = REGISTRY.get(req.family)
        if not req.extra and family is not None and version not in family.versions:
            raise ValueError(f"{req.family} needs trec_eval version {' or '.join(map(str, family.versions))}")
    base_table = tables[levels[0]]
    computed = [r for r in ordered if r.extra or REGISTRY[r.family].summary not in (RUNID, NUM_Q)]
    evaluated: list[str] = []
    parts: dict[int, list[list]] = {id(r): [] for r in computed}  # per request: per slice, its outputs
    # A large run is ranked and measured a block of topics at a time, so memory holds one block's matrices.
    slices, unjudged = topic_slices(run, base_table, slice_lines)
    for rows in slices:
        derived: dict[int, Derived] = {}
        for level in levels:
            rk = form_rankings(run, tables[level], depth=depth, version=version, rows=rows)
            derived[level] = Derived(condensed(rk) if judged_only else rk, version)
        first_rk = derived[levels[0]].r
        evaluated.extend(first_rk.qids.tolist())
        if unjudged is None:
            unjudged = rk.unjudged
        for req in computed:
            parts[id(req)].append(_outputs(derived[req.rel_level if req.rel_level is not None else rel_level], req))
        del derived
    path = run.path
    del run  # the scores replace the run's columns
    all_qids = list(base_table.qids)
    evaluated_set = set(evaluated)
    missing = [q for q in all_qids if q not in evaluated_set]
    # trec_eval 10 scores a missing topic under -c on a stand-in ranking (9 leaves its values at 0)
    empty = {level: _empty_derived(tables[level], missing, version, judged_only) for level in levels} \
        if version >= 10 and missing and missing_topics == "zero" else {}
    if missing_topics == "zero":
        topics = all_qids
    else:
        topics = sorted(evaluated)  # blocks of topics come in file order
        missing = [] if missing_topics == "skip" else missing
    n = len(topics)
    result = RunScores(runid, topics, missing if missing_topics == "zero" else [])
    result.path = path
    result.unjudged = sorted(set(unjudged or []))
    position = np.searchsorted(np.asarray(topics, dtype=object).astype(str), np.asarray(evaluated, dtype=str)) \
        if evaluated else np.zeros(0, dtype=np.int64)
    missing_position = np.searchsorted(np.asarray(topics, dtype=object).astype(str), np.asarray(missing, dtype=str)) \
        if empty else np.zeros(0, dtype=np.int64)
    from .extras import extra_outputs  # measures outside trec_eval

    for req in ordered:
        level = req.rel_level if req.rel_level is not None else rel_level
        if req.extra:
            family = Family(req.extra, "", lambda *_: [], lambda raw: None)
        else:
            family = REGISTRY[req.family]
            if family.summary == RUNID:
                result.scores.append(Score("runid", STRING, None, runid, False, True, "runid", req.label or "runid",
                                           asked[id(req)]))
                continue
            if family.summary == NUM_Q:
                # ir-measures' NumQ is 1 for each topic; trec_eval's num_q has no per-topic value
                ones = np.ones(n, dtype=np.int64) if req.label else None
                result.scores.append(Score("num_q", LONG, ones, n, bool(req.label), True, "num_q",
                                           req.label or "num_q", asked[id(req)]))
                continue
        outputs = _joined(parts[id(req)])
        on_empty = (extra_outputs(empty[level], req) if req.extra else family.outputs(empty[level], req.raw)) \
            if empty else []
        for i_out, out in enumerate(outputs):
            full = _expand(out.values, position, n, out.kind)
            if on_empty:
                full[missing_position] = _cleaned(out.name, on_empty[i_out].values, out.kind)
            summary = None if family.summary == NONE else _summarise(family, full, out.kind, n)
            if out.name == "num_rel" and missing_topics == "zero":
                table = tables[level]
                rows = np.searchsorted(table.qids, np.asarray(topics, dtype=str))
                full = table.num_rel[rows].astype(np.int64)
                # trec_eval -c sums every judgment with a grade > 0 for `all`, whatever -l says
                summary = int(table.rel_levels[:, 1:].sum()) if req.label is None else int(full.sum())
            label = out.name
            if req.label:
                label = req.label if len(outputs) == 1 else f"{req.label}:{out.name}"
            result.scores.append(Score(out.name, out.kind, full, summary, family.per_topic,
                                       family.summary != NONE, req.family, label, asked[id(req)]))
    return result


def _outputs(d: Derived, req: Request) -> list[Output]:
    if req.extra:
        from .extras import extra_outputs  # measures outside trec_eval

        return extra_outputs(d, req)
    return REGISTRY[req.family].outputs(d, req.raw)


def _joined(slices: list[list[Output]]) -> list[Output]:
    """One request's outputs over all topic blocks: each output's values concatenated in topic order."""
    if len(slices) == 1:
        return slices[0]
    return [Output(out.name, np.concatenate([s[i].values for s in slices]), out.kind)
            for i, out in enumerate(slices[0])]


def condensed(r: Rankings) -> Rankings:
    """The rankings without the documents the qrels do not grade (>= 0), in the same order (trec_eval -J)."""
    keep = r.rel >= 0
    counts = keep.sum(axis=1).astype(np.int64)
    width = int(counts.max()) if len(counts) else 0
    rel = np.full((len(counts), width), PAD, dtype=np.int64)
    pos = np.cumsum(keep, axis=1) - 1
    rows, cols = np.nonzero(keep)
    rel[rows, pos[rows, cols]] = r.rel[rows, cols]
    docs = r.docids
    if docs.size:
        docs = np.full((len(counts), width), "", dtype=object)
        docs[rows, pos[rows, cols]] = r.docids[rows, cols]
    return Rankings(r.qids, rel, counts, docs, r.qrels, r.qrels_row, r.rel_level)


def _empty_derived(table: QrelsTable, missing: list[str], version: int, judged_only: bool) -> Derived:
    """What trec_eval 10 scores a missing topic on under -c: one document the qrels do not know."""
    rows = table.topics.find(Ids.of(missing))
    m = len(missing)
    r = Rankings(table.qids[rows], np.full((m, 1), NONPOOL, dtype=np.int64), np.ones(m, dtype=np.int64),
                 np.full((m, 1), "", dtype=object), table, rows, table.rel_level)
    return Derived(condensed(r) if judged_only else r, version)


def _cleaned(name: str, values: np.ndarray, kind: str) -> np.ndarray:
    """trec_eval 10 then resets the values named exactly num_ret, utility, relstring, rbp_resid, and unj*
    (parameterised names such as utility_2,-1,0,0 keep the value of that one-document ranking)."""
    if name in ("num_ret", "utility", "relstring", "rbp_resid") or name.startswith("unj"):
        return np.full(len(values), "", dtype=object) if kind == STRING else np.zeros_like(values)
    return values


def _expand(values: np.ndarray, position: np.ndarray, n: int, kind: str) -> np.ndarray:
    """Place evaluated topics' values among all topics; missing topics get 0 (or '')."""
    if kind == STRING:
        full = np.array([""] * n, dtype=object)
    elif kind == LONG:
        full = np.zeros(n, dtype=np.int64)
    else:
        full = np.zeros(n, dtype=np.float64)
    full[position] = values
    return full


__all__ = ["Request", "Score", "RunScores", "score_run", "DOUBLE", "MEAN"]
