"""Drafting a workspace's nuggets, start to end: `draft_nuggets` with a model or extractively.

    from trecbench import Workspace, draft_nuggets
    from trecbench.llm import ModelConfig
    run = draft_nuggets(Workspace("mybench"), ModelConfig("openai/gpt-4o-mini"), keep=20, max_cost=5.0)
    run.report.complete, run.report.incomplete
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from trecbench.nuggets.drafting.common import DraftReport, plan_topics
from trecbench.nuggets.relevant import relevant_by_topic
from trecbench.store.workspace import Workspace


@dataclass
class DraftRun:
    """Who drafted, how many topics were to draft, what happened, and for a dry run what it would take."""

    drafter: str
    todo: list[str]
    skipped: list[str]
    report: DraftReport
    plan: Any = None  # trecbench.llm.Plan of a dry run (calls, tokens, dollars)


def draft_nuggets(ws: Workspace, config: Any = None, *, min_grade: int = 1, window: int = 10, max_nuggets: int = 30,
                  keep: int = 20, only: Iterable[str] = (), redraft: bool = False, max_cost: Any = None,
                  dry_run: bool = False, on_start: Callable[[DraftRun], None] | None = None,
                  on_progress: Callable[[DraftReport, str], None] | None = None) -> DraftRun:
    """Draft the nuggets of every topic still to draft, from its judged-relevant documents (grade >= min_grade).

    config: a `trecbench.llm.ModelConfig` (AutoNuggetizer's procedure with that model: `window`
    documents a call, a running list of at most `max_nuggets`), or None for the extractive drafter.
    `keep` nuggets are kept per topic, vital first. Raises ValueError for a topic that is not in the
    workspace, or for `dry_run` without a model.
    """
    only = tuple(only)
    relevant = relevant_by_topic(ws, min_grade)
    if config is None:
        from trecbench.nuggets.drafting.extractive import DRAFTER, ExtractiveSettings, draft_extractive

        if dry_run:
            raise ValueError("a dry run is for drafting with a model (the extractive drafter calls nothing)")
        todo, skipped, _ = plan_topics(ws, DRAFTER, relevant, only, redraft)
        run = DraftRun(DRAFTER, todo, skipped, DraftReport())
        if on_start is not None:
            on_start(run)
        run.report = draft_extractive(ws, ExtractiveSettings(min_grade=min_grade, keep=keep), only=only,
                                      redraft=redraft)
        return run
    from trecbench.llm import LLM, Budget
    from trecbench.nuggets.drafting.llm import DraftSettings, draft_with_llm, drafter_name

    settings = DraftSettings(min_grade=min_grade, window=window, max_nuggets=max_nuggets, keep=keep)
    drafter = drafter_name(config.model)
    todo, skipped, _ = plan_topics(ws, drafter, relevant, only, redraft)
    run = DraftRun(drafter, todo, skipped, DraftReport())
    if on_start is not None:  # before the client, whose transport may import litellm (seconds)
        on_start(run)
    client = LLM(config, cache=ws.path / "bench.sqlite", budget=Budget.of(max_cost),
                 dry_run=dry_run)
    try:
        run.report = client.run(draft_with_llm(ws, client, settings, only=only, redraft=redraft, corpus=ws.corpus(),
                                               on_progress=on_progress))
    finally:
        client.close()
    if dry_run:
        run.plan = client.plan
    return run
