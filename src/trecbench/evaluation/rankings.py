"""Rankings as trec_eval forms them: one row per topic, relevance of each retrieved document by rank.

trec_eval sorts each topic's documents by score descending, ties broken by docid descending
(strcmp), ignores the rank column, and looks each document up in the qrels: its grade if judged,
NONPOOL (-1) if the qrels do not list it, UNJUDGED (-2) if listed with a negative grade. Here the
whole run becomes a dense matrix `rel[topic, rank]`, padded with PAD after the last document, so
every measure is a few vectorised operations over rows.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

NONPOOL = -1
UNJUDGED = -2
PAD = -3


@dataclass(frozen=True)
class QrelsTable:
    """Per-topic judgment counts and a lookup of (topic, docid) -> grade, built once per qrels."""

    qids: np.ndarray  # sorted topic ids (str), trec_eval order
    rel_levels: np.ndarray  # [topic, level] count of documents judged at each grade >= 0
    num_rel: np.ndarray  # judged at grade >= rel_level
    num_nonrel: np.ndarray  # judged at 0 <= grade < rel_level
    qid_index: pd.Index  # topic id -> row
    doc_index: pd.Index  # judged docid -> code
    keys: np.ndarray  # sorted topic_row * n_docs + doc_code
    grades: np.ndarray  # grade of each key
    rel_level: int

@dataclass(frozen=True)
class Rankings:
    """One run's rankings over the evaluated topics (those present in both run and qrels)."""

    qids: np.ndarray  # evaluated topic ids, sorted as trec_eval sorts them
    rel: np.ndarray  # [topic, rank] relevance value (grade, NONPOOL, UNJUDGED, or PAD)
    num_ret: np.ndarray  # documents retrieved per topic (after the depth cut)
    docids: np.ndarray  # [topic, rank] docid (object), only built when asked for
    qrels: QrelsTable
    qrels_row: np.ndarray  # for each evaluated topic, its row in the qrels table
    rel_level: int

    @property
    def num_rel(self) -> np.ndarray:
        return self.qrels.num_rel[self.qrels_row]

    @property
    def num_nonrel(self) -> np.ndarray:
        return self.qrels.num_nonrel[self.qrels_row]

    @property
    def rel_levels(self) -> np.ndarray:
        return self.qrels.rel_levels[self.qrels_row]

    @property
    def depth(self) -> int:
        return self.rel.shape[1]


def qrels_table(qrels: pd.DataFrame, rel_level: int = 1) -> QrelsTable:
    """Count each topic's judgments by grade, as trec_eval's rel_levels, and index them for lookup."""
    qcode, quniq = pd.factorize(qrels["query_id"].astype(str))
    quniq = np.asarray(quniq, dtype=object).astype(str)
    order = np.argsort(quniq, kind="stable")
    qids = quniq[order]
    row_of = np.empty(len(order), dtype=np.int64)
    row_of[order] = np.arange(len(order))
    qrow = row_of[qcode]
    grade = qrels["relevance"].to_numpy(dtype=np.int64)
    max_grade = int(grade.max()) if len(grade) else 0
    levels = np.zeros((len(qids), max(max_grade, 0) + 1), dtype=np.int64)
    judged = grade >= 0
    np.add.at(levels, (qrow[judged], grade[judged]), 1)
    num_rel = levels[:, max(rel_level, 0):].sum(axis=1)
    num_nonrel = levels[:, : max(rel_level, 0)].sum(axis=1)
    dcode, duniq = pd.factorize(qrels["doc_id"].astype(str))
    keys = qrow * max(len(duniq), 1) + dcode
    korder = np.argsort(keys, kind="stable")
    return QrelsTable(qids, levels, num_rel, num_nonrel, pd.Index(qids), pd.Index(duniq), keys[korder],
                      grade[korder], rel_level)


def _strcmp_ranks(values: pd.Index) -> np.ndarray:
    """Position of each string in byte order (strcmp), for tie-breaking on docid."""
    order = np.asarray(values.argsort())
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(len(order))
    return ranks


def _trec_eval_order(qcode: np.ndarray, score: np.ndarray, drank: np.ndarray, n_docs: int) -> np.ndarray:
    """Row order by topic, score descending, docid descending.

    Runs are usually written sorted by topic and score already; then only ties need ordering, which
    a stable sort of nearly sorted keys does in about linear time.
    """
    n = len(qcode)
    if n > 1:
        same_topic = qcode[1:] == qcode[:-1]
        if (qcode[1:] >= qcode[:-1]).all() and (~same_topic | (score[1:] <= score[:-1])).all():
            new_group = np.ones(n, dtype=bool)
            new_group[1:] = ~same_topic | (score[1:] != score[:-1])
            if new_group.all():
                return np.arange(n)
            group = np.cumsum(new_group, dtype=np.int64)
            return np.argsort(group * n_docs + (n_docs - 1 - drank), kind="stable")
    return np.lexsort((-drank, -score, qcode))


def form_rankings(
    run: pd.DataFrame,
    qrels: QrelsTable,
    *,
    depth: int | None = None,
    float32_scores: bool = True,
    keep_docids: bool = False,
) -> Rankings:
    """Sort, cut and look up a run the way trec_eval 9 (float32 scores) or 10 (doubles) does."""
    qcodes, quniq = pd.factorize(run["query_id"])
    qmap = qrels.qid_index.get_indexer(pd.Index(quniq).astype(str))
    qcode = qmap[qcodes]
    dcodes, duniq = pd.factorize(run["doc_id"])
    duniq = pd.Index(duniq).astype(str)
    score = run["score"].to_numpy(dtype=np.float64)
    if float32_scores:
        # trec_eval 9 keeps scores in a C float: scores that differ only as doubles tie.
        score = score.astype(np.float32).astype(np.float64)
    keep = qcode >= 0  # topics without qrels are not evaluated, as in trec_eval
    if not keep.all():
        qcode, dcodes, score = qcode[keep], dcodes[keep], score[keep]
    drank = _strcmp_ranks(duniq)[dcodes]
    order = _trec_eval_order(qcode, score, drank, len(duniq))
    qcode, dcodes = qcode[order], dcodes[order]
    present, starts, counts = np.unique(qcode, return_index=True, return_counts=True)
    pos = np.arange(len(qcode)) - np.repeat(starts, counts)
    if depth is not None:
        cut = pos < depth
        qcode, dcodes, pos = qcode[cut], dcodes[cut], pos[cut]
        counts = np.minimum(counts, depth)
    row = np.repeat(np.arange(len(present)), counts)
    width = int(counts.max()) if len(counts) else 0
    # grade of each retrieved document: look (topic, docid) up in the qrels
    judged_code = qrels.doc_index.get_indexer(duniq)[dcodes]
    key = qcode * max(len(qrels.doc_index), 1) + judged_code
    at = np.searchsorted(qrels.keys, key)
    at = np.minimum(at, len(qrels.keys) - 1) if len(qrels.keys) else at
    found = (judged_code >= 0) & (len(qrels.keys) > 0)
    if len(qrels.keys):
        found &= qrels.keys[at] == key
    grades = np.where(found, qrels.grades[at] if len(qrels.keys) else 0, NONPOOL)
    grades = np.where(found & (grades < 0), UNJUDGED, grades)
    rel = np.full((len(present), width), PAD, dtype=np.int64)
    rel[row, pos] = grades
    docs = np.empty((0, 0), dtype=object)
    if keep_docids:
        docs = np.full((len(present), width), "", dtype=object)
        docs[row, pos] = np.asarray(duniq, dtype=object)[dcodes]
    return Rankings(qrels.qids[present], rel, counts.astype(np.int64), docs, qrels, present, qrels.rel_level)
