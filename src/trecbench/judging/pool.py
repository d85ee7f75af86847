"""Judging a workspace's pool with a model, start to end: `judge_pool` plans, estimates (dry run) or judges.

    from trecbench import Workspace, judge_pool
    from trecbench.llm import ModelConfig
    run = judge_pool(Workspace("mybench"), ModelConfig("openai/gpt-4o-mini"), batch=5, max_cost=2.0)
    run.report.judged, run.report.failed, run.judge.name

A dry run writes nothing to the workspace (no judgment, no logged call, no judge row): it returns the
estimate that `pool estimate` gives, with the calls the workspace's cache would answer counted as free.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from trecbench.store import Judge, Workspace, model_calls

from .llm import (Candidates, Leases, Report, Task, candidates, few_shot_examples, judge, judge_adaptive, model_judge,
                  plan_tasks)
from .prompts import Prompt, load_prompt


@dataclass(frozen=True)
class JudgingPlan:
    """What a run will do: the judge, the pool, and how many documents are still to judge."""

    judge: Judge
    prompt: Prompt
    pool_name: str | None
    strategy: str | None
    adaptive: bool
    total: int  # documents to judge in this run (at most this many for an adaptive pool)
    calls: int  # questions to the model, samples included (ordered pools)
    skipped: int  # already judged by this judge
    others: tuple[GradedBy, ...] = ()  # other judges' grades of the pairs this judge has not judged
    left_out: int = 0  # pairs another judge graded, left out (`only_unjudged`)


class GradedBy(NamedTuple):
    """How many of the pairs left to a judge another judge (people, an import, another model) has graded."""

    name: str
    kind: str  # human | import | model
    pairs: int


@dataclass
class JudgeRun:
    """The plan, and either what judging did (`report`) or, for a dry run, what it would cost (`estimate`)."""

    plan: JudgingPlan
    report: Report | None = None
    estimate: Any = None  # trecbench.judging.estimate.Estimate
    batches: Any = None  # trecbench.judging.batch.BatchReport, with provider_batch

    @property
    def judge(self) -> Judge:
        return self.plan.judge


def model_grades(ws: Workspace, name: str) -> dict[tuple[str, str], int]:
    """This judge's latest grade of each pair it judged (read only: a judge row is never created here)."""
    return {(r.qid, r.docid): int(r.grade) for r in ws.judgment_rows(kind="model", judge=name) if r.grade is not None}


def graded_by_others(ws: Workspace, pairs: Any, judge: str, done: set[tuple[str, str]]) -> tuple[
        tuple[GradedBy, ...], set[tuple[str, str]]]:
    """(per other judge, how many of the pairs of `pairs` (`Candidates`, or a DataFrame with query_id, doc_id
    and priority) that `judge` has not judged (`done`) it graded, most first; the set of those pairs): what people or imports
    already did that a model run would judge again."""
    rows = Candidates.of(pairs).rows
    graders: dict[tuple[str, str], dict[tuple[str, str], None]] = {}  # pair -> its other judges, first grade first
    for r in ws.judgment_rows():
        if r.grade is not None and not (r.judge_kind == "model" and r.judge == judge):
            graders.setdefault((str(r.qid), str(r.docid)), {})[(str(r.judge), str(r.judge_kind))] = None
    if not graders or not rows:
        return (), set()
    counts: dict[tuple[str, str], int] = {}
    theirs: set[tuple[str, str]] = set()
    for pair in dict.fromkeys((str(row[0]), str(row[1])) for row in rows):
        if pair in done or pair not in graders:
            continue
        theirs.add(pair)
        for who in graders[pair]:
            counts[who] = counts.get(who, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: -item[1])  # stable: equal counts in the order first met
    return tuple(GradedBy(name, kind, n) for (name, kind), n in ranked), theirs


def judge_pool(ws: Workspace, config: Any, *, prompt: Prompt | str | None = None, batch: int = 1, samples: int = 1,
               examples: int = 0, limit: int | None = None, pool: str | None = None, relevant_grade: int = 1,
               max_cost: Any = None, dry_run: bool = False, provider_batch: bool = False, collect: bool = False,
               only_unjudged: bool = False, pairs: Any = None, on_start: Callable[[JudgingPlan], None] | None = None,
               on_progress: Callable[[Report, int], None] | None = None) -> JudgeRun:
    """Grade the unjudged candidates of the workspace's pool (`pool`, default the newest) with `config`'s model.

    config: a `trecbench.llm.ModelConfig`; its `params` (temperature) are part of the judge's identity.
    An adaptive pool (a registered strategy with `adaptive = True`) is judged one document at a time,
    resuming from this judge's grades. `max_cost` stops before spending more (0 spends nothing; a model
    without a price needs `config.prices`). `provider_batch` sends the requests through the provider's
    batch interface (a later run collects them; `collect` only collects). Raises ValueError for settings
    that do not fit the pool. `pairs` (a DataFrame: query_id, doc_id, priority) are judged instead of a
    pool's candidates, in the same way (`trecbench.judging.audit` re-judges existing qrels with it).
    The plan counts the pairs left to this judge that other judges (people, imports, other models) graded;
    `only_unjudged` leaves those out, so that only pairs nobody graded are judged (ranked pools only).
    """
    from trecbench.pooling.strategies import is_adaptive

    prompt = prompt if isinstance(prompt, Prompt) else load_prompt(prompt, ws.settings.scale)
    params = dict(config.params)
    identity = model_judge(config.model, prompt, batch=batch, samples=samples, params=params, examples=examples)
    todo = candidates(ws, pool) if pairs is None else Candidates.of(pairs)
    strategy = todo.strategy
    adaptive = is_adaptive(strategy)
    if provider_batch and (adaptive or dry_run):
        raise ValueError("--provider-batch/--collect judge a ranked pool for real: not with an adaptive pool "
                         "or --dry-run")
    tasks: list[Task] = []
    resumed = None
    since = ws.newest_judgment()  # read before what was judged: a row recorded after it is another run's
    if only_unjudged and adaptive:
        raise ValueError("--only-unjudged leaves out pairs of a ranked pool: an adaptive pool chooses its own")
    if adaptive:
        if batch > 1:
            raise ValueError("an adaptive pool picks one document at a time: --batch must be 1")
        from trecbench.pooling.workspace import resume_adaptive

        resumed = resume_adaptive(ws, identity.name, pool, limit=limit)
        done, total = resumed.done, resumed.remaining
        skipped, calls = len(done), total * samples
        if dry_run:  # the strategy's choices depend on grades not yet given: estimate the first candidates
            tasks = _first_candidates(todo, done, resumed.pool.info.budget, total)
        others: tuple[GradedBy, ...] = ()
        left_out = 0
    else:
        done = model_grades(ws, identity.name)
        # re-judging given pairs (an audit) means judging what others graded: nothing to count or leave out
        tasks, skipped, others, left_out = _ordered_tasks(ws, todo, identity.name, set(done), batch, limit,
                                                          count_others=pairs is None, only_unjudged=only_unjudged)
        total, calls = sum(len(t.docids) for t in tasks), len(tasks) * samples
    plan = JudgingPlan(identity, prompt, todo.name, strategy, adaptive, total, calls, skipped,
                       others, left_out)
    if on_start is not None:
        on_start(plan)
    corpus, topics = ws.corpus(), ws.topics()
    shots = few_shot_examples(ws, examples, corpus, topics)
    if dry_run:
        return JudgeRun(plan, estimate=_estimate(ws, config, plan, tasks, corpus, topics, shots, batch, samples))
    from trecbench.llm import LLM, Budget  # the client (asyncio, the transports) only for a run that calls

    client = LLM(config, cache=ws.path / "bench.sqlite", budget=Budget.of(max_cost))
    # Pairs are leased while asked about, so another run of this judge at the same time shares the work (a
    # provider batch is not: its requests wait at the provider far longer than a lease, for a later run).
    leases = Leases(ws, identity.name, since)
    try:
        if resumed is not None:
            report = client.run(judge_adaptive(ws, client, prompt, resumed.pool, identity,
                                               budget=resumed.pool.info.budget, relevant_grade=relevant_grade,
                                               samples=samples, examples=shots, corpus=corpus, done=done,
                                               on_progress=on_progress, leases=leases))
        elif provider_batch:
            from .batch import judge_batched

            batched = client.run(judge_batched(ws, client, prompt, tasks, identity, samples=samples, examples=shots,
                                               corpus=corpus, submit=not collect, on_progress=on_progress))
            return JudgeRun(plan, report=batched.report, batches=batched)
        else:
            report = client.run(judge(ws, client, prompt, tasks, identity, samples=samples, examples=shots,
                                      corpus=corpus, on_progress=on_progress, leases=leases))
    finally:
        client.close()
    return JudgeRun(plan, report=report)


def _first_candidates(todo: Candidates, done: Any, budget: int | None, total: int) -> list[Task]:
    """The first `total` candidates an adaptive pool's dry run counts: of each topic in priority order, up to the
    budget (else its whole pool), leaving out those `done`."""
    per_topic: dict = {}
    for qid, docid, _ in sorted(todo.rows, key=lambda row: (row[0], row[2])):
        per_topic.setdefault(qid, []).append(docid)
    most = budget or max((len(docs) for docs in per_topic.values()), default=0)
    firsts = [(q, d) for q, docs in per_topic.items() for d in [d for d in docs if (q, d) not in done][:int(most)]]
    return [Task(str(q), (d,)) for q, d in firsts[:total]]


def _ordered_tasks(ws: Workspace, todo: Candidates, judge: str, done: set[tuple[str, str]], batch: int,
                   limit: int | None, *, count_others: bool, only_unjudged: bool) -> tuple[
                       list[Task], int, tuple[GradedBy, ...], int]:
    """(the tasks of a ranked pool, pairs this judge judged, other judges' grades of the rest, pairs left out
    because another judge graded them)."""
    others, theirs = graded_by_others(ws, todo, judge, done) if count_others else ((), set())
    if not only_unjudged:
        tasks, skipped = plan_tasks(todo, done, batch, limit)
        return tasks, skipped, others, 0
    tasks, skipped = plan_tasks(todo, done | theirs, batch, limit)
    return tasks, skipped - len(theirs), others, len(theirs)  # plan_tasks counted theirs as this judge's


def _estimate(ws: Workspace, config: Any, plan: JudgingPlan, tasks: list[Task], corpus: Any, topics: Any,
              shots: dict, batch: int, samples: int) -> Any:
    from trecbench.judging.estimate import (UnknownModelError, estimate_tasks, model_prices,
                                            observed_reply_tokens)

    if not tasks:  # nothing to ask: no price or tokenizer to look up, so litellm is not imported (seconds)
        return nothing_to_estimate(config.model, batch)
    given = config.prices
    try:
        prices = model_prices(config.model, *(given if given is not None else (None, None)))
    except UnknownModelError:
        prices = None
    observed = observed_reply_tokens(ws, plan.judge.name, config.model, samples)
    conn = model_calls.open_read_only(ws.path / "bench.sqlite")
    try:
        # no reply cached: no call's request is hashed and looked up (0.06 s of CPU for the demo's 637 calls)
        cache = _ReadOnlyCache(conn) if model_calls.has_replies(conn) else None
        requests = None
        if cache is not None:  # keyed as the run's client keys its requests (no client made: no asyncio, no transport)
            from trecbench.llm.request import RequestForm

            requests = RequestForm.of(config, dry_run=True)
        return estimate_tasks(tasks, corpus, topics, config.model, prompt=plan.prompt, batch=batch, samples=samples,
                              examples=shots, prices=prices, reply_tokens_per_passage=observed, cache=cache,
                              requests=requests)
    finally:
        conn.close()


def nothing_to_estimate(model: str, batch: int) -> Any:
    """The estimate of a run with nothing to judge: no row, no call."""
    from trecbench.judging.estimate import Estimate

    return Estimate(None, model, batch, None)


class _ReadOnlyCache:
    """The `get` of a ResponseCache over a read-only connection (a dry run never creates tables or rows)."""

    def __init__(self, conn: Any):
        self.conn = conn

    def get(self, key: str) -> Any:
        return True if model_calls.has_reply(self.conn, key) else None
