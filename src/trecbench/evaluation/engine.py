"""Score one run against qrels with trec_eval's semantics: topics, depth, relevance level, `-c`, versions."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .measures import REGISTRY, TABLE_ORDER, Derived, Family, Output
from .measures.base import DOUBLE, GEOMETRIC, LONG, MEAN, MIN_GEO_MEAN, NONE, NUM_Q, RUNID, STRING, SUM
from .rankings import SLICE_LINES, QrelsTable, form_rankings, qrels_table, run_columns, topic_slices


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
            rk = form_rankings(run, tables[level], depth=depth, float32_scores=(version < 10),
                               keep_docids=any(r.extra for r in ordered), rows=rows)
            d = Derived(rk)
            d.__dict__["version"] = version
            derived[level] = d
        first_rk = derived[levels[0]].r
        evaluated.extend(first_rk.qids.tolist())
        if unjudged is None:
            unjudged = first_rk.unjudged
        for req in computed:
            d = derived[req.rel_level if req.rel_level is not None else rel_level]
            parts[id(req)].append(_outputs(d, req))
        del derived
    path = run.path
    del run  # the scores replace the run's columns
    all_qids = list(base_table.qids)
    evaluated_set = set(evaluated)
    missing = [q for q in all_qids if q not in evaluated_set]
    if missing_topics == "zero":
        topics = all_qids
    else:
        topics = evaluated
        missing = [] if missing_topics == "skip" else missing
    n = len(topics)
    result = RunScores(runid, topics, missing if missing_topics == "zero" else [])
    result.path = path  # type: ignore[attr-defined]
    result.unjudged = sorted(set(unjudged or []))
    position = np.searchsorted(np.asarray(topics, dtype=object).astype(str), np.asarray(evaluated, dtype=str)) \
        if evaluated else np.zeros(0, dtype=np.int64)

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
                result.scores.append(Score("num_q", LONG, None, n, False, True, "num_q", req.label or "num_q",
                                           asked[id(req)]))
                continue
        outputs = _joined(parts[id(req)])
        for out in outputs:
            full = _expand(out.values, position, n, out.kind)
            if out.name == "num_rel" and missing_topics == "zero":
                table = tables[level]
                rows = np.searchsorted(table.qids, np.asarray(topics, dtype=str))
                full = table.num_rel[rows].astype(np.int64)
            label = out.name
            if req.label:
                label = req.label if len(outputs) == 1 else f"{req.label}:{out.name}"
            summary = None if family.summary == NONE else _summarise(family, full, out.kind, n)
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
