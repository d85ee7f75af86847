"""From many judgments to one grade per (topic, document): the qrels every command of a workspace uses.

Selection, one grade per pair:
- `judge=NAME`: that judge's most recent judgment of each pair.
- `prefer="human"` (default): a person's most recent judgment, else an imported one, else a model's.
- `majority=True`: the most common grade among the judges' latest judgments; a tie goes to the lower
  grade (the conservative choice).

Propagation, the one rule for duplicate groups: a pool candidate without a grade of its own takes the
grade of its duplicate group's representative when that was judged, else of the group's first judged
member in judging order; it is marked as propagated (iteration `propagated`, `propagated_from` the
member it copies). A member judged itself keeps its own grade; a negative grade (pooled, not judged)
is not lent.

`workspace_qrels` runs both on a workspace: `qrels export`, `pool export-qrels` (with a pool file),
the report, the release, the demo and nugget drafting all get their qrels from it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

KIND_ORDER = {"human": 0, "import": 1, "model": 2}
PREFER = ("human", "model", "latest")


@dataclass(frozen=True)
class WorkspaceQrels:
    """The workspace's qrels and how they were made."""

    qrels: pd.DataFrame  # query_id, iteration, doc_id, relevance, judge, propagated_from (query_id, doc_id order)
    judged: int  # pairs graded by a judgment of their own
    propagated: int  # pairs given a duplicate's grade
    pool: pd.DataFrame | None  # the stored pool whose groups propagated (None: the workspace has none)
    policy: str  # "prefer human", "judge NAME", "majority"
    unjudged: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["query_id", "doc_id"]))
    # ^ pool candidates with no grade, neither their own nor a duplicate's

    @property
    def empty(self) -> bool:
        return self.qrels.empty


def workspace_qrels(ws: Any, *, judge: str | None = None, prefer: str = "human", majority: bool = False,
                    pool: str | None = None, qid: str | None = None) -> WorkspaceQrels:
    """The workspace's judgments as qrels: one grade per pair (see the module doc), duplicates propagated.

    ws: a `Workspace` or its path. pool: the stored pool whose duplicate groups propagate grades (default:
    the newest; InputError for a name the workspace does not have). qid: that topic's qrels only (only its
    judgments are read). Raises ValueError for an unknown
    `judge` or `prefer`. A workspace without judgments gives empty qrels.
    """
    from trecbench.store import Workspace
    from trecbench.store.workspace import load_pool

    ws = ws if isinstance(ws, Workspace) else Workspace(ws)
    candidates = load_pool(ws, pool, qid=qid)
    judgments = ws.judgments() if qid is None else ws.judgments(qid=qid)
    policy = f"judge {judge}" if judge else ("majority" if majority else f"prefer {prefer}")
    if judgments.empty:
        grades = pd.DataFrame({"query_id": pd.Series([], dtype=object), "doc_id": pd.Series([], dtype=object),
                               "relevance": pd.Series([], dtype="int64"), "judge": pd.Series([], dtype=object)})
    else:
        grades = select_grades(judgments, judge=judge, prefer=prefer, majority=majority)
    qrels, propagated = propagated_qrels(grades, candidates)
    return WorkspaceQrels(qrels, len(qrels) - propagated, propagated, candidates, policy,
                          unjudged_candidates(candidates, qrels))


def unjudged_candidates(pool: Any, qrels: pd.DataFrame) -> pd.DataFrame:
    """Pool candidates (query_id, doc_id, pool order) that the qrels give no grade >= 0."""
    frame = _candidates(pool)
    if frame is None or frame.empty:
        return pd.DataFrame(columns=["query_id", "doc_id"])
    graded = qrels[qrels["relevance"] >= 0]
    have = pd.MultiIndex.from_arrays([graded["query_id"].astype(str), graded["doc_id"].astype(str)])
    keys = pd.MultiIndex.from_arrays([frame["query_id"].astype(str), frame["doc_id"].astype(str)])
    return frame.loc[~keys.isin(have), ["query_id", "doc_id"]].reset_index(drop=True)


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
    if prefer not in PREFER:
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


def propagate(grades: pd.DataFrame, pool: Any) -> tuple[pd.DataFrame, int]:
    """Grades plus one row per pool candidate that has none but whose duplicate group has a judged member.

    grades: query_id, doc_id, relevance (and judge, kept). pool: a `Pool`, its candidates, or None.
    Returns (grades with `propagated_from`: None for the given rows, the source docid for the added ones;
    the number added). The input is not changed.
    """
    out = grades.copy()
    out["propagated_from"] = None
    frame = _candidates(pool)
    if frame is None or frame.empty or frame["group"].isna().all() or out.empty:
        return out, 0
    members = frame.dropna(subset=["group"]).reset_index(drop=True)
    members = members.assign(query_id=members["query_id"].astype(str), doc_id=members["doc_id"].astype(str),
                             group=members["group"].astype(str), _order=range(len(members)))
    if "representative" not in members:
        members["representative"] = members["doc_id"] == members["group"]
    keyed = out.assign(query_id=out["query_id"].astype(str), doc_id=out["doc_id"].astype(str))
    keyed = keyed.drop_duplicates(["query_id", "doc_id"], keep="first")
    lenders = members.merge(keyed[keyed["relevance"] >= 0], on=["query_id", "doc_id"], how="inner")
    # the representative's grade when it was judged, else the first judged member's in judging order
    lenders = lenders.sort_values(["representative", "_order"], ascending=[False, True], kind="stable")
    lenders = lenders.groupby(["query_id", "group"], sort=False).head(1)
    keep = ["query_id", "group", "doc_id", "relevance"] + (["judge"] if "judge" in out else [])
    source = lenders[keep].rename(columns={"doc_id": "propagated_from"})
    have = pd.MultiIndex.from_arrays([keyed["query_id"], keyed["doc_id"]])
    todo = members[~pd.MultiIndex.from_arrays([members["query_id"], members["doc_id"]]).isin(have)]
    added = todo[["query_id", "doc_id", "group", "_order"]].merge(source, on=["query_id", "group"], how="inner")
    added = added.sort_values("_order").drop(columns=["group", "_order"]).drop_duplicates(["query_id", "doc_id"])
    if added.empty:
        return out, 0
    return pd.concat([out, added[[c for c in out.columns if c in added.columns]]], ignore_index=True), len(added)


def propagated_qrels(grades: pd.DataFrame, pool: Any) -> tuple[pd.DataFrame, int]:
    """Qrels rows (`to_qrels`) of the grades with duplicates propagated (`propagate`), and how many were."""
    grades, propagated = propagate(grades, pool)
    return to_qrels(grades), propagated


def _candidates(pool: Any) -> pd.DataFrame | None:
    """A pool's candidates frame, whether given a `Pool`, its candidates, or None."""
    if pool is None:
        return None
    return pool.candidates if hasattr(pool, "candidates") else pool


def to_qrels(grades: pd.DataFrame) -> pd.DataFrame:
    """Qrels rows; a grade lent by a duplicate says `propagated` in the iteration column, which trec_eval ignores."""
    frame = grades.copy()
    for column in ("judge", "propagated_from"):
        if column not in frame:
            frame[column] = None
    frame["relevance"] = frame["relevance"].astype("int64")
    frame["iteration"] = ["propagated" if isinstance(p, str) and p else "0" for p in frame["propagated_from"]]
    frame = frame.sort_values(["query_id", "doc_id"]).reset_index(drop=True)
    return frame[["query_id", "iteration", "doc_id", "relevance", "judge", "propagated_from"]]
