"""Is a model judge good enough for this collection? A stratified sample judged by people and by models, compared.

`draw_sample` stores a pool of its own (strategy `validation`) drawn from a pooled workspace, stratified by
the best rank a run gave each document and, when a model has judged them, by the model's grade. People
judge it blind in the web app (`serve --pool NAME` hides model suggestions for such a pool) or their grades
come from imported qrels. `validate` then compares every model judge that judged the sample with the human
grades: Cohen's kappa (graded and binarised), the confusion matrix, per-topic agreement, and Kendall's tau
between the orderings of the pooled runs under the two sets of grades, each with a bootstrap interval over
topics, plus the cost per 1,000 judgments from the model cache.

Published context (not thresholds): UMBRELA vs NIST assessors on TREC DL 2019-2023 gave kappa 0.31-0.37
and system-ranking tau 0.87-0.94 (Upadhyay et al. 2024).
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from trecbench.errors import InputError
from trecbench.judging.samples import VALIDATION as STRATEGY
from trecbench.judging.samples import is_sample

RANK_BANDS = (1, 6, 11, 21, 51, 101)  # band starts: 1-5, 6-10, 11-20, 21-50, 51-100, 101+
Z95 = 1.959963984540054
# The verdict: a judge whose binarised kappa and system-ranking tau both reach GOOD may replace people for
# this collection; one reaching FAIR on both may judge with people checking it (`judge llm --audit`).
GOOD = {"kappa_binary": 0.4, "tau": 0.9}
FAIR = {"kappa_binary": 0.2, "tau": 0.8}
RULE = (f"verdict: good = binarised kappa >= {GOOD['kappa_binary']} and tau >= {GOOD['tau']}; "
        f"fair = binarised kappa >= {FAIR['kappa_binary']} and tau >= {FAIR['tau']}; else poor.")
CONTEXT = ("UMBRELA vs NIST on TREC DL: kappa 0.31-0.37 (binarised 0.42-0.50), tau 0.87-0.94; TREC RAG 2025 "
           "(10,284 pairs): umbrela vs NIST kappa 0.233, binarised at 1: 0.367, at 2: 0.431")


def size_for_width(width: float) -> int:
    """Pairs so that a 95% interval of an agreement rate is at most `width` wide: n = ceil(z^2 * 0.25 / (width/2)^2).

    p(1-p) <= 0.25 is the worst case of the normal interval z * sqrt(p(1-p)/n); kappa's interval is wider
    by about 1/(1 - chance agreement), so read `width` as the agreement rate's width, not kappa's.
    """
    if not 0 < width < 1:
        raise ValueError("width must be between 0 and 1")
    return math.ceil(Z95 ** 2 * 0.25 / (width / 2) ** 2)


def rank_band(rank) -> str:
    """The band label of a best rank (`1-5`, `6-10`, ..., `101+`; `unranked` when the pool has none)."""
    if rank is None or rank != rank:
        return "unranked"
    rank = int(rank)
    for start, end in zip(RANK_BANDS, RANK_BANDS[1:]):
        if start <= rank < end:
            return f"{start}-{end - 1}"
    return f"{RANK_BANDS[-1]}+"


@dataclass(frozen=True)
class Sample:
    name: str
    source: str
    pairs: int
    topics: int
    strata: dict[str, tuple[int, int]]  # stratum -> (sampled, candidates in the source pool)


def draw_sample(ws, *, size: int | None = None, width: float | None = None, source: str | None = None,
                name: str = "validation", seed: int = 0, strategy: str = "stratified") -> Sample:
    """Store a sample of the pool `source` (default: the newest but samples) as pool `name`.

    strategy "stratified": strata are (rank band) or, when models have judged the pairs, (rank band, newest
    model grade); each stratum gets its share of `size` by largest remainder, and at least one pair while
    `size` allows. "uncertainty": pairs drawn with probability growing with the model's uncertainty and
    the runs' ranks, by rank band (`judging.lara`). Either way each pair's inclusion probability and
    stratum are kept in the pool's params (`inclusion`): the design the corrected scores weight by.
    """
    from trecbench.store.workspace import load_pool, save_pool

    if (size is None) == (width is None):
        raise ValueError("give exactly one of size and width")
    if strategy not in SAMPLING:
        raise ValueError(f"strategy must be one of {', '.join(SAMPLING)}, not {strategy!r}")
    n = size if size is not None else size_for_width(width)  # type: ignore[arg-type]
    if source is None:  # the newest pool that is not itself a sample
        source = next((p.name for p in reversed(ws.pools()) if p.strategy != STRATEGY), None)
    pool = load_pool(ws, source) if source is not None else None
    if pool is None:
        raise InputError(str(ws.path), 0, "no pool to sample: make one with `trecbench pool RUN... -w BENCH`")
    if pool.attrs.get("strategy") == STRATEGY:
        raise InputError(str(ws.path), 0, f"pool {pool.attrs['name']!r} is itself a validation sample: "
                                          "name the pool it was drawn from with --from")
    frame = pool[pool["representative"]].reset_index(drop=True)
    rng = np.random.default_rng(seed)
    if strategy == "uncertainty":
        chosen, strata = _uncertainty_draw(ws, frame, min(n, len(frame)), rng)
    else:
        chosen, strata = _stratified_draw(ws, frame, n, rng)
    sample = chosen.iloc[rng.permutation(len(chosen))].copy()  # judging order: random, so no stratum comes first
    sample["priority"] = sample.groupby("query_id").cumcount() + 1
    sample["group"] = None
    sample["representative"] = True
    params = {"source": pool.attrs["name"], "size": int(len(sample)), "seed": seed, "width": width,
              "strata": {s: list(v) for s, v in strata.items()}, "runs": pool.attrs["info"].get("runs", []),
              "sampling": strategy, "inclusion": inclusion(sample)}
    try:
        save_pool(ws, name, STRATEGY, params, sample.drop(columns=["stratum", "pi"]).sort_values(["query_id", "priority"]))
    except ValueError as e:
        raise InputError(str(ws.path), 0, f"{e}: choose another --name") from None
    return Sample(name, pool.attrs["name"], len(sample), int(sample["query_id"].nunique()), strata)


SAMPLING = ("stratified", "uncertainty")  # how `draw_sample` chooses (`judge validate --sample --strategy`)


def _stratified_draw(ws, frame: pd.DataFrame, n: int, rng) -> tuple[pd.DataFrame, dict[str, tuple[int, int]]]:
    """The stratified sample's rows (with `stratum` and `pi`, pool order) and each stratum's (sampled, size)."""
    frame = frame.copy()
    frame["stratum"] = [rank_band(r) for r in frame["best_rank"]]
    model = _newest_model_grades(ws)
    if not model.empty:
        grades = frame.merge(model, on=["query_id", "doc_id"], how="left")["grade"]
        frame["stratum"] = [f"{s} grade {int(g)}" if g == g else f"{s} unjudged" for s, g in zip(frame["stratum"], grades)]
    sizes = frame.groupby("stratum").size()
    share = allocate(sizes, min(n, len(frame)))
    chosen = []
    for stratum, k in share.items():
        members = frame.index[frame["stratum"] == stratum].to_numpy()
        chosen.extend(rng.choice(members, size=k, replace=False).tolist())
    strata = {s: (int(share[s]), int(sizes[s])) for s in sizes.index}
    sample = frame.loc[sorted(chosen)].copy()
    sample["pi"] = [strata[s][0] / strata[s][1] for s in sample["stratum"]]
    return sample, strata


def inclusion(sample: pd.DataFrame) -> list[list]:
    """[query_id, doc_id, inclusion probability, stratum] of each sampled pair: the design
    `evaluation.correction` weights people's grades by."""
    return [[str(q), str(d), float(p), str(s)]
            for q, d, p, s in zip(sample["query_id"], sample["doc_id"], sample["pi"], sample["stratum"])]


def _uncertainty_draw(ws, frame: pd.DataFrame, n: int, rng: np.random.Generator
                     ) -> tuple[pd.DataFrame, dict[str, tuple[int, int]]]:
    """The rows of `frame` (pool candidates) drawn by `judging.lara`'s rule, with `stratum` (rank band) and
    `pi`, and each band's (sampled, size): the `uncertainty` strategy."""
    from trecbench.judging.lara import allocate, proportional, rank_weight, relevance_chance, sampled_grades, systematic

    threshold = ws.settings.scale.relevant
    judgments = ws.judgments(direct=True)
    models = judgments[judgments["judge_kind"] == "model"].sort_values("id")
    judged = (models.drop_duplicates(["query_id", "doc_id", "judge_id"], keep="last")
              .rename(columns={"grade": "relevance"})[["query_id", "doc_id", "judge_id", "relevance"]])
    human, _ = reference_grades(judgments)
    p = relevance_chance(frame, judged, human, sampled_grades(ws, ws.settings.scale.max_grade), threshold)
    weight = np.array([rank_weight(r, b) for r, b in zip(frame["ranks"], frame["best_rank"])])
    frame = frame.assign(stratum=[rank_band(r) for r in frame["best_rank"]], score=weight * np.sqrt(p * (1 - p)))
    sizes = frame.groupby("stratum").size()
    share = allocate(frame.groupby("stratum")["score"].sum(), sizes, min(n, len(frame)))
    parts = []
    for band, k in share.items():
        members = frame[frame["stratum"] == band]
        pi = proportional(members["score"].to_numpy(), k)
        picked = systematic(pi, rng)
        parts.append(members.iloc[picked].assign(pi=pi[picked]))
    chosen = pd.concat(parts).sort_index().drop(columns=["score"]) if parts else frame.iloc[:0].assign(pi=[])
    strata = {str(b): (int((chosen["stratum"] == b).sum()), int(sizes[b])) for b in sizes.index}
    return chosen, strata


def allocate(sizes: pd.Series, n: int) -> pd.Series:
    """Largest-remainder shares of n proportional to `sizes` (a count per stratum), each stratum at least 1
    when n allows and none more than its size: how a blind sample (relevance's and support's) is split."""
    floor = pd.Series(0, index=sizes.index)
    if n >= len(sizes):
        floor[:] = 1
    rest = n - int(floor.sum())
    room = sizes - floor
    exact = room / room.sum() * rest if room.sum() else room * 0
    share = floor + np.floor(exact).astype(int)
    left = n - int(share.sum())
    order = (exact - np.floor(exact)).sort_values(ascending=False, kind="stable").index
    for s in order:
        if left <= 0:
            break
        if share[s] < sizes[s]:
            share[s] += 1
            left -= 1
    return share.clip(upper=sizes).astype(int)


def _newest_model_grades(ws) -> pd.DataFrame:
    judged = ws.judgments(direct=True)
    judged = judged[judged["judge_kind"] == "model"]
    newest = judged.sort_values("id").drop_duplicates(["query_id", "doc_id"], keep="last")
    return newest[["query_id", "doc_id", "grade"]]


def is_blind(ws, pool_name: str | None) -> bool:
    """Whether the pool is a validation sample or an audit queue, whose judges must not see a model's grade."""
    chosen = ws.pool(pool_name)
    return chosen is not None and is_sample(chosen.strategy)


# ---- comparison ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float

    def as_dict(self) -> dict:
        return {"value": _num(self.value), "low": _num(self.low), "high": _num(self.high)}


@dataclass(frozen=True)
class JudgeResult:
    judge: str  # the label: judge name, with batch and samples
    judge_id: int
    pairs: int
    kappa: Interval
    kappa_binary: Interval
    tau: Interval
    confusion: pd.DataFrame  # rows: human grade, columns: model grade
    topics: pd.DataFrame  # per topic: pairs, exact (share equal), binary (share equal when binarised)
    cost_per_1000: float | None  # dollars per 1,000 judgments, None when the cache has no priced call of it
    verdict: str
    tau_ap: Interval = Interval(float("nan"), float("nan"), float("nan"))  # `judge_checks.tau_ap`, same draws as tau
    stability: Any = None  # `judge_checks.LabelStability` of a judge asked several times, else None
    bias: Any = None  # `judge_checks.NewRunBias` over the source pool's runs, None without two runs or people's grades

    def as_dict(self) -> dict:
        return {"judge": self.judge, "judge_id": self.judge_id, "pairs": self.pairs,
                "kappa": self.kappa.as_dict(), "kappa_binary": self.kappa_binary.as_dict(), "tau": self.tau.as_dict(),
                "confusion": {str(a): {str(b): int(v) for b, v in row.items()} for a, row in self.confusion.iterrows()},
                "topics": {str(q): {k: _num(v) for k, v in row.items()} for q, row in self.topics.iterrows()},
                "cost_per_1000": self.cost_per_1000, "verdict": self.verdict, "tau_ap": self.tau_ap.as_dict(),
                "label_stability": None if self.stability is None else self.stability.as_dict(),
                "new_run_bias": None if self.bias is None else self.bias.as_dict()}


@dataclass(frozen=True)
class Validation:
    pool: str
    reference: str  # where the human grades came from
    pairs: int  # sample pairs with a human grade
    topics: int
    runs: int
    measure: str
    threshold: int
    bootstrap: int
    seed: int
    judges: list[JudgeResult] = field(default_factory=list)  # best first
    notes: list[str] = field(default_factory=list)

    rule = property(lambda self: RULE)
    context = property(lambda self: CONTEXT)

    def as_dict(self) -> dict:
        return {"pool": self.pool, "reference": self.reference, "pairs": self.pairs, "topics": self.topics,
                "runs": self.runs, "measure": self.measure, "threshold": self.threshold,
                "bootstrap": self.bootstrap, "seed": self.seed,
                "thresholds": {"good": GOOD, "fair": FAIR},
                "judges": [j.as_dict() for j in self.judges], "notes": self.notes}


def _num(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def verdict(kappa_binary: float, tau: float) -> str:
    """`good` when both reach GOOD, `fair` when both reach FAIR, else `poor` (nan counts as not reached)."""
    def reaches(limits: dict) -> bool:
        return kappa_binary >= limits["kappa_binary"] and (tau >= limits["tau"])

    return "good" if reaches(GOOD) else "fair" if reaches(FAIR) else "poor"


def validate(ws, pool: str | None = None, *, reference: str | None = None, measure: str = "nDCG@10",
             threshold: int | None = None, bootstrap: int = 1000, seed: int = 0) -> Validation:
    """Compare each model judge of the validation pool `pool` (default: the newest one) with human grades.

    `threshold`: the grade from which a document is relevant (binarised kappa, the measure); None: the
    workspace's scale's (`[scale] relevant` in trecbench.toml, 1 by default).

    Human grades: the newest judgment per pair by a person, else by an import (or only by judge
    `reference`). Each model judge (a judge row: model, prompt, batch, samples) is compared on the pairs
    both judged; runs are the source pool's, scored on the sampled topics with qrels of those pairs only.
    """
    from trecbench.qrels.agreement import agreement

    threshold = ws.settings.scale.relevant if threshold is None else threshold
    chosen = _validation_pool(ws, pool)
    from trecbench.store.workspace import load_pool

    sample = load_pool(ws, chosen.name)
    keys = sample[["query_id", "doc_id"]]
    judged = ws.judgments(direct=True).merge(keys, on=["query_id", "doc_id"], how="inner")
    human, source = reference_grades(judged, reference)
    if human.empty:
        who = f"judge {reference!r}" if reference else "a person or an import"
        raise InputError(str(ws.path), 0, f"no judgment by {who} of pool {chosen.name!r}: judge it with "
                                          f"`trecbench serve -w BENCH --pool {chosen.name}` or "
                                          "`trecbench qrels import FILE --kind human`")
    runs, notes = _runs(chosen.params.get("runs", []))
    models = judged[judged["judge_kind"] == "model"]
    labels = _labels(ws, set(models["judge_id"]))
    results = []
    rng_seed = seed
    for jid, group in models.groupby("judge_id"):
        latest = group.sort_values("id").drop_duplicates(["query_id", "doc_id"], keep="last")
        model = latest[["query_id", "doc_id", "grade"]].rename(columns={"grade": "relevance"})
        both = human.merge(model, on=["query_id", "doc_id"], suffixes=("_h", "_m"))
        if both.empty:
            continue
        agree = agreement(both.rename(columns={"relevance_h": "relevance"})[["query_id", "doc_id", "relevance"]],
                          both.rename(columns={"relevance_m": "relevance"})[["query_id", "doc_id", "relevance"]],
                          threshold=threshold)
        per_topic = _per_topic(both, threshold)
        kappa, kappa_b = _kappa_intervals(both, threshold, bootstrap, rng_seed)
        tau, tau_ap = _tau_interval(both, runs, measure, threshold, bootstrap, rng_seed)
        kappa = Interval(agree.kappa, kappa.low, kappa.high)
        kappa_b = Interval(agree.kappa_binary, kappa_b.low, kappa_b.high)
        stability, bias = _judge_checks(ws, int(jid), runs, measure, threshold, _pooled_depth(ws, chosen))
        results.append(JudgeResult(labels[int(jid)], int(jid), len(both), kappa, kappa_b, tau,
                                   agree.confusion.rename_axis(index="human", columns="model"),
                                   per_topic, _cost_per_1000(ws, int(jid)), verdict(kappa_b.value, tau.value),
                                   tau_ap, stability, bias))
    if not results:
        notes.append(f"no model judge has judged pool {chosen.name!r}: run `trecbench judge llm -w BENCH "
                     f"--pool {chosen.name} --model ...` once per configuration")
    results.sort(key=lambda r: (-_or(r.kappa_binary.value), -_or(r.tau.value), -_or(r.kappa.value), r.judge))
    return Validation(chosen.name, source, len(human), int(human["query_id"].nunique()), len(runs), measure,
                      threshold, bootstrap, seed, results, notes)


def reference_grades(judgments: pd.DataFrame, reference: str | None = None) -> tuple[pd.DataFrame, str]:
    """The grades people gave (query_id, doc_id, relevance) and the judges they came from, from `judgments`
    (`Workspace.judgments` rows): each pair's newest judgment by a person, else by an import; only judge
    `reference`'s (a person or an import) when given."""
    people = judgments[judgments["judge_kind"].isin(["human", "import"])]
    if reference is not None:
        people = people[people["judge"] == reference]
    people = people.assign(order=people["judge_kind"].map({"human": 0, "import": 1}))
    grades = (people.sort_values(["order", "id"], ascending=[True, False])
              .drop_duplicates(["query_id", "doc_id"])[["query_id", "doc_id", "grade"]]
              .rename(columns={"grade": "relevance"}).reset_index(drop=True))
    return grades, reference or ", ".join(sorted(set(people["judge"])))


def report_validation(ws, *, threshold: int = 1) -> Validation | None:
    """What `trecbench report` shows: the newest validation sample's comparison, None when it cannot be made."""
    if not any(p.strategy == STRATEGY for p in ws.pools()):
        return None
    try:
        return validate(ws, threshold=threshold, bootstrap=200)
    except InputError:
        return None


def _or(v: float) -> float:
    return -math.inf if v != v else v


def _validation_pool(ws, name: str | None):
    if name is not None:
        chosen = ws.pool(name)
    else:
        chosen = next((p for p in reversed(ws.pools()) if p.strategy == STRATEGY), None)
    if chosen is None or chosen.strategy != STRATEGY:
        what = f"pool {name!r} is not a validation sample" if chosen else "the workspace has no validation sample"
        raise InputError(str(ws.path), 0, f"{what}: draw one with `trecbench judge validate -w BENCH --sample --size 200`")
    return chosen


def _labels(ws, ids: set) -> dict[int, str]:
    stats = {s.id: s for s in ws.judge_stats() if s.id in ids}
    out = {}
    for jid, s in stats.items():
        extra = ", ".join(f"{k} {s.params[k]}" for k in ("batch", "samples") if k in s.params)
        out[jid] = f"{s.judge.name} ({extra})" if extra else s.judge.name
    return out


def _runs(infos: list[dict]) -> tuple[dict[str, pd.DataFrame], list[str]]:
    from trecbench.runs import read_run

    runs: dict[str, pd.DataFrame] = {}
    notes: list[str] = []
    for info in infos:
        path = str(info.get("path") or "")
        try:
            digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        except OSError:
            notes.append(f"run {info.get('name')!r} ({path or 'no file'}) could not be read: left out of the ranking")
            continue
        if info.get("sha256") and digest != info["sha256"]:
            notes.append(f"run {info.get('name')!r} ({path}) changed since it was pooled: left out of the ranking")
            continue
        runs[info["name"]] = read_run(path)
    if len(runs) < 2:
        notes.append("fewer than two pooled runs can be read: no system-ranking tau")
    return runs, notes


def _per_topic(both: pd.DataFrame, threshold: int) -> pd.DataFrame:
    exact = both["relevance_h"] == both["relevance_m"]
    binary = (both["relevance_h"] >= threshold) == (both["relevance_m"] >= threshold)
    frame = pd.DataFrame({"pairs": both.groupby("query_id").size(), "exact": exact.groupby(both["query_id"]).mean(),
                          "binary": binary.groupby(both["query_id"]).mean()})
    frame.index.name = "query_id"
    return frame


def _topic_draws(qids: np.ndarray, bootstrap: int, seed: int) -> np.ndarray:
    """bootstrap x len(qids) indices of topics drawn with replacement (the same draws for every statistic)."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, len(qids), size=(bootstrap, len(qids)))


def _interval(values: list[float], point: float) -> Interval:
    good = np.asarray([v for v in values if v == v], dtype=float)
    if len(good) == 0:
        return Interval(point, float("nan"), float("nan"))
    return Interval(point, float(np.percentile(good, 2.5)), float(np.percentile(good, 97.5)))


def _kappa_intervals(both: pd.DataFrame, threshold: int, bootstrap: int, seed: int) -> tuple[Interval, Interval]:
    from trecbench.qrels.agreement import cohen_kappa

    grades = sorted(set(both["relevance_h"]) | set(both["relevance_m"]))
    index = {g: i for i, g in enumerate(grades)}
    qids = np.asarray(sorted(set(both["query_id"])))
    k = len(grades)
    per_topic = np.zeros((len(qids), k, k), dtype=np.int64)
    where = {q: i for i, q in enumerate(qids)}
    np.add.at(per_topic, (both["query_id"].map(where).to_numpy(), both["relevance_h"].map(index).to_numpy(),
                          both["relevance_m"].map(index).to_numpy()), 1)
    high = np.asarray(grades) >= threshold
    graded, binary = [], []
    for draw in _topic_draws(qids, bootstrap, seed):
        m = per_topic[draw].sum(axis=0)
        graded.append(cohen_kappa(m))
        b = np.array([[m[~high][:, ~high].sum(), m[~high][:, high].sum()],
                      [m[high][:, ~high].sum(), m[high][:, high].sum()]])
        binary.append(cohen_kappa(b))
    return _interval(graded, float("nan")), _interval(binary, float("nan"))


def _judge_checks(ws, judge_id: int, runs: dict, measure: str, threshold: int, depth: int | None) -> tuple[Any, Any]:
    """The judge's label stability and new-run bias (`trecbench.judging.judge_checks`)."""
    from trecbench.judging.judge_checks import workspace_label_stability, workspace_new_run_bias

    stability = workspace_label_stability(ws, judge_id, threshold)
    bias = None if depth is None else workspace_new_run_bias(ws, judge_id, runs, measure, depth=depth,
                                                             rel_level=threshold)
    return stability, bias


def _pooled_depth(ws, sample) -> int | None:
    """The depth of the pool the validation sample was drawn from (the depth its runs' own pairs are counted at)."""
    source = ws.pool(sample.params.get("source")) if sample.params.get("source") else None
    depth = source.params.get("depth") if source is not None else None
    return int(depth) if isinstance(depth, int) and depth > 0 else None


def _tau_interval(both: pd.DataFrame, runs: dict, measure: str, threshold: int, bootstrap: int,
                  seed: int) -> tuple[Interval, Interval]:
    """Kendall's tau-b, and tau_AP (`judge_checks.tau_ap`: the model's ordering against people's), between run
    means under human and model qrels of the same pairs, each with its topic bootstrap (the same draws)."""
    from scipy.stats import kendalltau

    from trecbench.evaluation import evaluate
    from trecbench.judging.judge_checks import tau_ap

    if len(runs) < 2:
        nothing = Interval(float("nan"), float("nan"), float("nan"))
        return nothing, nothing
    qids = np.asarray(sorted(set(both["query_id"])))
    scores = []
    for column in ("relevance_h", "relevance_m"):
        qrels = both[["query_id", "doc_id", column]].rename(columns={column: "relevance"})
        per = evaluate(qrels, runs, [measure], rel_level=threshold, per_topic=True)
        table = per.iloc[:, 0].drop("all", level="query_id").unstack("run")
        scores.append(table.reindex(index=qids, columns=list(runs)).fillna(0.0).to_numpy())
    human, model = scores

    def tau(rows) -> tuple[float, float]:
        a, b = human[rows].mean(axis=0), model[rows].mean(axis=0)
        if np.ptp(a) == 0 or np.ptp(b) == 0:
            return float("nan"), float("nan")
        return float(kendalltau(a, b).statistic), tau_ap(a, b)

    point = tau(np.arange(len(qids)))
    draws = [tau(d) for d in _topic_draws(qids, bootstrap, seed + 1)]
    return (_interval([d[0] for d in draws], point[0]), _interval([d[1] for d in draws], point[1]))


def _cost_per_1000(ws, judge_id: int) -> float | None:
    """Dollars per 1,000 judgments: the first-paid cost of the cached replies this judge's judgments hold.

    A reply is attributed to the judge when its text is one of the judge's raw replies and it came from
    the judge's model (`trecbench.llm.cost.paid_for`); each reply counts once however many passages it graded.
    """
    from trecbench.llm.cost import paid_for

    conn = ws.connection()
    name = next((s.judge.model for s in ws.judge_stats() if s.id == judge_id), None)
    rows = ws.raw_replies(judge_id)
    if not rows or name is None:
        return None
    texts = _reply_texts(rows)
    paid = paid_for(conn, name, texts) if texts else None
    return None if paid is None else 1000.0 * paid / len(rows)


def _reply_texts(raws: list[str | None]) -> set[str]:
    """The replies stored in judgments' raw column: a reply, or a JSON list of replies (one per sample)."""
    texts: set[str] = set()
    for raw in raws:
        if raw is None:
            continue
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if isinstance(value, list) and value and all(isinstance(v, str) or v is None for v in value):
            texts.update(v for v in value if v)
        else:
            texts.add(raw)
    return texts


def format_table(result: Validation) -> str:
    """The terminal table: one line per judge (best first), then the thresholds and published context."""
    from trecbench.evaluation.retrieval.output import aligned

    lines = [f"validation pool {result.pool!r}: {result.pairs} pairs with human grades ({result.reference}) "
             f"over {result.topics} topics; {result.runs} runs ranked by {result.measure}; "
             f"relevant from grade {result.threshold}; 95% bootstrap over topics ({result.bootstrap} draws, "
             f"seed {result.seed})"]
    header = ["rank", "judge", "pairs", "kappa", "kappa_bin", f"tau({result.measure})", "tau_AP", "$/1000",
              "verdict"]
    rows = [[str(i), j.judge, str(j.pairs), _fmt(j.kappa), _fmt(j.kappa_binary), _fmt(j.tau), _fmt(j.tau_ap),
             "-" if j.cost_per_1000 is None else f"{j.cost_per_1000:.4f}", j.verdict]
            for i, j in enumerate(result.judges, 1)]
    lines += aligned(header, rows, left=len(header))  # every column left-aligned
    for j in result.judges:
        lines.append(f"\n{j.judge}: confusion (rows human, columns model)")
        lines.append(j.confusion.to_string())
        worst = j.topics.sort_values(["binary", "exact"]).head(5)
        lines.append("lowest per-topic agreement: " + ", ".join(
            f"{q} {row['binary']:.2f} binary / {row['exact']:.2f} exact ({int(row['pairs'])} pairs)"
            for q, row in worst.iterrows()))
        lines += _check_lines(j)
    lines.append(f"\n{RULE}")
    lines.append(f"context: {CONTEXT}")
    lines += [f"note: {n}" for n in result.notes]
    return "\n".join(lines)


def _check_lines(j: JudgeResult) -> list[str]:
    """The judge's label stability and new-run bias, as `format_table` prints them."""
    lines = []
    s = j.stability
    if s is not None and s.pairs:
        lines.append(f"label stability ({s.samples} samples): {s.pairs} pairs, grade flips in {s.flipped:.1%} "
                     f"(across the threshold in {s.flipped_binary:.1%}), two samples agree {s.agreement:.1%}"
                     + (f"; {s.unread} judgments not read back" if s.unread else ""))
    elif s is not None:
        lines.append(f"label stability ({s.samples} samples): no judgment's samples could be read back")
    b = j.bias
    if b is not None and len(b.measured):
        lines.append(f"new-run bias (each run left out of the depth-{b.depth} pool, its own pairs graded by the "
                     f"model; {b.measure}): mean absolute rank shift {b.mean_abs_shift:.2f} over "
                     f"{len(b.measured)} runs, mean shift {b.mean_shift:+.2f} (negative: favoured)")
        lines += [f"  {r.run}: rank {r.rank} with people, {r.filled_rank} with its holes filled, {r.left_out_rank} "
                  f"left unjudged ({r.own_filled} of {r.own} own pairs graded by the model)"
                  for r in b.measured.itertuples()]
    elif b is not None:
        lines.append("new-run bias: the model graded none of the runs' own pairs: judge the pool with it "
                     "(`judge llm --pool NAME`) or fill holes (`judge holes`) to measure it")
    return lines


def _fmt(i: Interval) -> str:
    if i.value != i.value:
        return "-"
    if i.low != i.low:
        return f"{i.value:.3f}"
    return f"{i.value:.3f} [{i.low:.2f}, {i.high:.2f}]"


validate_judges = validate  # the name `trecbench` exports
