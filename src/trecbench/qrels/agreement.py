"""How far two judges agree: on the pairs both judged (kappa, confusion), and on the system rankings they induce.

Cohen's kappa (Cohen 1960) on all grades and binarised at a threshold; linear-weighted kappa (Cohen 1968)
with disagreement weight |a - b| between grades; per-grade over- and under-grading of B relative to A.
With runs: Kendall's tau-b and Spearman's rho between the system orderings under A and under B (as in
Voorhees 2000), and the mean per-topic tau.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from trecbench.files.shapes import QrelsLike, is_path, qrels_input


@dataclass(frozen=True)
class RankingAgreement:
    measure: str
    kendall_tau: float
    spearman_rho: float
    mean_topic_tau: float
    topics_compared: int
    scores: pd.DataFrame  # run x (A, B) mean scores


@dataclass(frozen=True)
class Agreement:
    pairs: int  # pairs both judged (grade >= 0 on both sides)
    only_a: int
    only_b: int
    confusion: pd.DataFrame  # rows: A's grade, columns: B's grade
    kappa: float
    kappa_linear: float
    kappa_binary: float
    threshold: int
    grading: pd.DataFrame  # per A grade: pairs, share B lower, same, higher, mean(B - A)
    rankings: list[RankingAgreement] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "pairs": self.pairs, "only_a": self.only_a, "only_b": self.only_b,
            "kappa": self.kappa, "kappa_linear": self.kappa_linear, "kappa_binary": self.kappa_binary,
            "threshold": self.threshold,
            "confusion": {str(a): {str(b): int(v) for b, v in row.items()} for a, row in self.confusion.iterrows()},
            "grading": self.grading.reset_index().to_dict(orient="records"),
            "rankings": [{"measure": r.measure, "kendall_tau": r.kendall_tau, "spearman_rho": r.spearman_rho,
                          "mean_topic_tau": r.mean_topic_tau, "topics_compared": r.topics_compared,
                          "scores": {run: {"A": float(row["A"]), "B": float(row["B"])}
                                     for run, row in r.scores.iterrows()}}
                         for r in self.rankings],
        }


def cohen_kappa(confusion: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Kappa from a confusion matrix; `weights` are disagreement weights (0 on the diagonal), None = unweighted."""
    n = confusion.sum()
    if n == 0:
        return float("nan")
    k = confusion.shape[0]
    w = 1.0 - np.eye(k) if weights is None else weights
    expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0)) / n
    disagreement_expected = float((w * expected).sum())
    if disagreement_expected == 0:
        return float("nan")  # both judges used a single, identical grade: kappa is undefined
    return 1.0 - float((w * confusion).sum()) / disagreement_expected


def judged(qrels: QrelsLike) -> pd.DataFrame:
    """The rows a judge actually judged: a grade >= 0, not one propagated from a duplicate (iteration
    `propagated`, or a `propagated_from` docid, as `trecbench.workspace_qrels` marks them).

    `qrels`: a qrels file's path, a DataFrame (query_id, doc_id, relevance), or the field's shapes
    (`files.shapes`: PyTerrier's qid, docno, label; {qid: {docid: grade}}; ranx Qrels; ir_measures Qrels)."""
    qrels = qrels_input(qrels)
    if is_path(qrels):
        from trecbench.qrels.trec import read_qrels

        qrels = read_qrels(qrels)
    keep = qrels["relevance"] >= 0
    if "iteration" in qrels:
        keep &= qrels["iteration"].astype(str) != "propagated"
    if "propagated_from" in qrels:
        keep &= qrels["propagated_from"].isna()
    return qrels.loc[keep, ["query_id", "doc_id", "relevance"]]


def judged_pairs(a: QrelsLike, b: QrelsLike) -> tuple[pd.DataFrame, int, int]:
    """Pairs both judged (see `judged`): columns query_id, doc_id, a, b; and counts judged by one only."""
    left = judged(a).rename(columns={"relevance": "a"})
    right = judged(b).rename(columns={"relevance": "b"})
    left = left.astype({"query_id": str, "doc_id": str})
    right = right.astype({"query_id": str, "doc_id": str})
    both = left.merge(right, on=["query_id", "doc_id"], how="inner")
    return both, len(left) - len(both), len(right) - len(both)


def agreement(a: QrelsLike, b: QrelsLike, *, threshold: int = 1) -> Agreement:
    """Agreement between qrels `a` and `b` on the pairs both judged (propagated grades are not judgments).

    ValueError when no pair is judged in both: two people judging one pool without double assignment
    share no pair, and agreement is then not defined.
    """
    both, only_a, only_b = judged_pairs(a, b)
    if both.empty:
        raise ValueError(f"no pair judged in both (A judged {only_a}, B judged {only_b})")
    grades = sorted(set(both["a"]) | set(both["b"]))
    index = {g: i for i, g in enumerate(grades)}
    matrix = np.zeros((len(grades), len(grades)), dtype=np.int64)
    np.add.at(matrix, (both["a"].map(index).to_numpy(), both["b"].map(index).to_numpy()), 1)
    values = np.asarray(grades, dtype=np.float64)
    linear = np.abs(values[:, None] - values[None, :])
    binary = np.zeros((2, 2), dtype=np.int64)
    np.add.at(binary, ((both["a"] >= threshold).astype(int).to_numpy(), (both["b"] >= threshold).astype(int).to_numpy()), 1)
    diff = both["b"] - both["a"]
    grading = pd.DataFrame({
        "pairs": both.groupby("a").size(),
        "b_lower": (diff < 0).groupby(both["a"]).mean(),
        "b_same": (diff == 0).groupby(both["a"]).mean(),
        "b_higher": (diff > 0).groupby(both["a"]).mean(),
        "mean_b_minus_a": diff.groupby(both["a"]).mean(),
    })
    grading.index.name = "a_grade"
    confusion = pd.DataFrame(matrix, index=pd.Index(grades, name="A"), columns=pd.Index(grades, name="B"))
    return Agreement(len(both), only_a, only_b, confusion, cohen_kappa(matrix), cohen_kappa(matrix, linear),
                     cohen_kappa(binary), threshold, grading)


def ranking_agreement(a: QrelsLike, b: QrelsLike, runs: list, measures: list[str], **options) -> list[RankingAgreement]:
    """Score `runs` with qrels a and with qrels b; compare the system orderings each measure gives."""
    from scipy.stats import kendalltau, spearmanr

    from trecbench.evaluation import evaluate

    per_a = evaluate(a, runs, measures, per_topic=True, **options)
    per_b = evaluate(b, runs, measures, per_topic=True, **options)
    out = []
    for m in per_a.columns:
        mean_a = per_a[m].xs("all", level="query_id")
        mean_b = per_b[m].xs("all", level="query_id")
        scores = pd.DataFrame({"A": mean_a, "B": mean_b})
        tau = kendalltau(scores["A"], scores["B"]).statistic if len(scores) > 1 else float("nan")
        rho = spearmanr(scores["A"], scores["B"]).statistic if len(scores) > 1 else float("nan")
        topic_a = per_a[m].drop("all", level="query_id").unstack("run")
        topic_b = per_b[m].drop("all", level="query_id").unstack("run")
        taus = []
        for qid in topic_a.index.intersection(topic_b.index):
            x, y = topic_a.loc[qid], topic_b.loc[qid]
            if x.nunique() > 1 and y.nunique() > 1:
                taus.append(kendalltau(x, y).statistic)
        out.append(RankingAgreement(m, float(tau), float(rho), float(np.mean(taus)) if taus else float("nan"),
                                    len(taus), scores))
    return out
