"""Relevance judging by a model: the pool's candidates, in priority order, graded 0-3 through `trecbench.llm`.

Every judgment is recorded the moment its reply is read (or recorded as failed, never as a grade), so a
stopped run loses nothing and the next run judges only what is missing. The judge's identity — model,
prompt name and hash, batch size, samples, sampling parameters — is stored with each judgment.

A pair is leased before it is asked about (`Leases`), so two runs of the same judge at once (two terminals,
a cron job beside a person's run) share the work instead of both asking and both recording: each skips
what the other holds or has judged since it planned. A run keeps its leases alive while it runs; those of a
run that died are taken over at once when it was a process of this machine, else once they expire
(`LEASE_SECONDS` after it last renewed them).
"""
from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Callable, Iterable

from trecbench.errors import InputError
from trecbench.store import Judge, Judgment, Workspace, text_hash

from trecbench.llm.records import Usage

from .prompts import Example, Prompt, build_messages, grade_bound, parse_grades

if TYPE_CHECKING:
    import asyncio

# asyncio (~0.1 s to import) is imported inside the functions that run the event loop's work: planning a run,
# and a dry run's estimate, import this module without it.

REASK_MISSING = 2  # times the passages a batch reply left out are asked again on their own
LEASE_SECONDS = 120.0  # how long a pair stays taken by a run that stopped renewing it (one that died elsewhere)
WAIT_SECONDS = 0.5  # how often an adaptive run looks again at a pair another run of its judge is asking about


@dataclass(frozen=True)
class Task:
    """One model question: a topic and up to `batch` of its documents."""

    qid: str
    docids: tuple[str, ...]


@dataclass
class Report:
    judged: int = 0
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (qid, docid, why)
    skipped: int = 0  # already judged by this judge
    shared: int = 0  # left to another run of this judge working at the same time (it held or had judged them)
    stopped: str | None = None  # why the run stopped early (budget), if it did
    usage: Usage = field(default_factory=Usage)  # every reply of the run, re-asks and cache hits included
    fatal: BaseException | None = None  # a model error every further call would meet (bad key, no such model)

    # The totals the summary line prints.
    calls = property(lambda self: self.usage.calls)
    cached = property(lambda self: self.usage.cached)
    prompt_tokens = property(lambda self: self.usage.prompt_tokens)
    completion_tokens = property(lambda self: self.usage.completion_tokens)
    cost = property(lambda self: self.usage.cost)


JUDGE_DEFAULTS = {"batch": 1, "samples": 1, "examples": 0, "temperature": 0}


def model_judge(model: str, prompt: Prompt, *, batch: int, samples: int, params: dict, examples: int = 0) -> Judge:
    """The judge's identity: everything that changes its grades is in its name and its recorded settings.

    The name is `MODEL:PROMPT@HASH` (the first 8 hex digits of the prompt text's sha256), then each
    setting that differs from JUDGE_DEFAULTS, e.g. `openai/gpt-4o-mini:graded-0-3@1a2b3c4d:batch=5`, so
    judgments made with other settings are never mixed under one name.
    """
    settings = {"batch": batch, "samples": samples, "examples": examples, **params}
    shown = "".join(f":{k}={v:g}" if isinstance(v, float) else f":{k}={v}" for k, v in settings.items()
                    if JUDGE_DEFAULTS.get(k, object()) != v)
    return Judge("model", f"{model}:{prompt.name}@{prompt.sha256[:8]}{shown}", model, prompt.name, prompt.sha256,
                 tuple(sorted(settings.items())))


@dataclass(frozen=True)
class Candidates:
    """The pairs a judging run is about: (query_id, doc_id, priority) rows, and the pool's name and strategy.

    Plain rows, so that planning and a dry run need no DataFrame (pandas takes a third of a second to import)."""

    rows: list[tuple]
    name: str | None = None
    strategy: str | None = None

    @classmethod
    def of(cls, frame) -> "Candidates":
        """The candidates of a DataFrame with query_id, doc_id, priority (its attrs give the name and strategy)."""
        if isinstance(frame, Candidates):
            return frame
        attrs = getattr(frame, "attrs", {})
        return cls(list(zip(frame["query_id"], frame["doc_id"], frame["priority"])), attrs.get("name"),
                   attrs.get("strategy"))


def candidates(ws: Workspace, pool_name: str | None = None) -> Candidates:
    """The pool's representatives in judging order (topic, then priority)."""
    from trecbench.store.pools import pool_rows

    found = pool_rows(ws, pool_name)
    if found is None:
        raise InputError(str(ws.path), 0, "no pool to judge: make one with `trecbench pool RUN... -w BENCH`")
    chosen, rows = found
    return Candidates([(q, d, p) for q, d, p, *_, representative in rows if representative], chosen.name,
                      chosen.strategy)


def plan_tasks(pool, done: set[tuple[str, str]], batch: int, limit: int | None = None) -> tuple[list[Task], int]:
    """Batches of unjudged candidates, each within one topic, in priority order; and how many were skipped.

    pool: `Candidates`, or a DataFrame with query_id, doc_id and priority."""
    by_topic: dict = {}
    for qid, docid, priority in Candidates.of(pool).rows:
        by_topic.setdefault(qid, []).append((priority, docid))
    tasks: list[Task] = []
    skipped = 0
    todo = 0
    for qid in sorted(by_topic):
        docs = []
        for _, docid in sorted(by_topic[qid], key=lambda row: row[0]):
            if (qid, docid) in done:
                skipped += 1
                continue
            if limit is not None and todo >= limit:
                break
            docs.append(docid)
            todo += 1
        for i in range(0, len(docs), batch):
            tasks.append(Task(str(qid), tuple(docs[i:i + batch])))
    return tasks, skipped


def few_shot_examples(ws: Workspace, k: int, corpus, topics: dict) -> dict[str, list[Example]]:
    """Up to k judged passages per topic from people's judgments of *other* topics, one per grade first."""
    if k <= 0:
        return {}
    rows = ws.judgment_rows(kind="human")
    newest = {(r.qid, r.docid): r.id for r in rows}
    judged = [r for r in rows if newest[(r.qid, r.docid)] == r.id and r.grade is not None]  # each pair's newest
    pool: list[Example] = []
    qids: list[str] = []
    for grade in sorted({int(r.grade) for r in judged if r.grade is not None}, reverse=True):
        for row in (r for r in judged if r.grade == grade):
            doc = corpus.get(row.docid)
            topic = topics.get(row.qid)
            if doc is not None and topic is not None:
                pool.append(Example(topic.text, doc.text, grade))
                qids.append(row.qid)
                break
    out = {}
    for qid in topics:
        chosen = [e for e, q in zip(pool, qids) if q != qid][:k]
        out[qid] = chosen
    return out


class Leases:
    """The pairs one judging run has taken (leased in the workspace), so that another run of the same judge
    skips them; `since` is the newest judgment row when the run planned (what it knew was judged)."""

    def __init__(self, ws: Workspace, judge: str, since: int, *, seconds: float = LEASE_SECONDS):
        from trecbench.store.assessors import model_holder

        self.ws, self.since, self.seconds = ws, since, seconds
        self.holder = model_holder(judge)
        self.held: set[tuple[str, str]] = set()

    def take(self, qid: str, docids: Iterable[str]) -> tuple[list[str], dict[str, int | None]]:
        """(the documents taken for this run now, {docid: grade or None} of those the judge judged since the
        run planned); the rest another run holds."""
        now = time.time()
        claims = self.ws.take_pairs(self.holder, qid, list(docids), since=self.since, expires_at=now + self.seconds,
                                    at=now)
        taken = [c.docid for c in claims if c.state == "taken"]
        self.held.update((qid, d) for d in taken)
        return taken, {c.docid: c.grade for c in claims if c.state == "judged"}

    async def take_one(self, qid: str, docid: str, stop: asyncio.Event) -> tuple[bool, int | None]:
        """(True, None) once the pair is this run's; (False, grade) when the judge judged it meanwhile (grade
        None: a failure, or `stop` was set while another run held it), waiting while another run holds it."""
        while True:
            taken, judged = self.take(qid, [docid])
            if taken:
                return True, None
            if docid in judged or stop.is_set():
                return False, judged.get(docid)
            import asyncio

            await asyncio.sleep(WAIT_SECONDS)

    def release(self, qid: str, docids: Iterable[str]) -> None:
        """Give back the run's leases of these pairs (inside the caller's transaction, if any)."""
        for docid in docids:
            if (qid, docid) in self.held:
                self.held.discard((qid, docid))
                self.ws.drop_leases(self.holder, qid, docid)

    async def keep_alive(self) -> None:
        """Renew the run's leases until cancelled, well before they would expire."""
        import asyncio

        while True:
            await asyncio.sleep(self.seconds / 4)
            if self.held:
                self.ws.renew_leases(self.holder, time.time() + self.seconds)

    def close(self) -> None:
        """Give back every lease the run still has (the pairs a stop or an error left unasked)."""
        if self.held:
            self.held.clear()
            self.ws.drop_leases(self.holder)


async def leased(leases, work) -> None:
    """Await `work` while `leases` (anything with `keep_alive()` and `close()`, as `Leases`) are kept alive, then
    give them all back; shared with support judging."""
    import asyncio

    if leases is None:
        await work
        return
    keeper = asyncio.ensure_future(leases.keep_alive())
    try:
        await work
    finally:
        keeper.cancel()
        leases.close()


def passage_text(doc) -> str:
    """A document as the model reads it: its title, if any, over its text."""
    return doc.text if not doc.title else f"{doc.title}\n{doc.text}"


def vote(grades: list[int]) -> int:
    """The most common grade; a tie goes to the lower grade."""
    counts = Counter(grades)
    top = max(counts.values())
    return min(g for g, c in counts.items() if c == top)


def question(prompt: Prompt, topic, asked: list[str], examples: list[Example], *, seed: int = 0,
             samples: int = 1) -> tuple[list[dict], dict]:
    """The judge's question about the `asked` passages of `topic`: its messages and the rest of `llm.ask`'s
    arguments (parser, schema, reply bound, and the sample's seed when there are several). The one home of
    what a judge asks: a run sends it, a dry run looks its first request up in the cache."""
    extra = {"seed": seed} if samples > 1 else {}
    messages = build_messages(prompt, topic.text, asked, narrative=topic.narrative, examples=examples)
    return messages, {"parse": partial(parse_grades, n_passages=len(asked), max_grade=prompt.max_grade),
                      "schema": prompt.response_schema(), "purpose": "judge",
                      "max_tokens": grade_bound(len(asked)), **extra}


class _Judger:
    """Asks the model about one task and records its judgments at once; shared by the ordered and adaptive loops."""

    def __init__(self, ws: Workspace, llm, prompt: Prompt, judge_id: Judge, *, samples: int,
                 examples: dict[str, list[Example]] | None, corpus, report: Report, leases: Leases | None = None):
        self.ws, self.llm, self.prompt, self.judge_id = ws, llm, prompt, judge_id
        self.samples, self.examples, self.corpus, self.report = samples, examples or {}, corpus, report
        self.leases = leases
        self.topics = ws.topics()

    def _fail(self, qid: str, docid: str, why: str, **extra) -> Judgment:
        self.report.failed.append((qid, docid, why))
        return Judgment(qid, docid, None, self.judge_id, status="failed", error=why, **extra)

    def question(self, topic, asked: list[str], examples: list[Example], seed: int) -> tuple[list[dict], dict]:
        """The messages about `asked` passages and the rest of `llm.ask`'s arguments (`question`)."""
        return question(self.prompt, topic, asked, examples, seed=seed, samples=self.samples)

    def first_questions(self, task: Task) -> list[tuple[list[dict], dict]]:
        """Each sample's first question about the task's documents that can be judged (none: nothing to ask)."""
        topic = self.topics.get(task.qid)
        docs = [d for d in map(self.corpus.get, task.docids) if d is not None]
        if topic is None or not docs:
            return []
        texts = [passage_text(d) for d in docs]
        return [self.question(topic, texts, self.examples.get(task.qid, []), s) for s in range(self.samples)]

    async def _sample(self, topic, texts: list[str], examples: list[Example], seed: int
                      ) -> tuple[list[tuple[int, str] | None], str, str | None]:
        """One sample's (grade, reason) per passage, the error for those left without one, and the last reply.

        A reply that grades only some passages keeps those; the others are asked again on their own,
        up to `REASK_MISSING` times, so one missing passage never costs the batch's other grades.
        """
        results: list[tuple[int, str] | None] = [None] * len(texts)
        todo = list(range(len(texts)))
        error, raw = "", None
        for _ in range(1 + REASK_MISSING):
            messages, ask = self.question(topic, [texts[i] for i in todo], examples, seed)
            outcome = await self.llm.ask(messages, **ask)
            self.report.usage += Usage.of(outcome.completions)
            raw = outcome.raw if outcome.raw is not None else raw
            if not outcome.ok:
                error = outcome.error or "no reply"
                break
            for i, got in zip(todo, outcome.value):
                results[i] = got
            todo = [i for i in todo if results[i] is None]
            if not todo:
                break
            error = (f"the reply graded only some passages of the batch; no grade for this one after "
                     f"{1 + REASK_MISSING} asks")
        return results, error, raw

    async def __call__(self, task: Task) -> dict[str, int | None]:
        """{docid: grade, or None when it failed}; every judgment is recorded before returning."""
        report = self.report
        topic = self.topics.get(task.qid)
        texts, present, hashes, rows = [], [], [], []
        for docid in task.docids:
            doc = self.corpus.get(docid)
            if doc is None:
                rows.append(self._fail(task.qid, docid, "document not in the corpus"))
            elif topic is None:
                rows.append(self._fail(task.qid, docid, "topic not in the workspace"))
            else:
                texts.append(passage_text(doc))
                present.append(docid)
                hashes.append(text_hash(doc.text))  # the document's text, as evidence links hash it
        grades: dict[str, int | None] = {r.docid: None for r in rows}
        if present:
            examples = self.examples.get(task.qid, [])
            samples = [await self._sample(topic, texts, examples, s) for s in range(self.samples)]
            raws = [raw for _, _, raw in samples]
            raw = raws[0] if self.samples == 1 else json.dumps(raws)
            for i, (docid, digest) in enumerate(zip(present, hashes)):
                given = [got for got in (sample[0][i] for sample in samples) if got is not None]
                if not given:
                    why = next((e for _, e, _ in samples if e), "no reply")
                    rows.append(self._fail(task.qid, docid, why, raw_reply=raw, doc_hash=digest))
                    continue
                grade = vote([g for g, _ in given])
                reason = next(r for g, r in given if g == grade)
                note = None if len(given) == self.samples else f"{self.samples - len(given)} of {self.samples} samples failed"
                rows.append(Judgment(task.qid, docid, grade, self.judge_id, raw_reply=raw, rationale=reason,
                                     error=note, doc_hash=digest))
                grades[docid] = grade
                report.judged += 1
        self._record(task, rows)
        return grades

    def _record(self, task: Task, rows: list[Judgment]) -> None:
        """The task's judgments and the end of its leases, in one commit."""
        with self.ws.transaction():
            self.ws.record_many(rows)
            if self.leases is not None:
                self.leases.release(task.qid, task.docids)


def stop_run(report, error: Exception, stop: asyncio.Event) -> None:
    """A budget reached or a model error no call can get past: say why in `report` (a `Report`, or any record
    with `stopped` and `fatal`) and let no new call start (a fatal error is raised once the calls under way
    are done); shared with support judging."""
    from trecbench.llm import ModelCallError

    if isinstance(error, ModelCallError):
        report.fatal = report.fatal or error
    report.stopped = str(error)
    stop.set()


async def judge(ws: Workspace, llm, prompt: Prompt, tasks: Iterable[Task], judge_id: Judge, *,
                samples: int = 1, examples: dict[str, list[Example]] | None = None, corpus=None,
                on_progress: Callable[[Report, int], None] | None = None, leases: Leases | None = None) -> Report:
    """Ask the model about every task (in order, `concurrency` at a time) and record each judgment at once.

    With `leases`, a task's documents are taken before they are asked about: those another run of the judge
    holds or has judged since this one planned are left to it (`Report.shared`)."""
    import asyncio

    from trecbench.helpers.jobs import work_through
    from trecbench.llm import BudgetExceeded, ModelCallError

    report = Report()
    one = _Judger(ws, llm, prompt, judge_id, samples=samples, examples=examples, corpus=corpus or ws.corpus(),
                  report=report, leases=leases)
    stop = asyncio.Event()

    async def judge_task(task: Task) -> None:
        asked = task
        try:
            if leases is not None:
                taken, _ = leases.take(task.qid, task.docids)
                report.shared += len(task.docids) - len(taken)
                if not taken:
                    return
                asked = Task(task.qid, tuple(taken))
            await one(asked)
        except (BudgetExceeded, ModelCallError) as e:  # a fatal one leaves the task's passages unjudged, unrecorded
            stop_run(report, e, stop)
        finally:
            if leases is not None:
                leases.release(asked.qid, asked.docids)  # what `one` did not record (a stop): free for others
            if on_progress:
                on_progress(report, len(task.docids))

    await leased(leases, work_through(tasks, judge_task, workers=getattr(llm.config, "concurrency", 8), stop=stop))
    if report.fatal is not None:
        raise report.fatal
    return report


async def judge_adaptive(ws: Workspace, llm, prompt: Prompt, pool, judge_id: Judge, *, budget: int | None,
                         relevant_grade: int = 1, samples: int = 1, examples=None, corpus=None,
                         done: dict[tuple[str, str], int] | None = None,
                         on_progress: Callable[[Report, int], None] | None = None,
                         leases: Leases | None = None) -> Report:
    """Judge an adaptive pool (mtf, maxmean): the strategy picks each next document from the grades so far.

    Topics are judged side by side (up to `concurrency`), each one document at a time, until its
    strategy has nothing left or `budget` judgments were spent on it. Grades this judge already gave
    (`done`) are replayed to the strategy without a call. A failed judgment counts as not relevant for
    the strategy's next choice only; it is recorded as a failure, not as a grade. With `leases`, a
    document another run of the judge is asking about is waited for and its grade replayed (`Report.shared`).
    """
    import asyncio

    from trecbench.helpers.jobs import work_through
    from trecbench.llm import BudgetExceeded, ModelCallError
    from trecbench.pooling.session import JudgingSession
    from trecbench.pooling.strategies import get_strategy

    report = Report()
    one = _Judger(ws, llm, prompt, judge_id, samples=samples, examples=examples, corpus=corpus or ws.corpus(),
                  report=report, leases=leases)
    done = done or {}
    stop = asyncio.Event()

    async def judge_topic(qid: str) -> None:
        strategy = get_strategy(pool.info.strategy, **pool.info.params)
        session = JudgingSession(pool, strategy, budget=budget, topics=[qid])
        while not stop.is_set():
            nxt = session.next()
            if nxt is None:
                break
            q, docid = nxt
            if (q, docid) in done:
                report.skipped += 1
                session.record(q, docid, done[(q, docid)] >= relevant_grade)
                continue
            if leases is not None:
                mine, theirs = await leases.take_one(q, docid, stop)
                if not mine and stop.is_set():
                    break
                if not mine:
                    report.shared += 1
                    session.record(q, docid, theirs is not None and theirs >= relevant_grade)
                    continue
            try:
                grades = await one(Task(q, (docid,)))
            except (BudgetExceeded, ModelCallError) as e:  # fatal ones as in `judge`
                if leases is not None:
                    leases.release(q, [docid])
                stop_run(report, e, stop)
                break
            grade = grades.get(docid)
            session.record(q, docid, grade is not None and grade >= relevant_grade)
            if on_progress:
                on_progress(report, 1)

    await leased(leases, work_through(pool.topics, judge_topic, workers=getattr(llm.config, "concurrency", 8),
                                       stop=stop))
    if report.fatal is not None:
        raise report.fatal
    return report
