"""From many judgments to one grade per (topic, document): the policies `qrels export` offers.

- `judge=NAME`: that judge's most recent judgment of each pair.
- `prefer="human"` (default): a person's most recent judgment, else an imported one, else a model's.
- `majority=True`: the most common grade among the judges' latest judgments; a tie goes to the lower
  grade (the conservative choice).
Duplicate groups from the pool then lend a judged member's grade to unjudged members, marked as propagated.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

KIND_ORDER = {"human": 0, "import": 1, "model": 2}


@dataclass(frozen=True)
class Selection:
    qrels: pd.DataFrame  # query_id, iteration, doc_id, relevance, judge, propagated_from
    judged: int  # pairs with a judgment
    propagated: int  # pairs given a duplicate's grade


def latest_per_judge(judgments: pd.DataFrame) -> pd.DataFrame:
    return judgments.sort_values("id").groupby(["query_id", "doc_id", "judge_kind", "judge"], sort=False).tail(1)


def judge_reference(text: str) -> tuple[str, str | None]:
    """(name, kind or None) of a judge as given to `--judge`: its name, or the report's `NAME (kind)`."""
    for kind in KIND_ORDER:
        if text.endswith(f" ({kind})"):
            return text[: -len(kind) - 3], kind
    return text, None


def select_grades(judgments: pd.DataFrame, *, judge: str | None = None, prefer: str = "human",
                  majority: bool = False) -> pd.DataFrame:
    """One row per pair: query_id, doc_id, relevance, judge (the chosen judgment's judge label)."""
    ok = judgments[judgments["status"] == "ok"]
    ok = ok[ok["propagated_from"].isna()]
    if judge is not None:
        name, kind = judge_reference(judge)
        ok = ok[(ok["judge"] == name) & ((ok["judge_kind"] == kind) if kind else True)]
        if ok.empty:
            raise ValueError(f"no judgments by {judge!r}")
    latest = latest_per_judge(ok)
    if majority and judge is None:
        counts = latest.groupby(["query_id", "doc_id", "grade"]).size().rename("votes").reset_index()
        counts = counts.sort_values(["query_id", "doc_id", "votes", "grade"], ascending=[True, True, False, True])
        best = counts.groupby(["query_id", "doc_id"], sort=False).head(1)
        out = best.rename(columns={"grade": "relevance"})[["query_id", "doc_id", "relevance"]]
        out["judge"] = "majority"
        return out.reset_index(drop=True)
    if prefer not in ("human", "model", "latest"):
        raise ValueError(f"prefer must be human, model or latest, not {prefer!r}")
    ranked = latest.copy()
    if prefer == "human":
        ranked["order"] = ranked["judge_kind"].map(KIND_ORDER)
    elif prefer == "model":
        ranked["order"] = ranked["judge_kind"].map({"model": 0, "import": 1, "human": 2})
    else:
        ranked["order"] = 0
    ranked = ranked.sort_values(["query_id", "doc_id", "order", "id"], ascending=[True, True, True, False])
    best = ranked.groupby(["query_id", "doc_id"], sort=False).head(1)
    return best.rename(columns={"grade": "relevance"})[["query_id", "doc_id", "relevance", "judge"]].reset_index(drop=True)


def propagate(grades: pd.DataFrame, pool: pd.DataFrame | None) -> tuple[pd.DataFrame, int]:
    """Give unjudged members of a duplicate group the grade of the group's judged member."""
    out = grades.assign(propagated_from=None)
    if pool is None or pool.empty or pool["group"].isna().all():
        return out, 0
    members = pool.dropna(subset=["group"])[["query_id", "doc_id", "group", "representative"]]
    judged = members.merge(grades, on=["query_id", "doc_id"], how="inner")
    judged = judged.sort_values(["representative"], ascending=False).groupby(["query_id", "group"]).head(1)
    source = judged[["query_id", "group", "doc_id", "relevance", "judge"]].rename(columns={"doc_id": "source"})
    todo = members.merge(source, on=["query_id", "group"], how="inner")
    have = set(zip(grades["query_id"], grades["doc_id"]))
    missing = [(q, d) not in have for q, d in zip(todo["query_id"], todo["doc_id"])]
    todo = todo.loc[pd.Series(missing, index=todo.index, dtype=bool)]
    added = pd.DataFrame({"query_id": todo["query_id"], "doc_id": todo["doc_id"], "relevance": todo["relevance"],
                          "judge": todo["judge"], "propagated_from": todo["source"]})
    return pd.concat([out, added], ignore_index=True), len(added)


def to_qrels(grades: pd.DataFrame) -> pd.DataFrame:
    """Qrels rows; a grade lent by a duplicate says `propagated` in the iteration column, which trec_eval ignores."""
    frame = grades.copy()
    if "propagated_from" not in frame:
        frame["propagated_from"] = None
    frame["iteration"] = ["propagated" if isinstance(p, str) and p else "0" for p in frame["propagated_from"]]
    frame = frame.sort_values(["query_id", "doc_id"]).reset_index(drop=True)
    return frame[["query_id", "iteration", "doc_id", "relevance", "judge", "propagated_from"]]
