"""Judging through the provider's batch interface: the same requests as live judging, sent as one batch,
their replies applied exactly as live ones.

Each run first collects the judge's finished batches: every reply goes into the reply cache (at the
batch price), every request without one (errored, expired, canceled, or with no readable result line)
into the call log as a failed call. Then every task whose requests are all answered is judged by the
live loop (`judge`): replies come from the cache through the same parser and failure rules, and a batch
reply that cannot be read is replayed and re-asked live as any unreadable reply is, then recorded as a
failure. A task with a request that failed in a batch collected by this run is recorded as failed (as a
live call that failed is); the next run asks it again, in its next batch. The tasks left, never
answered, go into a new batch (several when they pass the provider's limits); tasks whose batch is
still running wait for the next run.

The flow is the same for support judging (`judging.support`, purpose "support"): `run_batched` takes what
differs, a `BatchFlow` (the items' first requests, how an item fails, the live loop).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterable, NamedTuple

from trecbench.llm.records import Usage
from trecbench.store import Judge, Workspace

from .llm import Report, Task, _Judger, judge
from .prompts import Example, Prompt

PURPOSE = "judge"


@dataclass
class BatchReport:
    """What a batched run did: the live loop's report, plus the batches collected, submitted and waiting."""

    report: Report = field(default_factory=Report)
    collected: list[tuple[str, int, float]] = field(default_factory=list)  # (batch id, replies read, $)
    usage: Usage = field(default_factory=Usage)  # the collected batches' replies
    submitted: list[tuple[str, int]] = field(default_factory=list)  # (batch id, requests) of each new batch
    waiting: list[tuple[str, str, int, int]] = field(default_factory=list)  # (batch id, status, done, total)
    waiting_docs: int = 0
    found_again: list[str] = field(default_factory=list)  # batches whose id was not written down before
    unreadable: list[str] = field(default_factory=list)  # result lines that could not be read ("where: why")
    unit: str = "documents"  # what `waiting_docs` counts

    @property
    def batch_cost(self) -> float:
        return sum(c for _, _, c in self.collected)


class BatchFlow(NamedTuple):
    """What a kind of judging gives the batch flow: its call-log purpose, each item's first requests
    (`[(messages, ask arguments)]`, one per sample), the failed judgments of an item (`fail(item, why)`, noted
    in the report), how to record them, the live loop that judges items from the cache, and an item's size."""

    purpose: str
    first_questions: Callable[[Any], list]
    fail: Callable[[Any, str], list]
    record: Callable[[list], Any]
    live: Callable[[list], Awaitable[Any]]
    units: Callable[[Any], int]


async def judge_batched(ws: Workspace, llm, prompt: Prompt, tasks: Iterable[Task], judge_id: Judge, *,
                        samples: int = 1, examples: dict[str, list[Example]] | None = None, corpus=None,
                        submit: bool = True, api=None,
                        on_progress: Callable[[Report, int], None] | None = None) -> BatchReport:
    """Collect finished batches, judge what they answered, and (with `submit`) batch what was never asked.

    `llm` is the run's client (its cache is the workspace database); `api` the provider's batch endpoints
    (default: `batch_api(llm.config)`).
    """
    out = BatchReport()
    corpus = corpus or ws.corpus()
    one = _Judger(ws, llm, prompt, judge_id, samples=samples, examples=examples, corpus=corpus, report=out.report)
    flow = BatchFlow(PURPOSE, one.first_questions, lambda t, why: [one._fail(t.qid, d, why) for d in t.docids],
                     ws.record_many, lambda live: judge(ws, llm, prompt, live, judge_id, samples=samples,
                                                        examples=examples, corpus=corpus, on_progress=on_progress),
                     lambda t: len(t.docids))
    return await run_batched(llm, flow, list(tasks), out, submit=submit, api=api)


async def run_batched(llm, flow: BatchFlow, items: list, out: BatchReport, *, submit: bool = True,
                      api=None) -> BatchReport:
    """The batch flow of the module doc for any kind of judging (`flow`); `out.report` gathers the failures
    `flow.fail` makes before the live loop's report takes its place (they are put first in it)."""
    from trecbench.llm.batch import BatchLedger, batch_api

    if llm.cache is None:
        raise ValueError("batched judging needs the client's reply cache (the workspace database)")
    api = api or batch_api(llm.config)
    ledger = BatchLedger(llm.cache)
    planned, readers = _requests(flow.first_questions, llm, items)
    failed = _collect_finished(api, ledger, llm, _Readers(readers), out, flow.purpose)
    live, fresh, failures = _sort_tasks(planned, llm, ledger.keys(flow.purpose), failed, flow, out)
    if failures:
        flow.record(failures)
    before = out.report
    out.report = await flow.live(live)
    out.report.failed[:0] = before.failed
    out.report.usage += out.usage
    if submit and fresh:
        _submit(api, ledger, llm, fresh, out, flow)
    return out


def _requests(first_questions: Callable[[Any], list], llm, tasks: list) -> tuple[list[tuple[Any, list]],
                                                                                   dict[str, Callable]]:
    """Every task with its first requests (a BatchRequest for each sample), and the parser of each request's
    reply by cache key."""
    from trecbench.llm.batch import BatchRequest

    planned: list[tuple[Any, list[BatchRequest]]] = []
    readers: dict[str, Callable] = {}
    for task in tasks:
        reqs = []
        for messages, ask in first_questions(task):
            params = {k: v for k, v in ask.items() if k not in ("parse", "schema", "purpose")}
            convo, sent, key = llm.first_request(messages, schema=ask.get("schema"), **params)
            reqs.append(BatchRequest(key, llm.config.model, convo, sent))
            readers[key] = ask["parse"]
        planned.append((task, reqs))
    return planned, readers


class _Readers:
    """Why a batch reply cannot be read by its request's parser (None: it can)."""

    def __init__(self, readers: dict[str, Callable]):
        self.readers = readers

    def __call__(self, key: str, text: str) -> str | None:
        from trecbench.llm.errors import ParseError

        parse = self.readers.get(key)
        if parse is None:
            return "not a request of this run"
        try:
            parse(text)
        except ValueError as exc:
            return exc.reason if isinstance(exc, ParseError) else str(exc)
        return None


def _collect_finished(api, ledger, llm, readable: _Readers, out: BatchReport, purpose: str) -> dict[str, str]:
    """Apply every finished batch of the judge (finding again one whose id was never saved); note the
    running ones in `out`. {key: why} of the requests that failed in the batches collected now."""
    failed: dict[str, str] = {}
    for row, _, batch_id, state in ledger.open_batches(purpose):
        if state == "submitting":  # stopped between writing it down and hearing the provider's id
            batch_id = api.find(ledger.pending(row))
            if batch_id is None:
                ledger.forget(row)
                continue
            ledger.submitted(row, batch_id)
            out.found_again.append(batch_id)
        assert batch_id is not None
        st = api.state(batch_id)
        if not st.finished:
            out.waiting.append((batch_id, st.status, st.completed + st.failed, st.total))
            continue
        lines = api.results(st)
        out.unreadable += lines.unreadable
        done = ledger.collect(row, st, lines.results, purpose=purpose, price_model=llm.price_model,
                              priced=llm.priced, readable=readable)
        out.collected.append((batch_id, done.read, done.usage.cost))
        out.usage += done.usage
        failed.update(done.failed)
    return failed


def _sort_tasks(planned: list[tuple[Any, list]], llm, batched: dict[str, str], failed: dict[str, str],
                flow: BatchFlow, out: BatchReport) -> tuple[list, list[tuple[Any, list]], list]:
    """(tasks the live loop judges from the cache, tasks for a new batch, failed judgments): a task waits
    while a batch holds one of its requests, is failed when one failed in a batch collected now."""
    live, fresh, failures = [], [], []
    for task, reqs in planned:
        cached = [llm.cache.get(r.key) is not None for r in reqs]
        if any(batched.get(r.key) in ("submitting", "submitted") for r in reqs):
            out.waiting_docs += flow.units(task)
        elif all(cached):
            live.append(task)  # answered (read or not): the live loop decides
        elif any(r.key in failed for r, c in zip(reqs, cached) if not c):
            why = next(failed[r.key] for r, c in zip(reqs, cached) if not c and r.key in failed)
            failures += flow.fail(task, why)
        else:
            fresh.append((task, reqs))  # never asked, or failed in an earlier run's batch: the next batch
    return live, fresh, failures


def _submit(api, ledger, llm, fresh: list[tuple[Any, list]], out: BatchReport, flow: BatchFlow) -> None:
    """Send the requests of `fresh` not cached yet as new batches (within the provider's limits), each
    written down before it is submitted."""
    from trecbench.llm.batch import BatchRefused, split_batch

    unique = {r.key: r for _, reqs in fresh for r in reqs if llm.cache.get(r.key) is None}
    for part in split_batch(list(unique.values()), api.max_requests, api.max_bytes):
        row, token = ledger.begin(llm.config.model, flow.purpose, part)
        try:
            batch_id = api.submit(part, token)
        except BatchRefused:
            ledger.forget(row)  # the provider answered with a refusal: there is no batch to find again
            raise
        ledger.submitted(row, batch_id)
        out.submitted.append((batch_id, len(part)))
    out.waiting_docs += sum(flow.units(t) for t, _ in fresh)
