"""trec_eval's ranking order, the one home of the rule: every ranking trecbench forms comes from here.

trec_eval ranks a topic's documents by score descending and breaks ties by docid descending (strcmp,
which on UTF-8 is code point order); the rank column is ignored. trec_eval 9.0.8 keeps scores in a C
float, so two scores that differ only as doubles tie there; trec_eval 10.0 keeps doubles. Evaluation,
pooling, contexts, `write_run` and `runs sort` all rank through `trec_eval_order` (or, where docids are
gathered only for the rows that can make a cut, through `ranking_scores` and `break_ties`), so the same
file ranks the same way everywhere for a given version.
"""
from __future__ import annotations

import numpy as np

from trecbench.files.columns import Ids, order_within, sort_order

DEFAULT_VERSION = 9  # the version `trecbench eval retrieval` follows unless told otherwise


def ranking_scores(scores: np.ndarray, version: int = DEFAULT_VERSION) -> np.ndarray:
    """Scores as the given trec_eval version compares them: float32 for 9, float64 for 10 (as float64)."""
    if version not in (9, 10):
        raise ValueError(f"trec_eval version {version!r}: 9 or 10")
    scores = np.asarray(scores, dtype=np.float64)
    if version < 10:
        # a score beyond float32's range becomes +-inf, as in 9.0.8's C float; that is the rule, not a warning
        with np.errstate(over="ignore"):
            return scores.astype(np.float32).astype(np.float64)
    return scores


def trec_eval_order(topic: np.ndarray, scores: np.ndarray, doc: Ids, version: int = DEFAULT_VERSION) -> np.ndarray:
    """Row order by topic code ascending, then score descending, then docid descending (strcmp).

    `topic`: one integer per row whose ascending order is the topic order the caller wants (a qrels row,
    the order of first appearance, sorted ids); `scores`: as read from the file (compared as `version`
    compares them). Runs are usually written by topic and score already; then only ties need ordering,
    which is a sort of the tied rows alone.
    """
    score = ranking_scores(scores, version)
    topic = np.asarray(topic)
    n = len(topic)
    if n < 2:
        return np.arange(n)
    by_topic = None
    if (topic[1:] < topic[:-1]).any():
        by_topic = np.argsort(topic, kind="stable")
        topic, score = topic[by_topic], score[by_topic]
    if (( topic[1:] == topic[:-1]) & (score[1:] > score[:-1])).any():
        rows = np.arange(n) if by_topic is None else by_topic
        return rows[np.lexsort((*sort_order(doc.take(rows), descending=True), -score, topic))]
    if by_topic is None:  # in file order already: the docids need no copy
        return break_ties(topic, score, doc)
    return by_topic[break_ties(topic, score, doc.take(by_topic))]


def break_ties(topic: np.ndarray, score: np.ndarray, doc: Ids) -> np.ndarray:
    """Rows already in (topic, score descending) order, with each stretch of equal scores put in docid
    descending order; `score` as `ranking_scores` gives it. Only tied rows have their docids compared."""
    n = len(topic)
    order = np.arange(n)
    if n < 2:
        return order
    same = (topic[1:] == topic[:-1]) & (score[1:] == score[:-1])
    if not same.any():
        return order
    tied = np.zeros(n, dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    where = np.flatnonzero(tied)
    group = np.cumsum(np.r_[True, ~same])[where]
    order[where] = where[order_within(group, doc.take(where))]
    return order
