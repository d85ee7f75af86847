"""Choosing the pairs people judge where they shrink the corrected interval most: the model's uncertainty, by rank.

The idea is LARA's (Takehi, Voorhees, Sakai and Soboroff, "LLM-Assisted Relevance Assessments: When Should
We Ask LLMs for Help?", SIGIR 2025, arXiv 2411.06877): spend people on the pairs whose relevance the
model is least sure of, calibrating its grades with what people said. LARA picks those pairs outright;
here they are drawn at random with probability proportional to how much they can move the corrected
mean (active inference: Zrnic and Candes, "Active Statistical Inference", ICML 2024), so the
prediction-powered estimate stays unbiased when each human grade is weighted by 1 / its probability.

A pair's score is weight x sd: weight = the sum over the pooled runs of the discount 1/log2(rank + 1) of
the rank each gave it (a top-ranked pair moves P@k and DCG@k of many runs); sd = sqrt(p (1 - p)), p the
chance people call it relevant, from, in this order:
1. the model's own samples (a judge run with `--samples` > 1 and batch 1 keeps each sample's reply) or
   several model judges' grades of the pair: the share that says relevant;
2. people's grades so far: P(relevant | the model's grade), the share among pairs both graded (plus one
   relevant and one not: Laplace's rule), LARA's calibration;
3. else the model's grade's distance d from the threshold (grade - (threshold - 0.5)):
   p = 1 / (1 + exp(-2 d)), most uncertain at the threshold.
A pair no model graded gets p = 0.5. The sample is stratified by rank band (`validate.RANK_BANDS`): each
band gets a share of n proportional to its summed score (Neyman's allocation), and within a band pairs are
drawn by systematic sampling with probabilities proportional to score (Madow 1949), mixed half and half with
uniform probability so no pair's weight 1/pi is extreme (defensive mixing, Hesterberg 1995).
"""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

UNIFORM_SHARE = 0.5  # the defensive mixture's uniform part (at 800 pairs the simulation covered 0.88 with 0.2, 0.94 with 0.5)


def rank_weight(ranks, best_rank) -> float:
    """Sum of 1/log2(rank + 1) over the ranks the runs gave a pair (`ranks`: "3;7;12"), else of its best rank."""
    if isinstance(ranks, str) and ranks:
        values = [int(r) for r in ranks.split(";") if r.strip().isdigit()]
        if values:
            return float(sum(1.0 / math.log2(r + 1) for r in values))
    if best_rank is None or best_rank != best_rank:
        return 1.0 / math.log2(101)
    return 1.0 / math.log2(int(best_rank) + 1)


def threshold_probability(grade: float, threshold: int) -> float:
    """p(relevant) from a grade's distance from the threshold alone (rule 3 of the module doc)."""
    return 1.0 / (1.0 + math.exp(-2.0 * (grade - (threshold - 0.5))))


def calibrated(model: pd.DataFrame, human: pd.DataFrame, threshold: int) -> dict[int, float]:
    """{model grade: P(people say relevant | that grade)} with Laplace's rule, from the pairs both graded."""
    both = model.merge(human, on=["query_id", "doc_id"], suffixes=("_m", "_h"))
    out = {}
    for grade, group in both.groupby("relevance_m"):
        out[int(grade)] = (int((group["relevance_h"] >= threshold).sum()) + 1) / (len(group) + 2)
    return out


def sampled_grades(ws, max_grade: int) -> dict[tuple[str, str], list[int]]:
    """{(qid, docid): every sample's grade} of model judges run with samples > 1 and batch 1 (a reply of a
    batch grades several passages, and which one a row is cannot be told from it)."""
    from trecbench.judging.prompts import parse_grades
    from trecbench.llm.errors import ParseError

    out: dict[tuple[str, str], list[int]] = {}
    for s in ws.judge_stats():
        if s.judge.kind != "model" or int(s.params.get("samples", 1)) < 2 or int(s.params.get("batch", 1)) != 1:
            continue
        for qid, docid, raw in ws.pair_replies(s.id):
            try:
                replies = json.loads(raw)
            except ValueError:
                continue
            for reply in replies if isinstance(replies, list) else []:
                try:
                    got = parse_grades(reply, 1, max_grade)[0] if isinstance(reply, str) else None
                except ParseError:
                    got = None
                if got is not None:
                    out.setdefault((str(qid), str(docid)), []).append(int(got[0]))
    return out


def relevance_chance(frame: pd.DataFrame, judged: pd.DataFrame, human: pd.DataFrame, samples: dict,
                     threshold: int) -> np.ndarray:
    """p(people say relevant) of each pool pair (`frame`: query_id, doc_id), by the rules of the module doc.

    judged: every model judge's newest grade of each pair (query_id, doc_id, judge_id, relevance)."""
    votes: dict[tuple[str, str], list[int]] = {k: list(v) for k, v in samples.items()}
    several = judged.groupby(["query_id", "doc_id"])["relevance"].agg(list)
    for key, grades in several.items():
        if len(grades) > 1 and key not in votes:
            votes[(str(key[0]), str(key[1]))] = list(grades)
    newest = judged.drop_duplicates(["query_id", "doc_id"], keep="last")
    grade = dict(zip(zip(newest["query_id"].astype(str), newest["doc_id"].astype(str)), newest["relevance"]))
    table = calibrated(newest[["query_id", "doc_id", "relevance"]], human, threshold) if not human.empty else {}
    out = []
    for key in zip(frame["query_id"].astype(str), frame["doc_id"].astype(str)):
        if key in votes and len(votes[key]) > 1:
            out.append(float(np.mean([g >= threshold for g in votes[key]])))
        elif key not in grade:
            out.append(0.5)
        elif int(grade[key]) in table:
            out.append(table[int(grade[key])])
        else:
            out.append(threshold_probability(float(grade[key]), threshold))
    return np.asarray(out)


def proportional(score: np.ndarray, n: int) -> np.ndarray:
    """Inclusion probabilities summing to n, proportional to `score` (mixed with UNIFORM_SHARE of uniform),
    each at most 1: pairs that would pass 1 are taken for certain and the rest shared again."""
    size = len(score)
    if n >= size:
        return np.ones(size)
    score = np.asarray(score, dtype=np.float64)
    base = score / score.sum() if score.sum() > 0 else np.full(size, 1.0 / size)
    mixed = (1 - UNIFORM_SHARE) * base + UNIFORM_SHARE / size
    pi = np.zeros(size)
    certain = np.zeros(size, dtype=bool)
    for _ in range(size):
        left = n - certain.sum()
        rest = mixed * ~certain
        pi = np.where(certain, 1.0, left * rest / rest.sum())
        over = (pi > 1) & ~certain
        if not over.any():
            break
        certain |= over
    return np.clip(pi, 0.0, 1.0)


def systematic(pi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Indices drawn by systematic sampling in a random order: each i is drawn with probability pi[i] exactly,
    and round(sum(pi)) are drawn."""
    order = rng.permutation(len(pi))
    edges = np.cumsum(pi[order])
    n = int(round(edges[-1])) if len(edges) else 0
    points = rng.random() + np.arange(n)
    return np.sort(order[np.searchsorted(edges, points, side="right").clip(max=len(pi) - 1)])


def allocate(scores: pd.Series, sizes: pd.Series, n: int) -> dict[str, int]:
    """Each band's share of n proportional to its summed score, by largest remainder (at least 1 when n
    allows, at most its size; what a band cannot hold goes to the others, highest score first)."""
    n = min(n, int(sizes.sum()))
    weights = scores.clip(lower=0)
    exact = weights / weights.sum() * n if weights.sum() > 0 else sizes / sizes.sum() * n
    share = np.floor(exact).astype(int)
    if n >= len(sizes):
        share = share.clip(lower=1)
    share = np.minimum(share, sizes)
    order = list((exact - np.floor(exact)).sort_values(ascending=False, kind="stable").index)
    order += [b for b in scores.sort_values(ascending=False, kind="stable").index if b not in order]
    while int(share.sum()) < n:
        band = next(b for b in order if share[b] < sizes[b])
        share[band] += 1
        order.remove(band)
        order.append(band)  # round robin once every band with room has had one more
    while int(share.sum()) > n:  # the floor of 1 per band can pass n only when n < bands: not reached
        share[share.idxmax()] -= 1
    return {str(b): int(v) for b, v in share.items()}
