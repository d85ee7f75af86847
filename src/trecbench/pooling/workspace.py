"""Pools and a bench workspace: pool runs for a workspace (its topics, its corpus) and store the pool; take an
adaptive pool up again where a judge left it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence, TYPE_CHECKING

from trecbench.pooling.pool import DEFAULT_DEPTH, Pool, PoolInfo, build_pool
from trecbench.pooling.strategies import is_adaptive  # noqa: F401  (its home is the registry; taken here too)

if TYPE_CHECKING:
    from trecbench.store.workspace import Workspace, WorkspaceLike


def pool_runs(runs: Sequence[Any], *, workspace: WorkspaceLike | None = None, name: str | None = None, topics: str | None = None,
              corpus: str | None = None, strategy: str = "depth", params: dict | None = None,
              depth: int | None = DEFAULT_DEPTH, budget: int | None = None, dedup: str = "none",
              threshold: float = 0.9) -> tuple[Pool, str | None]:
    """Pool run files (`build_pool`), for a workspace if given, and store the pool there.

    topics, corpus: sources (TSV/JSONL/irds:); with a workspace, its topics and corpus unless given.
    params: the strategy's parameters (`get_strategy(strategy, **params)`).
    name: the pool's name in the workspace (default: STRATEGY-DEPTH); a name is used once.
    Returns the pool and the name it was stored under (None without a workspace). ValueError for a
    bad strategy, parameter or name; InputError for unreadable files.
    """
    from trecbench.pooling.strategies import get_strategy

    ws = None
    if workspace is not None:
        from trecbench.store import as_workspace

        ws = as_workspace(workspace)
        corpus = corpus or ws.corpus_source
    if dedup != "none" and not corpus:
        raise ValueError(f"--dedup {dedup} needs the documents' text: give --corpus")
    chosen = get_strategy(strategy, **(params or {}))
    qids = None
    if topics:
        from trecbench.topics import read_topics

        qids = [t.qid for t in read_topics(topics)]
    elif ws is not None and ws.topics():
        qids = list(ws.topics())
    opened = None
    if corpus:
        from trecbench.corpus import open_corpus

        opened = open_corpus(corpus)
    pool = build_pool(list(runs), depth=depth, strategy=chosen, budget=budget, topics=qids, topics_source=topics,
                      corpus=opened, dedup=dedup, threshold=threshold)
    if ws is None:
        return pool, None
    from trecbench.errors import InputError
    from trecbench.store.workspace import save_pool

    stored = name or f"{strategy}-{depth}"
    try:
        save_pool(ws, stored, strategy, pool.info.as_dict(), pool.candidates)
    except InputError as e:  # an empty pool is not stored: say why it is empty first
        raise InputError.of([*pool.problems, *e.problems]) from None
    return pool, stored


@dataclass(frozen=True)
class AdaptiveResume:
    """A stored adaptive pool, ready to judge again: what the judge already graded and what is left at most."""

    pool: Pool
    done: dict[tuple[str, str], int]  # (qid, docid) -> grade this judge gave, replayed to the strategy
    remaining: int  # judgments still to make at most (the budget per topic, or the whole pool)


def resume_adaptive(ws: Workspace, judge: str, pool: str | None = None, *, limit: int | None = None) -> AdaptiveResume:
    """The stored pool (default: the newest) as a `Pool`, with the grades `judge` (its name) already gave.

    remaining: up to the pool's budget per topic (all of a topic's candidates without one), less what
    was judged; `limit` caps it.
    """
    from trecbench.store.workspace import load_pool

    stored = load_pool(ws, pool)
    if stored is None:
        raise ValueError(f"{ws.path}: no pool is stored")
    info = PoolInfo.from_dict(stored.attrs["info"])
    mine = ws.judgments()
    mine = mine[mine["judge"] == judge].sort_values("id")
    done = {(q, d): int(g) for q, d, g in zip(mine["query_id"], mine["doc_id"], mine["grade"])}
    per_topic = info.budget or stored.groupby("query_id").size().max()
    total = min(len(stored), int(per_topic) * stored["query_id"].nunique())
    remaining = max(total - len(done), 0) if limit is None else min(limit, total)
    return AdaptiveResume(Pool(stored.reset_index(drop=True), info), done, remaining)
