"""How big a pool is, per topic and per run: documents each run alone contributed, overlap, judged and unjudged."""
from __future__ import annotations

import numpy as np
import pandas as pd

from trecbench.pooling.pool import Pool


def pool_stats(pool: Pool, qrels: pd.DataFrame | None = None, *, rel_level: int = 1) -> dict[str, pd.DataFrame]:
    """Tables `topics`, `runs`, `topic_runs` and `overlap` describing a pool (and its judgments, given qrels).

    topics: per topic, candidates, to_judge (group representatives), duplicates; with qrels also judged
        (a grade >= 0, directly or propagated from the representative), unjudged, relevant (grade >= rel_level).
    runs: per run, topics, contributed (candidates it retrieved), unique (retrieved by no other run), and
        with qrels judged, unjudged, relevant and unique_relevant. The last row, `all`, is the whole pool.
    topic_runs: per (topic, run), contributed and unique (and judged, relevant with qrels).
    overlap: run x run, candidates both retrieved (the diagonal: what each retrieved).
    """
    c = pool.candidates
    names = [r.name for r in pool.info.runs] or sorted(set(";".join(c["runs"]).split(";")) - {""})
    has_qrels = qrels is not None
    if has_qrels:
        judged_grades = _grades(pool, qrels)
        grade = judged_grades.reindex(pd.MultiIndex.from_arrays([c["query_id"], c["doc_id"]])).to_numpy()
        judged = ~np.isnan(grade) & (np.nan_to_num(grade, nan=-1) >= 0)
        relevant = judged & (np.nan_to_num(grade, nan=-1) >= rel_level)
    per_topic = pd.DataFrame({"query_id": c["query_id"], "candidates": 1,
                              "to_judge": c["representative"].astype(np.int64),
                              "duplicates": (~c["representative"]).astype(np.int64)})
    if has_qrels:
        per_topic["judged"] = judged.astype(np.int64)
        per_topic["unjudged"] = (~judged).astype(np.int64)
        per_topic["relevant"] = relevant.astype(np.int64)
    topics = per_topic.groupby("query_id", sort=False).sum()
    topics.loc["all"] = topics.sum()
    # one row per (candidate, run that retrieved it)
    counts = c["n_runs"].to_numpy()
    row = np.repeat(np.arange(len(c)), counts)
    run_names = np.asarray(";".join(c["runs"]).split(";"), dtype=object) if len(c) else np.empty(0, dtype=object)
    run_code = pd.Index(names).get_indexer(run_names)
    long = pd.DataFrame({"query_id": c["query_id"].to_numpy()[row], "run": run_names, "contributed": 1,
                         "unique": (counts[row] == 1).astype(np.int64)})
    if has_qrels:
        long["judged"] = judged[row].astype(np.int64)
        long["unjudged"] = (~judged[row]).astype(np.int64)
        long["relevant"] = relevant[row].astype(np.int64)
        long["unique_relevant"] = (relevant[row] & (counts[row] == 1)).astype(np.int64)
    topic_runs = long.groupby(["query_id", "run"], sort=False).sum()
    runs = long.drop(columns="query_id").groupby("run", sort=False).sum().reindex(names, fill_value=0)
    runs.insert(0, "topics", long.groupby("run", sort=False)["query_id"].nunique().reindex(names, fill_value=0))
    total = {"topics": c["query_id"].nunique(), "contributed": len(c),
             "unique": int((counts == 1).sum())}
    if has_qrels:
        total.update(judged=int(judged.sum()), unjudged=int((~judged).sum()), relevant=int(relevant.sum()),
                     unique_relevant=int((relevant & (counts == 1)).sum()))
    runs.loc["all"] = pd.Series(total)
    runs.index.name = "run"
    overlap = _overlap(row, run_code, len(c), len(names))
    overlap_frame = pd.DataFrame(overlap, index=pd.Index(names, name="run"), columns=names)
    return {"topics": topics.astype(np.int64), "runs": runs.astype(np.int64), "topic_runs": topic_runs,
            "overlap": overlap_frame}


def _grades(pool: Pool, qrels: pd.DataFrame) -> pd.Series:
    """(query_id, doc_id) -> grade, duplicates' grades propagated from their representatives."""
    from trecbench.qrels.select import propagate

    full, _ = propagate(qrels, pool)
    series = pd.Series(full["relevance"].to_numpy(dtype=np.float64),
                       index=pd.MultiIndex.from_arrays([full["query_id"].astype(str), full["doc_id"].astype(str)]))
    return series[~series.index.duplicated()]


def _overlap(row: np.ndarray, run_code: np.ndarray, n_cands: int, n_runs: int) -> np.ndarray:
    """run x run counts of candidates both runs retrieved."""
    from scipy.sparse import csr_matrix

    ok = run_code >= 0
    m = csr_matrix((np.ones(int(ok.sum()), dtype=np.int64), (row[ok], run_code[ok])), shape=(n_cands, n_runs))
    return (m.T @ m).toarray()
