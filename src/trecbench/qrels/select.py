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

The selection is one rule over plain judgment rows (`choose_grades`, tuples as SQLite gives them): a
frame's rows go through it too (`select_grades`), so a topic's grades for the web app's nugget page and
the whole workspace's for an export are chosen by the same code. On 50,000 judgments, reading them as
rows and choosing costs less CPU than reading them as a frame and selecting with pandas did; on one
topic's 500 it is about a tenth.

`workspace_qrels` runs both on a workspace: `qrels export`, `pool export-qrels` (with a pool file),
the report, the release, the demo and nugget drafting all get their qrels from it.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:  # pandas is imported by the functions that make frames: choosing grades as rows needs none
    import pandas as pd

    from trecbench.store.workspace import Workspace, WorkspaceLike
    from trecbench.versions.register import Stale

KIND_ORDER = {"human": 0, "import": 1, "model": 2}
PREFER = ("human", "model", "latest")
PREFER_ORDER = {"human": KIND_ORDER, "model": {"model": 0, "import": 1, "human": 2},
                "latest": {}}  # judge kinds in the order each `prefer` takes them (latest: any kind)


@dataclass(frozen=True)
class WorkspaceQrels:
    """The workspace's qrels and how they were made."""

    qrels: pd.DataFrame  # query_id, iteration, doc_id, relevance, judge, propagated_from (query_id, doc_id order)
    judged: int  # pairs graded by a judgment of their own
    propagated: int  # pairs given a duplicate's grade
    pool: pd.DataFrame | None  # the stored pool whose groups propagated (None: the workspace has none)
    policy: str  # "prefer human", "judge NAME", "majority"
    unjudged: pd.DataFrame = field(default_factory=lambda: _no_pairs())
    # ^ pool candidates with no grade, neither their own nor a duplicate's
    left_out: int = 0  # judged pairs of older corpus versions left out (not in the current one, or changed)
    corpus_version: str | None = None  # the current corpus version, once the workspace was updated to another

    @property
    def empty(self) -> bool:
        return self.qrels.empty


def workspace_qrels(ws: WorkspaceLike, *, judge: str | None = None, prefer: str = "human", majority: bool = False,
                    pool: str | None = None, qid: str | None = None,
                    kinds: tuple[str, ...] | None = None) -> WorkspaceQrels:
    """The workspace's judgments as qrels: one grade per pair (see the module doc), duplicates propagated.

    ws: a `Workspace` or its path. pool: the stored pool whose duplicate groups propagate grades (default:
    the newest that is not a validation sample or an audit queue, which hold copies of pairs without their
    groups; InputError for a name the workspace does not have). qid: that topic's qrels only (only its
    judgments are read). kinds: only judgments by judges of these kinds (("human", "import"): the qrels of
    people, `trecbench.judging.holes`). Raises ValueError for an unknown
    `judge` or `prefer`. A workspace without judgments gives empty qrels.
    """
    from trecbench.store import as_workspace
    from trecbench.store.workspace import load_pool
    from trecbench.versions.register import stale_judgments

    ws = as_workspace(ws)
    candidates = load_pool(ws, pool if pool is not None else grouping_pool(ws), qid=qid)
    judgments = ws.grade_rows(qid=qid)
    if kinds is not None:
        judgments = [row for row in judgments if row[6] in kinds]
    stale = stale_judgments(ws, qid=qid)
    if stale is not None and stale.rows:
        gone = {row[0] for row in stale.rows}
        judgments = [row for row in judgments if row[0] not in gone]
    policy = f"judge {judge}" if judge else ("majority" if majority else f"prefer {prefer}")
    policy += f" ({', '.join(kinds)} only)" if kinds is not None else ""
    grades = grades_frame(choose_grades(judgments, judge=judge, prefer=prefer, majority=majority) if judgments else [])
    qrels, propagated = propagated_qrels(grades, candidates)
    left_out = 0
    if stale is not None:
        qrels, propagated, left_out = current_version_qrels(ws, stale, qrels, propagated)
    return WorkspaceQrels(qrels, len(qrels) - propagated, propagated, candidates, policy,
                          unjudged_candidates(candidates, qrels), left_out, stale.version if stale else None)


PEOPLE = ("human", "import")  # the judges whose grades are people's: a new run's holes are the pairs they did not grade


def people_qrels(ws: WorkspaceLike) -> WorkspaceQrels:
    """The workspace's qrels of people: judgments by people and imports only (`kinds=PEOPLE`), duplicates
    propagated as everywhere (`trecbench.judging.holes`, the new-run bias of `judge validate`)."""
    return workspace_qrels(ws, kinds=PEOPLE)


def current_version_qrels(ws: Workspace, stale: "Stale", qrels: pd.DataFrame,
                          propagated: int) -> tuple[pd.DataFrame, int, int]:
    """The qrels of pairs whose docid is a passage of the current corpus version (a duplicate's grade lent to
    a docid of an older version goes too), the propagated count among them, and how many judged pairs were
    left out, said in a note line (logged as a warning: never silently)."""
    from trecbench.versions.register import current_docids

    have = current_docids(ws, stale, qrels["doc_id"].astype(str).unique().tolist())
    keep = qrels["doc_id"].astype(str).isin(have)
    dropped = qrels[~keep]
    qrels = qrels[keep].reset_index(drop=True)
    propagated -= int(dropped["propagated_from"].notna().sum()) if len(dropped) else 0
    kept = set(zip(qrels["query_id"].astype(str), qrels["doc_id"].astype(str)))
    pairs = {(str(q), str(d)) for _, q, d in stale.rows} | set(zip(dropped["query_id"].astype(str),
                                                                    dropped["doc_id"].astype(str)))
    left_out = len(pairs - kept)
    if left_out:
        logging.getLogger("trecbench.qrels").warning(
            "note: %d judged pair%s of older corpus versions left out of the qrels (not in corpus version %s, or "
            "its text changed since): `trecbench corpus changes` lists them", left_out, "s" * (left_out != 1),
            stale.version)
    return qrels, propagated, left_out


def grouping_pool(ws: Workspace) -> str | None:
    """The pool whose duplicate groups propagate grades by default: the newest pooled one, not a judging
    sample drawn from it (validation sample, audit queue); None, the newest of all, when there is only those."""
    from trecbench.judging.samples import is_pool_of_runs

    # an update's review pool has no duplicate groups: the pool of runs before it still lends grades
    return next((p.name for p in reversed(ws.pools()) if is_pool_of_runs(p.strategy)), None)


def unjudged_candidates(pool: Any, qrels: pd.DataFrame) -> pd.DataFrame:
    """Pool candidates (query_id, doc_id, pool order) that the qrels give no grade >= 0."""
    import pandas as pd

    frame = _candidates(pool)
    if frame is None or frame.empty:
        return _no_pairs()
    graded = qrels[qrels["relevance"] >= 0]
    have = pd.MultiIndex.from_arrays([graded["query_id"].astype(str), graded["doc_id"].astype(str)])
    keys = pd.MultiIndex.from_arrays([frame["query_id"].astype(str), frame["doc_id"].astype(str)])
    return frame.loc[~keys.isin(have), ["query_id", "doc_id"]].reset_index(drop=True)


def latest_per_judge(judgments: pd.DataFrame) -> pd.DataFrame:
    """The rows (id order) of each judge's most recent judgment of each pair (`latest_judgments`)."""
    rows = zip(*(judgments[c].tolist() for c in ("id", "query_id", "doc_id", "grade", "judge_kind", "judge")))
    ids = {i for i, _ in latest_judgments(rows).values()}
    return judgments[judgments["id"].isin(ids)].sort_values("id")


def latest_judgments(rows: Iterable[tuple]) -> dict[tuple, tuple[int, Any]]:
    """{(qid, docid, judge kind, judge): (id, grade)}: each judge's most recent (highest id) judgment of each
    pair, from rows (id, qid, docid, grade, judge kind, judge) in any order."""
    out: dict[tuple, tuple[int, Any]] = {}
    for i, qid, docid, grade, kind, name in rows:
        key = (qid, docid, kind, name)
        seen = out.get(key)
        if seen is None or i > seen[0]:
            out[key] = (i, grade)
    return out


def judge_reference(text: str) -> tuple[str, str | None]:
    """(name, kind or None) of a judge as given to `--judge`: its name, or the report's `NAME (kind)`."""
    for kind in KIND_ORDER:
        if text.endswith(f" ({kind})"):
            return text[: -len(kind) - 3], kind
    return text, None


def select_grades(judgments: pd.DataFrame, *, judge: str | None = None, prefer: str = "human",
                  majority: bool = False) -> pd.DataFrame:
    """One row per pair (query_id, doc_id order): query_id, doc_id, relevance, judge (the chosen judgment's
    judge label): `choose_grades` over the frame's rows."""
    columns = ("id", "query_id", "doc_id", "grade", "status", "propagated_from", "judge_kind", "judge")
    return grades_frame(choose_grades(zip(*(judgments[c].tolist() for c in columns)), judge=judge, prefer=prefer,
                                      majority=majority))


def grades_frame(chosen: list[tuple[Any, Any, int, str]]) -> pd.DataFrame:
    """`choose_grades`' rows as a frame: query_id, doc_id, relevance, judge."""
    import pandas as pd

    qids, docids, grades, labels = zip(*chosen) if chosen else ((), (), (), ())
    return pd.DataFrame({"query_id": pd.Series(qids, dtype=object), "doc_id": pd.Series(docids, dtype=object),
                         "relevance": pd.Series(grades, dtype="int64"), "judge": pd.Series(labels, dtype=object)})


def choose_grades(rows: Iterable[tuple], *, judge: str | None = None, prefer: str = "human",
                  majority: bool = False) -> list[tuple[Any, Any, int, str]]:
    """The selection rule (module doc), over plain judgment rows: (qid, docid, grade, judge label) of each
    pair, sorted by (qid, docid).

    rows: (id, qid, docid, grade, status, propagated_from, judge kind, judge name) in any order, e.g. a
    topic's rows as SQLite gives them. Only successful judgments of their own count (status "ok", no
    `propagated_from`): a failure is never a grade. Raises ValueError when no judgment is by `judge`, or for
    an unknown `prefer`."""
    name, kind = judge_reference(judge) if judge is not None else (None, None)
    # status "ok" and no source (None, or NaN from a frame)
    own = [(i, q, d, g, k, j) for i, q, d, g, status, source, k, j in rows
           if status == "ok" and (source is None or source != source)
           and (name is None or (j == name and (kind is None or k == kind)))]
    if judge is not None and not own:
        raise ValueError(f"no judgments by {judge!r}")
    best: dict[Any, dict[Any, tuple]] = {}  # {qid: {docid: (rank, grade, label)}}, the lowest rank
    if majority and judge is None:
        votes: dict[tuple, int] = {}
        for (qid, docid, _, _), (_, grade) in latest_judgments(own).items():
            votes[(qid, docid, grade)] = votes.get((qid, docid, grade), 0) + 1
        for (qid, docid, grade), n in votes.items():
            rank = (-n, grade)  # the most votes; a tie goes to the lower grade
            docs = best.setdefault(qid, {})
            seen = docs.get(docid)
            if seen is None or rank < seen[0]:
                docs[docid] = (rank, grade, "majority")
    else:
        if prefer not in PREFER:
            raise ValueError(f"prefer must be human, model or latest, not {prefer!r}")
        order = PREFER_ORDER[prefer]
        last = len(order)  # a kind the order does not name comes after the named ones
        # the preferred kind first, then the most recent judgment (of that kind the most recent overall is
        # its judge's latest, so each judge's latest need not be found first)
        for i, qid, docid, grade, kind_, judge_ in own:
            rank = (order.get(kind_, last), -i)
            docs = best.setdefault(qid, {})
            seen = docs.get(docid)
            if seen is None or rank < seen[0]:
                docs[docid] = (rank, grade, judge_)
    # sorted a topic at a time: strings compare faster than (qid, docid) tuples
    return [(qid, docid, int(best[qid][docid][1]), best[qid][docid][2])
            for qid in sorted(best) for docid in sorted(best[qid])]


def propagate(grades: pd.DataFrame, pool: Any) -> tuple[pd.DataFrame, int]:
    """Grades plus one row per pool candidate that has none but whose duplicate group has a judged member.

    grades: query_id, doc_id, relevance (and judge, kept). pool: a `Pool`, its candidates, or None.
    Returns (grades with `propagated_from`: None for the given rows, the source docid for the added ones;
    the number added). The input is not changed.
    """
    import pandas as pd

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


def _no_pairs() -> pd.DataFrame:
    """An empty frame of (query_id, doc_id) pairs."""
    import pandas as pd

    return pd.DataFrame(columns=["query_id", "doc_id"])
