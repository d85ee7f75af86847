"""Per-topic counts of a qrels frame: judged documents, relevant ones, and how many got each grade."""
from __future__ import annotations

import pandas as pd


def qrels_stats(qrels: pd.DataFrame, *, total: bool = True) -> pd.DataFrame:
    """One row per topic (file order) with `judged` (grade >= 0), `relevant` (grade > 0) and `rel=G` per grade G.

    A negative grade means "in the pool, not judged": it is not counted as judged but gets its own
    `rel=-1` column. With `total`, a last row `all` sums every column.
    """
    topics = qrels["query_id"].astype(str)
    grades = qrels["relevance"].astype("int64")
    by_grade = pd.crosstab(pd.Categorical(topics, categories=pd.unique(topics)), grades)
    by_grade.columns = [f"rel={g}" for g in by_grade.columns]
    out = pd.DataFrame(
        {
            "judged": by_grade[[c for c in by_grade.columns if int(c[4:]) >= 0]].sum(axis=1),
            "relevant": by_grade[[c for c in by_grade.columns if int(c[4:]) > 0]].sum(axis=1),
        }
    ).join(by_grade)
    out.index = pd.Index(out.index.astype(object), name="query_id", dtype=object)
    if total:
        out.loc["all"] = out.sum(axis=0)
    return out.astype("int64")
