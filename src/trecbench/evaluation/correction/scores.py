"""Runs' means under a model's qrels corrected by people's grades of a sample: which estimator each measure gets.

The estimand is a run's mean over the scored topics with every pair of the model's qrels graded by people
instead (pairs neither judged stay non-relevant, as trec_eval scores them). Per measure:
- `label`: a measure linear in the gains (P@k, DCG@k: `linear`), with people's grades of single pairs
  drawn by a known design (a `judge validate` sample: inclusion probabilities and strata), or, with no
  design and no whole topics, pairs taken as a simple random sample of the model's pairs (said in a note):
  `ppi.design_total` over the pairs' rectifiers.
- `topic`: any measure (nDCG@10, AP, R@100 ...), when at least two topics have every pair graded by people:
  `ppi.ppi_mean` with `population=True` over the per-topic scores, those topics taken as a random sample
  of the topics (Oosterhuis et al., KDD 2024, PPI over human-annotated queries).
- `none`: a measure neither applies to: printed uncorrected, said as such.
Differences between runs are the same estimators applied to the difference of their terms (paired: one
sample corrects both), with the normal test's two-sided p.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .linear import Linear, linear_measure
from .ppi import Estimate, design_total, labels_for_width, p_value, ppi_mean

LABEL, TOPIC, NONE = "label", "topic", "none"
FEW = 30  # fewer of people's pairs than this within a run's cut-off: said in a note (coverage falls below 0.9)
TUNE_MIN = 20  # topics from which topic-level PPI tunes its weight on the model (PPI++)


@dataclass(frozen=True)
class Corrected:
    """One run's score on one measure: the model-qrels mean, the corrected one (None: not corrected) and how."""

    run: str
    measure: str
    plain: float
    estimate: Estimate | None
    method: str  # label | topic | none
    needed: int | None = None  # human labels (pairs or topics) for an interval of the asked width
    inside: int | None = None  # label level: the sampled pairs the run ranks within the cut-off (the others add 0)

    def row(self) -> dict:
        e = self.estimate
        return {"run": self.run, "measure": self.measure, "plain": _num(self.plain),
                "corrected": _num(e.value) if e else None, "low": _num(e.low) if e else None,
                "high": _num(e.high) if e else None, "se": _num(e.se) if e else None,
                "lambda": _num(e.lam) if e else None, "labels": e.n if e else 0, "method": self.method,
                "needed": self.needed, "inside": self.inside}


@dataclass(frozen=True)
class Difference:
    """A run minus the baseline under the same correction: estimate, interval and the normal test's p."""

    run: str
    baseline: str
    measure: str
    plain: float
    estimate: Estimate
    method: str
    p: float

    def row(self) -> dict:
        e = self.estimate
        return {"run": self.run, "baseline": self.baseline, "measure": self.measure, "plain": _num(self.plain),
                "difference": _num(e.value), "low": _num(e.low), "high": _num(e.high), "p": _num(self.p),
                "method": self.method}


@dataclass
class Correction:
    """Every run x measure corrected, the differences with the baseline, and what was assumed."""

    scores: list[Corrected]
    differences: list[Difference]
    pairs: int  # people's grades of the model's pairs used
    topics: int  # topics every pair of which people graded
    level: float = 0.95
    width: float | None = None
    notes: list[str] = field(default_factory=list)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([s.row() for s in self.scores])

    def as_dict(self) -> dict:
        return {"pairs": self.pairs, "topics": self.topics, "level": self.level, "width": self.width,
                "scores": [s.row() for s in self.scores], "differences": [d.row() for d in self.differences],
                "notes": self.notes}


def _num(v: float | None) -> float | None:
    return None if v is None or v != v else float(v)


@dataclass(frozen=True)
class Design:
    """How people's pairs were drawn: per pair (query_id, doc_id) its inclusion probability and stratum."""

    frame: pd.DataFrame  # query_id, doc_id, pi, stratum
    known: bool  # False: taken as a simple random sample of the model's pairs


def uniform_design(pairs: pd.DataFrame, population: int) -> Design:
    """People's pairs taken as a simple random sample of `population` pairs: pi = n / N, one stratum."""
    n = len(pairs)
    return Design(pairs[["query_id", "doc_id"]].assign(pi=min(1.0, n / population) if population else 1.0,
                                                       stratum="all"), False)


@dataclass(frozen=True)
class _Units:
    """The model's qrels as units: a docid's unit is its duplicate group's judged pair (propagated_from)."""

    unit_of: dict[tuple[str, str], tuple[str, str]]
    model: dict[tuple[str, str], float]  # unit -> the model's grade
    human: dict[tuple[str, str], float]  # unit -> people's grade (sampled units only)


def _units(model_qrels: pd.DataFrame, human: pd.DataFrame) -> _Units:
    q = model_qrels["query_id"].astype(str).tolist()
    d = model_qrels["doc_id"].astype(str).tolist()
    src = model_qrels["propagated_from"].tolist() if "propagated_from" in model_qrels else [None] * len(q)
    unit_of = {(a, b): (a, str(s) if isinstance(s, str) and s else b) for a, b, s in zip(q, d, src)}
    model = {(a, b): float(g) for a, b, g, s in zip(q, d, model_qrels["relevance"].tolist(), src)
             if not (isinstance(s, str) and s)}
    graded = dict(zip(zip(human["query_id"].astype(str), human["doc_id"].astype(str)),
                      human["relevance"].astype(float)))
    return _Units(unit_of, model, {u: graded[u] for u in model if u in graded})


def complete_topics(units: _Units) -> list[str]:
    """Topics every unit of which people graded."""
    total: dict[str, int] = {}
    for q, _ in units.model:
        total[q] = total.get(q, 0) + 1
    graded: dict[str, int] = {}
    for q, _ in units.human:
        graded[q] = graded.get(q, 0) + 1
    return sorted(q for q, n in total.items() if graded.get(q, 0) == n)


def human_qrels(model_qrels: pd.DataFrame, units: _Units, topics: Sequence[str]) -> pd.DataFrame:
    """The model's qrels of `topics` with every row's grade replaced by people's grade of its unit."""
    keep = model_qrels[model_qrels["query_id"].astype(str).isin(set(topics))]
    grades = [int(units.human[units.unit_of[(str(a), str(b))]])
              for a, b in zip(keep["query_id"], keep["doc_id"])]
    return pd.DataFrame({"query_id": keep["query_id"].astype(str).to_numpy(),
                         "doc_id": keep["doc_id"].astype(str).to_numpy(), "relevance": grades})


def correct(model_qrels: pd.DataFrame, human: pd.DataFrame, runs: Any, measures: Sequence[str], *,
            design: Design | None = None, rel_level: int = 1, tuned: bool = True, level: float = 0.95,
            baseline: str | None = None, width: float | None = None, missing_topics: str = "zero",
            scored: list | None = None) -> Correction:
    """Each run's mean on each measure under the model's qrels, corrected with people's grades `human`.

    model_qrels: query_id, doc_id, relevance (and propagated_from: a duplicate's grade lent, `workspace_qrels`);
    human: query_id, doc_id, relevance of the pairs people graded; runs: anything `score_runs` takes;
    design: how people's pairs were drawn (None: a simple random sample of the model's pairs, or whole topics);
    tuned: PPI++'s weight on the model (False: plain PPI, weight 1); baseline: the run differences are
    taken from (default: the best by the first measure's plain mean); width: with it, the labels needed for an
    interval that wide. scored: `score_runs` results on the model's qrels, in the runs' order, when already made.
    """
    from trecbench.evaluation.retrieval.frames import score_runs

    measures = list(measures)
    units = _units(model_qrels, human)
    notes: list[str] = []
    # DCG@k is no measure of trec_eval's: its plain mean is the model's total the correction computes
    engine = [m for m in measures if not _own(m)] or ["P@10"]
    results = scored if scored is not None else score_runs(
        model_qrels[["query_id", "doc_id", "relevance"]], runs, engine, rel_level=rel_level,
        missing_topics=missing_topics)
    names = [r.shown for r in results]
    complete = complete_topics(units)
    if design is None or not units.human:
        design = uniform_design(_pairs(units.human), len(units.model))
    sample = _sample(units, design, notes)
    lam = None if tuned else 1.0
    per_topic = {r.shown: _per_topic(r, measures) for r in results}
    human_scores = _human_per_topic(model_qrels, units, complete, runs, engine, rel_level, results)
    top = _tops(runs, names, measures)
    plans = {m: _method(m, design, sample, complete) for m in measures}
    notes += _plan_notes(plans, design, len(sample), len(units.model))
    scores: list[Corrected] = []
    terms: dict[tuple[str, str], Any] = {}
    for r in results:
        for m in measures:
            plain = _plain(r, m)
            method = plans[m]
            if method == LABEL:
                terms[(r.shown, m)] = _label_terms(top[r.shown], linear_measure(m), units, sample,  # type: ignore[arg-type]
                                                   rel_level, r.topics)
                truth, model, total, _ = terms[(r.shown, m)]
                plain = total if _own(m) else plain
                est = design_total(truth, model, sample["pi"], sample["stratum"], model_total=total, lam=lam,
                                   level=level)
            elif method == TOPIC:
                model_scores, people_scores = per_topic[r.shown][m], human_scores[r.shown].get(m, {})
                terms[(r.shown, m)] = (model_scores, people_scores)
                est = _topic_estimate(model_scores, people_scores, complete, tuned, level)
            else:
                est = None
            needed = labels_for_width(est, width, level) if est is not None and width else None
            inside = int(np.count_nonzero(terms[(r.shown, m)][3])) if method == LABEL else None
            if inside is not None and inside < FEW:
                notes.append(f"{r.shown} {m}: only {inside} of people's pairs are in its top "
                             f"{linear_measure(m).k}: the interval rests on few pairs (the normal "  # type: ignore[union-attr]
                             "approximation may make it too narrow)")
            scores.append(Corrected(r.shown, m, plain, est, method, needed, inside))
    base = baseline if baseline is not None else _best(scores, measures)
    differences = _differences(results, measures, plans, terms, base, sample, complete, lam, level)
    return Correction(scores, differences, len(sample), len(complete), level, width, notes)


def _plan_notes(plans: dict[str, str], design: Design, sampled: int, population: int) -> list[str]:
    """What a note must say about the estimator each measure gets: an assumed design, or no correction."""
    notes = []
    for m, method in plans.items():
        if method == LABEL and not design.known:
            notes.append(f"{m}: people's {sampled} pairs taken as a simple random sample of the model's "
                         f"{population} pairs (no sampling design is recorded for them)")
        if method == NONE:
            notes.append(f"{m}: not corrected: " + (
                "not linear in the gains, and fewer than two topics have every pair graded by people"
                if linear_measure(m) is None else "no pair of the model's qrels has a human grade"))
    return notes


def _pairs(human: Mapping) -> pd.DataFrame:
    return pd.DataFrame([{"query_id": q, "doc_id": d} for q, d in human], columns=["query_id", "doc_id"])


def _sample(units: _Units, design: Design, notes: list[str]) -> pd.DataFrame:
    """The sampled units people graded, with their pi and stratum (units outside the design left out, said)."""
    frame = design.frame.assign(query_id=design.frame["query_id"].astype(str),
                                doc_id=design.frame["doc_id"].astype(str))
    have = frame[[(q, d) in units.human for q, d in zip(frame["query_id"], frame["doc_id"])]]
    outside = len(units.human) - len(have)
    if design.known and outside:
        notes.append(f"{outside} pair(s) people graded are not in the sample's design: left out of the label-level "
                     "correction")
    return have.reset_index(drop=True)


def _method(measure: str, design: Design, sample: pd.DataFrame, complete: list[str]) -> str:
    linear = linear_measure(measure) is not None
    if linear and design.known and len(sample) >= 2:
        return LABEL
    if len(complete) >= 2 and not _own(measure):
        return TOPIC
    if linear and len(sample) >= 2:
        return LABEL
    return NONE


def _own(measure: str) -> bool:
    """A measure only the correction computes (DCG@k)."""
    found = linear_measure(measure)
    return found is not None and found.family == "DCG"


def _plain(res, measure: str) -> float:
    s = next((s for s in res.scores if s.label == measure), None)
    return float(s.summary) if s is not None and isinstance(s.summary, (int, float)) else math.nan


def _per_topic(res, measures: list[str]) -> dict[str, dict[str, float]]:
    out = {}
    for m in measures:
        s = next((s for s in res.scores if s.label == m), None)
        out[m] = {} if s is None or s.values is None else {q: float(v) for q, v in zip(res.topics, s.values)}
    return out


def _human_per_topic(model_qrels, units, complete, runs, measures, rel_level, results) -> dict:
    """Per-topic scores under people's grades on the complete topics (empty without two of them)."""
    from trecbench.evaluation.retrieval.frames import score_runs

    if len(complete) < 2:
        return {r.shown: {} for r in results}
    human = score_runs(human_qrels(model_qrels, units, complete), runs, measures, rel_level=rel_level,
                       missing_topics="skip")
    return {r.shown: _per_topic(h, measures) for r, h in zip(results, human)}


def _topic_terms(model: dict[str, float], human: dict[str, float], complete: list[str]):
    """(people's and the model's per-topic scores on the complete topics the run is scored on, the model's
    on every scored topic): a topic people graded wholly that the run has no score under them for is 0."""
    labeled = [q for q in complete if q in model]
    ys = np.array([human.get(q, 0.0) for q in labeled])
    fs = np.array([model[q] for q in labeled])
    return ys, fs, np.array(list(model.values()))


def _topic_estimate(model: dict[str, float], human: dict[str, float], complete: list[str], tuned: bool,
                    level: float) -> Estimate:
    """Topic-level PPI with Student's t (n - 1 degrees of freedom: n topics is few), PPI++'s tuned weight
    only from TUNE_MIN topics on (fewer make it too noisy: the simulation's coverage fell to 0.90 at 5)."""
    ys, fs, everything = _topic_terms(model, human, complete)
    lam = None if tuned and len(ys) >= TUNE_MIN else 1.0
    return ppi_mean(ys, fs, everything, lam=lam, population=True, level=level, df=len(ys) - 1)


def _minus(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    """Per-topic differences over the topics both have."""
    return {q: v - b[q] for q, v in a.items() if q in b}


def _tops(runs: Any, names: list[str], measures: list[str]) -> dict[str, pd.DataFrame]:
    """Each run's top max-k documents per topic (query_id, doc_id, rank), trec_eval's order."""
    from trecbench.pooling.rank import read_runs

    linear = [linear_measure(m) for m in measures]
    depth = max((m.k for m in linear if m is not None), default=0)
    if depth == 0:
        return {}
    _, cuts, _ = read_runs(runs, depth)
    return {name: pd.DataFrame({"query_id": c.query_id.objects(), "doc_id": c.doc_id.objects(), "rank": c.rank})
            for name, c in zip(names, cuts)}


def _unit_weights(top: pd.DataFrame, measure: Linear, units: _Units, topics: list[str]) -> dict:
    """{unit: summed weight of the run's documents that are it or its duplicates} over the scored topics."""
    scored = set(topics)
    weights: dict[tuple[str, str], float] = {}
    for q, d, w in zip(top["query_id"], top["doc_id"], measure.weights(top["rank"].to_numpy())):
        if w == 0 or q not in scored:
            continue
        unit = units.unit_of.get((q, d))
        if unit is not None and unit in units.model:
            weights[unit] = weights.get(unit, 0.0) + float(w)
    return weights


def _label_terms(top: pd.DataFrame, measure: Linear, units: _Units, sample: pd.DataFrame, rel_level: int,
                 topics: list[str]):
    """(truth terms, model terms) of the sampled units and the model's total, each divided by the number of
    topics averaged over (the terms of the run's mean), and the units' weights (0: outside the cut-off)."""
    weights = _unit_weights(top, measure, units, topics)
    keys = list(zip(sample["query_id"], sample["doc_id"]))
    w = np.array([weights.get(k, 0.0) for k in keys])
    truth = w * measure.gains(np.array([units.human[k] for k in keys]), rel_level)
    model = w * measure.gains(np.array([units.model[k] for k in keys]), rel_level)
    every = list(weights)
    total = float(np.sum(np.array([weights[k] for k in every]) *
                         measure.gains(np.array([units.model[k] for k in every]), rel_level))) if every else 0.0
    count = max(1, len(topics))
    return truth / count, model / count, total / count, w


def _best(scores: list[Corrected], measures: list[str]) -> str | None:
    first = [s for s in scores if s.measure == measures[0]]
    return max(first, key=lambda s: -math.inf if s.plain != s.plain else s.plain).run if first else None


def _named(results, name: str):
    return next(x for x in results if x.shown == name)


def _differences(results, measures, plans, terms, base, sample, complete, lam, level) -> list[Difference]:
    if base is None:
        return []
    out = []
    for r in results:
        if r.shown == base:
            continue
        for m in measures:
            mine, theirs = terms.get((r.shown, m)), terms.get((base, m))
            if mine is None or theirs is None:
                continue
            plain = mine[2] - theirs[2] if _own(m) else _plain(r, m) - _plain(_named(results, base), m)
            if plans[m] == LABEL:
                est = design_total(mine[0] - theirs[0], mine[1] - theirs[1], sample["pi"], sample["stratum"],
                                   model_total=mine[2] - theirs[2], lam=lam, level=level)
            else:
                model = _minus(mine[0], theirs[0])
                human = {q: mine[1].get(q, 0.0) - theirs[1].get(q, 0.0) for q in complete}
                est = _topic_estimate(model, human, complete, lam is None, level)
            out.append(Difference(r.shown, base, m, plain, est, plans[m], p_value(est)))
    return out

