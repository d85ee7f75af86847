"""Relevance judging by a model: the pool's candidates, in priority order, graded 0-3 through `trecbench.llm`.

Every judgment is recorded the moment its reply is read (or recorded as failed, never as a grade), so a
stopped run loses nothing and the next run judges only what is missing. The judge's identity — model,
prompt name and hash, batch size, samples, sampling parameters — is stored with each judgment.
"""
from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable

from trecbench.errors import InputError
from trecbench.store import Judge, Judgment, Workspace, text_hash

from .prompts import Example, Prompt, build_messages, parse_grades


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
    stopped: str | None = None  # why the run stopped early (budget), if it did
    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0


def model_judge(model: str, prompt: Prompt, *, batch: int, samples: int, params: dict) -> Judge:
    shown = {k: v for k, v in params.items()}
    return Judge("model", f"{model}:{prompt.name}", model, prompt.name, prompt.sha256,
                 tuple(sorted({"batch": batch, "samples": samples, **shown}.items())))


def candidates(ws: Workspace, pool_name: str | None = None):
    """The pool's representatives in judging order (topic, then priority)."""
    from trecbench.store.workspace import load_pool

    pool = load_pool(ws, pool_name)
    if pool is None:
        raise InputError(str(ws.path), 0, "no pool to judge: make one with `trecbench pool RUN... -w BENCH`")
    return pool[pool["representative"]]


def plan_tasks(pool, done: set[tuple[str, str]], batch: int, limit: int | None = None) -> tuple[list[Task], int]:
    """Batches of unjudged candidates, each within one topic, in priority order; and how many were skipped."""
    tasks: list[Task] = []
    skipped = 0
    todo = 0
    for qid, group in pool.groupby("query_id", sort=True):
        docs = []
        for docid in group.sort_values("priority")["doc_id"]:
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
    judged = ws.judgments()
    judged = judged[judged["judge_kind"] == "human"].sort_values("id").drop_duplicates(["query_id", "doc_id"],
                                                                                        keep="last")
    pool: list[Example] = []
    qids: list[str] = []
    for grade in sorted(judged["grade"].unique(), reverse=True):
        for row in judged[judged["grade"] == grade].itertuples():
            doc = corpus.get(row.doc_id)
            topic = topics.get(row.query_id)
            if doc is not None and topic is not None:
                pool.append(Example(topic.text, doc.text, int(row.grade)))
                qids.append(row.query_id)
                break
    out = {}
    for qid in topics:
        chosen = [e for e, q in zip(pool, qids) if q != qid][:k]
        out[qid] = chosen
    return out


def vote(grades: list[int]) -> int:
    """The most common grade; a tie goes to the lower grade."""
    counts = Counter(grades)
    top = max(counts.values())
    return min(g for g, c in counts.items() if c == top)


class _Judger:
    """Asks the model about one task and records its judgments at once; shared by the ordered and adaptive loops."""

    def __init__(self, ws: Workspace, llm, prompt: Prompt, judge_id: Judge, *, samples: int,
                 examples: dict[str, list[Example]] | None, corpus, report: Report):
        self.ws, self.llm, self.prompt, self.judge_id = ws, llm, prompt, judge_id
        self.samples, self.examples, self.corpus, self.report = samples, examples or {}, corpus, report
        self.topics = ws.topics()

    def _fail(self, qid: str, docid: str, why: str, **extra) -> Judgment:
        self.report.failed.append((qid, docid, why))
        return Judgment(qid, docid, None, self.judge_id, status="failed", error=why, **extra)

    def parse(self, n: int) -> Callable[[str], list]:
        """The reader of a reply about `n` passages."""
        return lambda text: parse_grades(text, n, self.prompt.max_grade)

    def sample_params(self) -> list[dict]:
        """The extra parameters of each sample's request."""
        return [{"seed": s} if self.samples > 1 else {} for s in range(self.samples)]

    def messages(self, task: Task) -> tuple[list[dict], int] | None:
        """The request about the task's documents that can be judged, and how many there are (None: none)."""
        topic = self.topics.get(task.qid)
        texts = [d.text if not d.title else f"{d.title}\n{d.text}" for d in map(self.corpus.get, task.docids)
                 if d is not None]
        if topic is None or not texts:
            return None
        return build_messages(self.prompt, topic.text, texts, narrative=topic.narrative,
                              examples=self.examples.get(task.qid, [])), len(texts)

    async def __call__(self, task: Task) -> dict[str, int | None]:
        """{docid: grade, or None when it failed}; every judgment is recorded before returning."""
        ws, report = self.ws, self.report
        topic = self.topics.get(task.qid)
        present, hashes, rows = [], [], []
        for docid in task.docids:
            doc = self.corpus.get(docid)
            if doc is None:
                rows.append(self._fail(task.qid, docid, "document not in the corpus"))
            elif topic is None:
                rows.append(self._fail(task.qid, docid, "topic not in the workspace"))
            else:
                present.append(docid)
                hashes.append(text_hash(doc.text))  # the document's text, as evidence links hash it
        grades: dict[str, int | None] = {r.docid: None for r in rows}
        request = self.messages(task) if present else None
        if request is not None:
            messages, n = request
            outcomes = []
            for extra in self.sample_params():
                outcome = await self.llm.ask(messages, parse=self.parse(n), purpose="judge", **extra)
                for c in outcome.completions:
                    report.calls += 0 if c.cached else 1
                    report.cached += 1 if c.cached else 0
                    report.prompt_tokens += c.prompt_tokens
                    report.completion_tokens += c.completion_tokens
                    report.cost += c.cost
                outcomes.append(outcome)
            good = [o for o in outcomes if o.ok]
            raws = [o.raw for o in outcomes]
            raw = raws[0] if self.samples == 1 else json.dumps(raws)
            for i, (docid, digest) in enumerate(zip(present, hashes)):
                if not good:
                    rows.append(self._fail(task.qid, docid, outcomes[-1].error or "no reply", raw_reply=raw,
                                           doc_hash=digest))
                    grades[docid] = None
                    continue
                grade = vote([o.value[i][0] for o in good])
                reason = next(o.value[i][1] for o in good if o.value[i][0] == grade)
                note = None if len(good) == self.samples else f"{self.samples - len(good)} of {self.samples} samples failed"
                rows.append(Judgment(task.qid, docid, grade, self.judge_id, raw_reply=raw, rationale=reason,
                                     error=note, doc_hash=digest))
                grades[docid] = grade
                report.judged += 1
        ws.record_many(rows)
        return grades


async def judge(ws: Workspace, llm, prompt: Prompt, tasks: Iterable[Task], judge_id: Judge, *,
                samples: int = 1, examples: dict[str, list[Example]] | None = None, corpus=None,
                on_progress: Callable[[Report, int], None] | None = None) -> Report:
    """Ask the model about every task (in order, `concurrency` at a time) and record each judgment at once."""
    from trecbench.llm import BudgetExceeded

    report = Report()
    one = _Judger(ws, llm, prompt, judge_id, samples=samples, examples=examples, corpus=corpus or ws.corpus(),
                  report=report)
    queue: asyncio.Queue[Task] = asyncio.Queue()
    for t in tasks:
        queue.put_nowait(t)
    stop = asyncio.Event()

    async def worker() -> None:
        while not stop.is_set():
            try:
                task = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            try:
                await one(task)
            except BudgetExceeded as e:
                report.stopped = str(e)
                stop.set()
            finally:
                if on_progress:
                    on_progress(report, len(task.docids))

    workers = max(1, getattr(llm.config, "concurrency", 8))
    await asyncio.gather(*(worker() for _ in range(workers)))
    return report


async def judge_adaptive(ws: Workspace, llm, prompt: Prompt, pool, judge_id: Judge, *, budget: int | None,
                         relevant_grade: int = 1, samples: int = 1, examples=None, corpus=None,
                         done: dict[tuple[str, str], int] | None = None,
                         on_progress: Callable[[Report, int], None] | None = None) -> Report:
    """Judge an adaptive pool (mtf, maxmean): the strategy picks each next document from the grades so far.

    Topics are judged side by side (up to `concurrency`), each one document at a time, until its
    strategy has nothing left or `budget` judgments were spent on it. Grades this judge already gave
    (`done`) are replayed to the strategy without a call. A failed judgment counts as not relevant for
    the strategy's next choice only; it is recorded as a failure, not as a grade.
    """
    from trecbench.llm import BudgetExceeded
    from trecbench.pooling.session import JudgingSession
    from trecbench.pooling.strategies import get_strategy

    report = Report()
    one = _Judger(ws, llm, prompt, judge_id, samples=samples, examples=examples, corpus=corpus or ws.corpus(),
                  report=report)
    done = done or {}
    stop = asyncio.Event()
    queue: asyncio.Queue[str] = asyncio.Queue()
    for qid in pool.topics:
        queue.put_nowait(qid)

    async def topic_worker() -> None:
        while not stop.is_set():
            try:
                qid = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
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
                try:
                    grades = await one(Task(q, (docid,)))
                except BudgetExceeded as e:
                    report.stopped = str(e)
                    stop.set()
                    break
                grade = grades.get(docid)
                session.record(q, docid, grade is not None and grade >= relevant_grade)
                if on_progress:
                    on_progress(report, 1)

    workers = max(1, getattr(llm.config, "concurrency", 8))
    await asyncio.gather(*(topic_worker() for _ in range(workers)))
    return report
