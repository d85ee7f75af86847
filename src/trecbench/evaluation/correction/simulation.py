"""A synthetic collection with known truth for checking the corrected intervals: people's grades are the truth,
a scripted model judge errs by a known confusion matrix, runs of known quality rank the pool.

Used by tests/evaluation/correction and benchmarks/ppi_coverage.py: one seed gives one collection, one
model judgment of every pair and the runs; `pair_sample` and `topic_sample` draw what people judge.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

# P(model grade | true grade), rows true 0..3: a judge that grades too high (its mistakes go up, rarely down)
BIASED_HIGH = np.array([[0.55, 0.30, 0.10, 0.05],
                        [0.10, 0.40, 0.35, 0.15],
                        [0.02, 0.13, 0.50, 0.35],
                        [0.01, 0.04, 0.25, 0.70]])
TRUE_GRADES = np.array([0.55, 0.25, 0.13, 0.07])  # the pool's share of grades 0..3


@dataclass(frozen=True)
class Collection:
    truth: pd.DataFrame  # query_id, doc_id, relevance: people's grades of every pooled pair
    model: pd.DataFrame  # the scripted judge's grades of the same pairs
    runs: dict[str, pd.DataFrame]  # name -> query_id, doc_id, score


def collection(seed: int, *, topics: int = 30, pool: int = 60, runs: int = 4, depth: int = 20,
               confusion: np.ndarray = BIASED_HIGH) -> Collection:
    """One synthetic collection: grades drawn from TRUE_GRADES, the model's from `confusion`, and `runs`
    runs whose scores are the true grade plus normal noise of sd 0.8, 1.2, 1.6, ... (better runs first),
    each listing its top `depth` of the pool."""
    rng = np.random.default_rng(seed)
    qids = np.repeat([f"q{t}" for t in range(topics)], pool)
    docs = np.array([f"d{t}-{i}" for t in range(topics) for i in range(pool)])
    truth = rng.choice(len(TRUE_GRADES), size=len(qids), p=TRUE_GRADES)
    cumulative = confusion.cumsum(axis=1)[truth]
    model = (rng.random(len(qids))[:, None] > cumulative).sum(axis=1).clip(max=confusion.shape[1] - 1)
    made = {}
    for r in range(runs):
        score = truth + rng.normal(0, 0.8 + 0.4 * r, len(qids))
        frame = pd.DataFrame({"query_id": qids, "doc_id": docs, "score": score})
        frame = frame.sort_values(["query_id", "score"], ascending=[True, False]).groupby("query_id").head(depth)
        made[f"run{r}"] = frame.reset_index(drop=True)
    as_qrels = lambda g: pd.DataFrame({"query_id": qids, "doc_id": docs, "relevance": g.astype(int)})  # noqa: E731
    return Collection(as_qrels(truth), as_qrels(model), made)


def pair_sample(c: Collection, n: int, seed: int) -> pd.DataFrame:
    """n pairs drawn uniformly without replacement: query_id, doc_id, relevance (people's) and pi."""
    rng = np.random.default_rng(seed)
    rows = rng.choice(len(c.truth), size=min(n, len(c.truth)), replace=False)
    return c.truth.iloc[np.sort(rows)].assign(pi=len(rows) / len(c.truth), stratum="all").reset_index(drop=True)


def topic_sample(c: Collection, n: int, seed: int) -> pd.DataFrame:
    """Every pair of n topics drawn uniformly: people's grades of whole topics."""
    rng = np.random.default_rng(seed)
    topics = sorted(c.truth["query_id"].unique())
    chosen = set(rng.choice(topics, size=min(n, len(topics)), replace=False).tolist())
    return c.truth[c.truth["query_id"].isin(chosen)].reset_index(drop=True)


def uncertainty_sample(c: Collection, n: int, seed: int) -> pd.DataFrame:
    """About n pairs drawn by `judge validate --strategy uncertainty`'s rule (`judging.lara`, no human grade
    yet: the model grade's distance from threshold 1), by rank band: query_id, doc_id, relevance, pi, stratum."""
    from trecbench.judging.lara import allocate, proportional, rank_weight, systematic, threshold_probability
    from trecbench.judging.validate import rank_band

    ranks: dict[tuple[str, str], list[int]] = {}
    for run in c.runs.values():
        position = run.groupby("query_id").cumcount() + 1
        for q, d, r in zip(run["query_id"], run["doc_id"], position):
            ranks.setdefault((q, d), []).append(int(r))
    keys = list(zip(c.model["query_id"], c.model["doc_id"]))
    best = [min(ranks[k]) if k in ranks else None for k in keys]
    weight = np.array([rank_weight(";".join(map(str, ranks.get(k, []))), b) for k, b in zip(keys, best)])
    p = np.array([threshold_probability(float(g), 1) for g in c.model["relevance"]])
    frame = c.model[["query_id", "doc_id"]].assign(stratum=[rank_band(b) for b in best],
                                                   score=weight * np.sqrt(p * (1 - p)))
    share = allocate(frame.groupby("stratum")["score"].sum(), frame.groupby("stratum").size(), n)
    rng = np.random.default_rng(seed)
    parts = []
    for band, group in frame.groupby("stratum"):
        pi = proportional(group["score"].to_numpy(), share[str(band)])
        chosen = systematic(pi, rng)
        parts.append(group.iloc[chosen].assign(pi=pi[chosen]))
    drawn = pd.concat(parts)[["query_id", "doc_id", "pi", "stratum"]]
    return drawn.merge(c.truth, on=["query_id", "doc_id"]).reset_index(drop=True)
