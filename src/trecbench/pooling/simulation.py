"""Replay existing qrels through pooling strategies: relevant documents found per judgment spent.

The pool is the depth-k union of the runs; each strategy judges it topic by topic, the judgment of a
document being its grade in the qrels (>= rel_level: relevant; absent from the qrels or below:
not relevant, as in Losada et al.'s experiments). Counts are summed over the topics the qrels judge,
after the same share of each topic's pool has been judged.
"""
from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from trecbench.errors import Problem
from trecbench.pooling.pool import DEFAULT_DEPTH, Pool, build_pool
from trecbench.pooling.rank import RunLike
from trecbench.pooling.strategies import Strategy, get_strategy

DEFAULT_AT = (0.1, 0.25, 0.5, 1.0)


def simulate(
    qrels: RunLike,
    runs: RunLike | Iterable[RunLike] | Mapping[str, RunLike],
    strategies: Sequence[str | Strategy] = ("depth", "mtf", "maxmean"),
    *,
    depth: int | None = DEFAULT_DEPTH,
    at: Sequence[float] = DEFAULT_AT,
    rel_level: int = 1,
    pool: Pool | None = None,
) -> tuple[pd.DataFrame, list[Problem]]:
    """Relevant documents found by each strategy after judging each share `at` of every topic's pool.

    Returns a frame with a row per (strategy, share): judgments spent, relevant found, relevant per
    judgment, and recall (share of the pool's relevant documents found); and the problems to report
    (topics the qrels do not judge, pooled documents the qrels do not list).
    """
    if isinstance(qrels, pd.DataFrame):
        qrels_df = qrels
        where = str(qrels.attrs.get("path", "qrels"))
    else:
        from trecbench.qrels import read_qrels

        qrels_df, where = read_qrels(qrels), str(qrels)
    if pool is None:
        pool = build_pool(runs, depth=depth)
    problems = list(pool.problems)
    grades = dict(zip(zip(qrels_df["query_id"].astype(str), qrels_df["doc_id"].astype(str)),
                      qrels_df["relevance"].astype(int)))
    judged_topics = set(qrels_df["query_id"].astype(str))
    topics = [t for t in pool.topics if t in judged_topics]
    skipped = [t for t in pool.topics if t not in judged_topics]
    if skipped:
        problems.append(Problem(where, 0, f"{len(skipped)} pooled topic(s) not judged in the qrels, left out: "
                                          f"{' '.join(skipped[:10])}{' ...' if len(skipped) > 10 else ''}"))
    c = pool.candidates[pool.candidates["query_id"].isin(topics)]
    known = np.array([(q, d) in grades for q, d in zip(c["query_id"], c["doc_id"])], dtype=bool)
    if len(c) and not known.all():
        problems.append(Problem(where, 0, f"{int((~known).sum())} of {len(c)} pooled documents are not in the qrels; "
                                          f"they count as not relevant"))
    size = c.groupby("query_id", sort=False).size()
    relevant_in_pool = sum(grades.get((q, d), 0) >= rel_level for q, d in zip(c["query_id"], c["doc_id"]))
    rows = []
    for strategy in strategies:
        strat = get_strategy(strategy) if isinstance(strategy, str) else strategy
        found = _replay(pool, strat, topics, grades, rel_level)
        for share in at:
            spent = relevant = 0
            for topic in topics:
                n = min(len(found[topic]), math.ceil(share * int(size.get(topic, 0)) - 1e-9))
                spent += n
                relevant += int(sum(found[topic][:n]))
            rows.append({"strategy": strat.name, "share": share, "judgments": spent, "relevant": relevant,
                         "relevant_per_judgment": relevant / spent if spent else 0.0,
                         "recall": relevant / relevant_in_pool if relevant_in_pool else 0.0})
    return pd.DataFrame(rows), problems


def _replay(pool: Pool, strategy: Strategy, topics: list[str], grades: dict, rel_level: int) -> dict[str, list[bool]]:
    """Each topic's judgments in the order the strategy asked for them (True: relevant)."""
    from trecbench.pooling.session import JudgingSession

    session = JudgingSession(pool, strategy, topics=topics)
    found: dict[str, list[bool]] = {t: [] for t in topics}
    for qid, doc in session:
        relevant = grades.get((qid, doc), 0) >= rel_level
        found[qid].append(relevant)
        session.record(qid, doc, relevant)
    return found


def wide(table: pd.DataFrame) -> pd.DataFrame:
    """One row per strategy, `relevant found (judgments)` per share: the printed summary."""
    out = {}
    for strategy, rows in table.groupby("strategy", sort=False):
        out[strategy] = {f"{share:.0%}": f"{rel} / {spent} ({rpj:.3f})"
                         for share, rel, spent, rpj in zip(rows["share"], rows["relevant"], rows["judgments"],
                                                            rows["relevant_per_judgment"])}
    frame = pd.DataFrame.from_dict(out, orient="index")
    frame.index.name = "strategy"
    return frame
