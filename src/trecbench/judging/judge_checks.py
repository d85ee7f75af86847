"""Knowing a model judge beyond kappa: tau_AP of the run ordering, how stable its samples' grades are, and new-run bias.

`judge validate` prints these beside kappa and Kendall's tau:

- tau_AP, the AP rank correlation of Yilmaz, Aslam and Robertson ("A new rank correlation coefficient for
  information retrieval", SIGIR 2008), of the runs' ordering by the model's grades (the estimate) against
  their ordering by people's grades (the truth): tau_AP = 2/(N-1) * sum_{i=2..N} C(i)/(i-1) - 1, where the
  runs are taken in the model's order and C(i) counts the runs the model puts above its i-th that people
  put above it too. A swap near the top costs more than one near the bottom. Ties in the model's ordering
  are broken at random and the expectation over every way to break them is taken, in closed form: that is
  tau_AP,a of Urbano and Marrero ("The treatment of ties in AP correlation", ICTIR 2017), which gives
  0.39903 on the ircor package's published example as it does here. A pair people tie is counted half
  correct: the expectation when people's ties are broken at random too (Urbano and Marrero's other
  variant, tau_AP,b for two observers, is not this one).
- label stability of a judge asked several times (`--samples n`): the samples' replies are kept, as a
  JSON list, in each judgment's raw reply; read back, they give each pair's n grades, and the share of
  pairs whose samples disagree (graded, and on either side of the relevance threshold) is how often a
  pair's grade flips from one asking to the next.
- new-run bias (Zobel 1998's leave-one-run-out, `trecbench.pooling.loo`, with its holes filled by the
  model as Abbasiantaeb et al., "Can we use large language models to fill relevance judgment holes?",
  2024, do): each pooled run is left out of the pool, the pairs only it contributed get the model's grade
  instead of people's, and its rank among the other runs (scored on people's grades) is compared with its
  rank under people's grades. The mean absolute rank shift says how far a new run's rank moves when a
  model fills its holes.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from trecbench.store.workspace import Workspace

REPLY_GRADE_BOUND = 100  # reading back replies that were accepted: any grade in them was within the prompt's scale


def tau_ap(reference: Sequence[float], estimate: Sequence[float]) -> float:
    """tau_AP of the `estimate` ordering (higher first) against the `reference` one (module doc; ties included).

    nan for fewer than two items, or when either ordering ties every item (no ordering to compare).
    """
    ref = np.asarray(reference, dtype=float)
    est = np.asarray(estimate, dtype=float)
    if ref.shape != est.shape:
        raise ValueError("tau_AP compares two scores of the same items")
    n = len(ref)
    if n < 2 or np.ptp(ref) == 0 or np.ptp(est) == 0:
        return float("nan")
    # w[p]: the weight 1/(p-1) of the item at position p (1-based) for each item above it; nothing at the top
    w = np.zeros(n + 1)
    w[2:] = 1.0 / np.arange(1, n)
    cum, cum_p = np.cumsum(w), np.cumsum(w * np.arange(n + 1))
    above = (est[None, :] > est[:, None]).sum(axis=1)  # items the model puts strictly above item i
    size = (est[None, :] == est[:, None]).sum(axis=1)  # item i's tie group, itself included
    low, high = above, above + size  # item i is at one of positions low+1 .. high, each as likely
    # an item strictly above i: always above it, at i's mean weight
    strict_weight = (cum[high] - cum[low]) / size
    # a tied item: above i with chance (k-1)/(g-1) when i is k-th of its g tied items
    tied_sum = (cum_p[high] - cum_p[low]) - (low + 1) * (cum[high] - cum[low])
    tied_weight = np.where(size > 1, tied_sum / (size * np.maximum(size - 1, 1)), 0.0)
    correct = (ref[:, None] > ref[None, :]) + 0.5 * (ref[:, None] == ref[None, :])  # [j, i]: j above i for people
    np.fill_diagonal(correct, 0.0)
    strictly = est[:, None] > est[None, :]  # [j, i]: the model puts j above i
    tied = est[:, None] == est[None, :]
    np.fill_diagonal(tied, False)
    total = float((strict_weight * (correct * strictly).sum(axis=0)).sum()
                  + (tied_weight * (correct * tied).sum(axis=0)).sum())
    return 2.0 / (n - 1) * total - 1.0


# ---- label stability ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelStability:
    """How often a pair's grade changes from one sample of the judge to the next."""

    pairs: int  # pairs whose samples' grades could be read back (two or more each)
    samples: int  # the judge's samples per pair (`--samples`)
    flipped: float  # share of those pairs whose samples gave more than one grade
    flipped_binary: float  # share whose samples fell on both sides of the relevance threshold
    agreement: float  # chance that two samples of a pair give the same grade (mean over pairs)
    unread: int  # judgments whose samples could not be read back (a re-asked passage, a failed sample)

    def as_dict(self) -> dict:
        return {"pairs": self.pairs, "samples": self.samples, "flipped": _num(self.flipped),
                "flipped_binary": _num(self.flipped_binary), "agreement": _num(self.agreement),
                "unread": self.unread}


def label_stability(grades: Mapping[Any, Sequence[int]], threshold: int = 1, *, samples: int | None = None,
                    unread: int = 0) -> LabelStability:
    """The stability figures of each pair's sample grades ({pair: [grade of sample 1, 2, ...]}); pairs with
    fewer than two grades are left out."""
    lists = [list(g) for g in grades.values() if len(g) >= 2]
    if not lists:
        nan = float("nan")
        return LabelStability(0, samples or 0, nan, nan, nan, unread)
    flipped = np.mean([len(set(g)) > 1 for g in lists])
    binary = np.mean([len({x >= threshold for x in g}) > 1 for g in lists])
    agreement = np.mean([_pairwise_agreement(g) for g in lists])
    return LabelStability(len(lists), samples or max(len(g) for g in lists), float(flipped), float(binary),
                          float(agreement), unread)


def _pairwise_agreement(grades: list[int]) -> float:
    """The share of the pairs of samples that gave the same grade."""
    n = len(grades)
    same = sum(c * (c - 1) for c in (grades.count(g) for g in set(grades)))
    return same / (n * (n - 1))


def sample_grades(rows: Iterable[tuple[str, str, int, str | None]]) -> tuple[dict[tuple[str, str], list[int]], int]:
    """({(qid, docid): each sample's grade}, judgments that could not be read back) from a judge's successful
    judgments (qid, docid, grade, raw reply) in the order they were recorded.

    A call's judgments are recorded together, in the order of its passages, with the same raw reply (the JSON
    list of the samples' replies), so a run of rows of one topic with one raw reply is one call and a row's
    place in it is its passage. A call is read only when every sample's reply grades every one of its
    passages and the samples' majority is the grade stored: else (a re-asked passage, whose reply grades it
    alone; a failed sample or passage) its rows count as unread.
    """
    from trecbench.judging.llm import vote
    from trecbench.judging.prompts import parse_grades

    out: dict[tuple[str, str], list[int]] = {}
    unread = 0
    for group in _calls(rows):
        replies = _replies(group[0][3])
        per_sample: list[list[int]] = []
        for reply in replies:
            try:
                parsed = parse_grades(reply, n_passages=len(group), max_grade=REPLY_GRADE_BOUND)
            except Exception:  # noqa: BLE001 - a reply that cannot be read back is simply not measured
                parsed = None
            if parsed is None or any(p is None for p in parsed):
                per_sample = []
                break
            per_sample.append([int(p[0]) for p in parsed])  # type: ignore[index]
        if len(per_sample) < 2 or any(vote([s[k] for s in per_sample]) != int(row[2]) for k, row in enumerate(group)):
            unread += len(group)
            continue
        for k, (qid, docid, _, _) in enumerate(group):
            out[(qid, docid)] = [s[k] for s in per_sample]
    return out, unread


def _calls(rows: Iterable[tuple[str, str, int, str | None]]) -> list[list[tuple[str, str, int, str | None]]]:
    """Consecutive rows of one topic with one raw reply: the judgments one call (with its samples) gave."""
    groups: list[list[tuple[str, str, int, str | None]]] = []
    for row in rows:
        if row[3] is None:
            continue
        if groups and groups[-1][0][0] == row[0] and groups[-1][0][3] == row[3]:
            groups[-1].append(row)
        else:
            groups.append([row])
    return groups


def _replies(raw: str | None) -> list[str]:
    """The samples' replies kept in a raw reply: a JSON list of them (several samples), else none."""
    try:
        value = json.loads(raw or "")
    except ValueError:
        return []
    if isinstance(value, list) and all(isinstance(v, str) or v is None for v in value):
        return [v for v in value if v]
    return []


def workspace_label_stability(ws: Workspace, judge_id: int, threshold: int = 1) -> LabelStability | None:
    """The label stability of the workspace's judge `judge_id` over all its judgments; None when it asked once
    per pair (samples 1), so that there is nothing to compare."""
    stats = next((s for s in ws.judge_stats() if s.id == judge_id), None)
    samples = int(stats.params.get("samples", 1)) if stats is not None else 1
    if samples < 2:
        return None
    judged = ws.judgments(direct=True)
    judged = judged[judged["judge_id"] == judge_id].sort_values("id")
    raws = ws.raw_replies(judge_id)  # the same rows (successful, not copied), in the same id order
    if len(raws) != len(judged):
        return None
    rows = zip(judged["query_id"].astype(str), judged["doc_id"].astype(str), judged["grade"].astype(int), raws)
    grades, unread = sample_grades(rows)
    return label_stability(grades, threshold, samples=samples, unread=unread)


# ---- new-run bias ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NewRunBias:
    """Each pooled run's rank under people's grades, and with the pairs only it contributed graded by the model."""

    runs: pd.DataFrame  # run, people, filled, left_out, rank, filled_rank, left_out_rank, shift, own, own_filled
    measure: str
    depth: int

    @property
    def measured(self) -> pd.DataFrame:
        """The runs whose own pairs the model graded (some of them): the ones the shift says something of."""
        return self.runs[self.runs["own_filled"] > 0]

    @property
    def mean_abs_shift(self) -> float:
        """The mean absolute rank shift over the measured runs (nan when none is)."""
        part = self.measured
        return float(part["shift"].abs().mean()) if len(part) else float("nan")

    @property
    def mean_shift(self) -> float:
        """The mean signed shift (negative: runs move up, favoured, when the model fills their holes)."""
        part = self.measured
        return float(part["shift"].mean()) if len(part) else float("nan")

    def as_dict(self) -> dict:
        return {"measure": self.measure, "depth": self.depth, "mean_abs_shift": _num(self.mean_abs_shift),
                "mean_shift": _num(self.mean_shift),
                "runs": [{k: (_num(v) if isinstance(v, float) else v) for k, v in row.items()}
                         for row in self.runs.to_dict("records")]}


def new_run_bias(people: pd.DataFrame, model: pd.DataFrame, runs: Mapping[str, Any], measure: str = "nDCG@10", *,
                 depth: int = 10, rel_level: int = 1) -> NewRunBias:
    """Leave each run out of the pool of `runs` at `depth`, fill its own pairs with `model`'s grades, rank it.

    people, model: qrels frames (query_id, doc_id, relevance); runs: {name: run}. A run's rank is 1 + the
    number of other runs (scored on people's grades) scoring more. `filled_rank`: its rank when its own pairs
    have the model's grade where the model gave one (pairs it did not grade stay unjudged); `left_out_rank`:
    with its own pairs unjudged (`trecbench.pooling.loo`); shift = filled_rank - rank.
    """
    from trecbench.evaluation import evaluate
    from trecbench.pooling.loo import own_pairs
    from trecbench.pooling.pool import build_pool
    from trecbench.pooling.rank import named_runs

    frames = named_runs(runs)
    people = _qrels(people)
    model = _qrels(model)
    pool = build_pool(frames, depth=depth)
    full = evaluate(people, frames, [measure], rel_level=rel_level).iloc[:, 0]
    keys = pd.MultiIndex.from_arrays([people["query_id"], people["doc_id"]])
    model_keys = pd.MultiIndex.from_arrays([model["query_id"], model["doc_id"]])
    rows = []
    for name, frame in frames.items():
        mine = own_pairs(pool.candidates, name)
        own = pd.MultiIndex.from_arrays([mine["query_id"].astype(str), mine["doc_id"].astype(str)])
        reduced = people[~keys.isin(own)]
        fill = model[model_keys.isin(own)]
        left = float(evaluate(reduced, {name: frame}, [measure], rel_level=rel_level).iloc[0, 0])
        filled = float(evaluate(pd.concat([reduced, fill], ignore_index=True), {name: frame}, [measure],
                                rel_level=rel_level).iloc[0, 0])
        others = full.drop(index=name).to_numpy()
        rank = int((others > float(full[name])).sum()) + 1
        filled_rank = int((others > filled).sum()) + 1
        rows.append({"run": name, "people": float(full[name]), "filled": filled, "left_out": left, "rank": rank,
                     "filled_rank": filled_rank, "left_out_rank": int((others > left).sum()) + 1,
                     "shift": filled_rank - rank, "own": len(mine), "own_filled": len(fill)})
    return NewRunBias(pd.DataFrame(rows), measure, depth)


def _qrels(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame[["query_id", "doc_id", "relevance"]].copy()
    out["query_id"], out["doc_id"] = out["query_id"].astype(str), out["doc_id"].astype(str)
    return out.drop_duplicates(["query_id", "doc_id"], keep="last").reset_index(drop=True)


def workspace_new_run_bias(ws: Workspace, judge_id: int, runs: Mapping[str, Any], measure: str = "nDCG@10", *,
                           depth: int = 10, rel_level: int = 1) -> NewRunBias | None:
    """`new_run_bias` with people's qrels of the workspace (`trecbench.qrels.select.people_qrels`) and the
    model judge `judge_id`'s latest grades; None with fewer than two runs or no people's grades."""
    from trecbench.qrels.select import people_qrels

    if len(runs) < 2:
        return None
    people = people_qrels(ws)
    if people.empty:
        return None
    judged = ws.judgments(direct=True)
    judged = judged[judged["judge_id"] == judge_id].sort_values("id").drop_duplicates(["query_id", "doc_id"],
                                                                                      keep="last")
    model = judged.rename(columns={"grade": "relevance"})[["query_id", "doc_id", "relevance"]]
    model = model.assign(relevance=model["relevance"].astype(int))
    return new_run_bias(people.qrels, model, runs, measure, depth=depth, rel_level=rel_level)


def _num(v: Any) -> Any:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v
