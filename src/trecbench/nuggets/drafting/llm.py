"""Drafting nuggets with a model, as AutoNuggetizer does (Pradeep et al., "Initial Nugget Evaluation Results
for the TREC 2024 RAG Track with the AutoNuggetizer Framework", 2024), with evidence links added.

For each topic, the judged-relevant documents (grade >= `min_grade`, grade descending then docid) are
read in windows of `window`. Each window asks the model to update a running list of at most
`max_nuggets` atomic nuggets and to say which of the window's passages state each nugget; a nugget's
support accumulates over windows (from the earlier nuggets it continues) as single-document alternatives.
The final list is labelled vital or okay in batches of ten, ordered vital first then okay (stable within
each), and cut to `keep`.

Failures are never smoothed over. A window whose reply cannot be read after re-asking, or whose call
fails, leaves the running list as it was and is recorded as a problem; so is a labelling batch that
fails (its nuggets are kept, after the labelled ones, as "okay" with a note saying the label is a
placeholder). A topic with a problem is stored as *incomplete*: its nuggets are kept as drafts for people
to see, the problem is reported (exit 1), and the next run drafts it again (the cache answers every
call that had succeeded). Complete topics are skipped on the next run.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Callable, Iterable

from trecbench.helpers.jobs import work_through
from trecbench.nuggets.drafting.common import NO_DOCUMENTS, DraftReport, plan_drafting
from trecbench.nuggets.model import Nugget
from trecbench.llm.prompts import DRAFTING, IMPORTANCE
from trecbench.nuggets.prompts import (label_bound, label_messages, parse_labels, parse_update, prompts_sha256,
                                       update_bound, update_messages)
from trecbench.nuggets.relevant import DRAFT_MIN_GRADE
from trecbench.store.workspace import Workspace

LABEL_BATCH = 10
UNLABELLED_NOTE = "importance not labelled: the model's reply failed; 'okay' is a placeholder"


@dataclass(frozen=True)
class DraftSettings:
    """The knobs of the procedure (AutoNuggetizer's defaults)."""

    min_grade: int = DRAFT_MIN_GRADE
    window: int = 10
    max_nuggets: int = 30
    keep: int = 20

    def __post_init__(self) -> None:
        if self.window < 1 or self.max_nuggets < 1 or self.keep < 1:
            raise ValueError("window, max_nuggets and keep must be at least 1")


def drafter_name(model: str) -> str:
    """The drafter's name in `nugget_drafts` (what resume is keyed on)."""
    return f"llm:{model}"


def author_name(model: str) -> str:
    """The author of the drafted nuggets' first versions."""
    return f"model:{model}"


@dataclass
class _Running:
    text: str
    docids: tuple[str, ...]


async def draft_topic(llm, qid: str, question: str, narrative: str | None, docs: list[tuple[str, str]],
                      settings: DraftSettings, report: DraftReport) -> tuple[list[Nugget], list[str]]:
    """One topic's nuggets (ordered and cut) and the problems met; raises BudgetExceeded / fatal errors."""
    problems: list[str] = []
    running = await running_list(llm, question, narrative, docs, settings, report, problems)
    if running is None:
        # a dry run without every window's reply cached: the list's length is unknown, so the labelling
        # calls of a full list are counted
        texts = [f"placeholder nugget {i} of about twelve words for estimating the labelling calls"
                 for i in range(1, settings.max_nuggets + 1)]
    else:  # a run, or a dry run whose windows the cache answered: the labels are asked of the list itself
        texts = [r.text for r in running]
    labels = await importance_labels(llm, question, narrative, texts, report, problems)
    if running is None or getattr(llm, "dry_run", False):
        return [], problems
    return ordered_nuggets(qid, running, labels, settings.keep), problems


async def running_list(llm, question: str, narrative: str | None, docs: list[tuple[str, str]],
                       settings: DraftSettings, report: DraftReport, problems: list[str]) -> list[_Running] | None:
    """The running list after every window of documents; a window that fails leaves it as it was (a problem).
    None in a dry run where a window's reply is not cached (every window is still counted)."""
    running: list[_Running] = []
    unknown = False
    windows = [docs[i:i + settings.window] for i in range(0, len(docs), settings.window)]
    for w, window in enumerate(windows, 1):
        messages = update_messages(question, narrative, [r.text for r in running], [t for _, t in window],
                                   settings.max_nuggets)
        n_running, n_window = len(running), len(window)
        outcome = await llm.ask(messages, parse=lambda text: parse_update(text, n_running, n_window,  # noqa: B023 (awaited here)
                                                                          settings.max_nuggets),
                                schema=DRAFTING.response_schema(), max_tokens=update_bound(settings.max_nuggets),
                                purpose="nuggets-draft")
        report.count(outcome)
        if outcome.dry_run:
            unknown = True
            continue
        if not outcome.ok:
            where = window[0][0] if len(window) == 1 else f"{window[0][0]} .. {window[-1][0]}"
            problems.append(f"window {w} of {len(windows)} (documents {where}) failed, the list was not updated "
                            f"from it: {outcome.error}")
            continue
        running = updated_list(running, window, outcome.value)
    return None if unknown else running


def updated_list(running: list[_Running], window: list[tuple[str, str]], updates) -> list[_Running]:
    """The running list a window's reply gives: each nugget keeps the documents of the ones it continues."""
    updated = []
    for u in updates:
        docids = [d for i in u.sources for d in running[i].docids] + [window[p][0] for p in u.passages]
        updated.append(_Running(u.text, tuple(dict.fromkeys(docids))))
    return updated


async def importance_labels(llm, question: str, narrative: str | None, texts: list[str], report: DraftReport,
                            problems: list[str]) -> list[str | None]:
    """Vital or okay for each text, asked in batches of `LABEL_BATCH`; None where a batch failed (a problem)."""
    batches = [list(range(i, min(i + LABEL_BATCH, len(texts)))) for i in range(0, len(texts), LABEL_BATCH)]

    async def label(batch: list[int]):
        return await llm.ask(label_messages(question, narrative, [texts[i] for i in batch]),
                             parse=lambda text: parse_labels(text, len(batch)), schema=IMPORTANCE.response_schema(),
                             max_tokens=label_bound(len(batch)), purpose="nuggets-label")

    outcomes = await asyncio.gather(*(label(b) for b in batches))
    labels: list[str | None] = [None] * len(texts)
    for batch, outcome in zip(batches, outcomes):
        report.count(outcome)
        if outcome.dry_run:
            continue
        if outcome.ok:
            for i, value in zip(batch, outcome.value):
                labels[i] = value
        else:
            problems.append(f"importance of nuggets {batch[0] + 1}-{batch[-1] + 1} failed: {outcome.error}")
    return labels


def ordered_nuggets(qid: str, running: list[_Running], labels: list[str | None], keep: int) -> list[Nugget]:
    """The labelled list as drafts: vital, then okay, then unlabelled (kept as okay, with a note), cut to `keep`."""
    order = ([i for i, v in enumerate(labels) if v == "vital"] + [i for i, v in enumerate(labels) if v == "okay"]
             + [i for i, v in enumerate(labels) if v is None])
    nuggets = []
    for i in order[:keep]:
        extra = {} if labels[i] else {"note": UNLABELLED_NOTE}
        nuggets.append(Nugget("", qid, running[i].text, labels[i] or "okay",
                              tuple((d,) for d in running[i].docids), "draft", "llm", extra))
    return nuggets


async def draft_with_llm(ws: Workspace, llm, settings: DraftSettings = DraftSettings(), *, only: Iterable[str] = (),
                         redraft: bool = False, corpus=None,
                         on_progress: Callable[[DraftReport, str], None] | None = None) -> DraftReport:
    """Draft every topic still to draft (see the module docstring); returns what happened.

    Each topic's nuggets are recorded in the store when the topic finishes (origin "llm", status
    "draft", author "model:<name>"), replacing that author's untouched drafts of an earlier run.
    """
    from trecbench.llm import BudgetExceeded, LLMError, ModelCallError

    model = llm.config.model
    drafter, author = drafter_name(model), author_name(model)
    dry_run = bool(getattr(llm, "dry_run", False))
    params = {"model": model, "min_grade": settings.min_grade, "window": settings.window,
              "max_nuggets": settings.max_nuggets, "keep": settings.keep, "prompts_sha256": prompts_sha256(),
              "params": dict(llm.config.params)}
    plan = plan_drafting(ws, drafter, settings.min_grade, only, redraft, corpus)
    report = plan.report
    stop = asyncio.Event()
    fatal: list[BaseException] = []

    async def one(qid: str) -> None:
        topic = plan.topics.get(qid)
        docs = plan.documents(qid)
        if not dry_run:
            ws.start_draft(qid, drafter, params)
        question = topic.text if topic is not None else qid
        try:
            nuggets, problems = await draft_topic(llm, qid, question, topic.narrative if topic else None, docs,
                                                  settings, report)
        except BudgetExceeded as e:
            report.stopped = str(e)
            report.budget_stop = True
            stop.set()
            if not dry_run:
                _stopped(ws, qid, drafter, report, "stopped before it finished: " + str(e))
            return
        except LLMError as e:  # a call that can never succeed (bad key, unknown model): stop the run
            report.stopped = str(e)
            if isinstance(e, ModelCallError) and e.fatal:
                fatal.append(e)
            stop.set()
            if not dry_run:
                _stopped(ws, qid, drafter, report, str(e))
            return
        if dry_run:
            return
        if topic is None:
            problems.insert(0, "not a topic of the workspace: drafted from its id alone")
        if not docs:
            problems.append(NO_DOCUMENTS)
        report.finish(ws, plan.store, qid, drafter, nuggets, problems, author=author, keep=settings.keep)

    async def draft(qid: str) -> None:
        await one(qid)
        if on_progress:
            on_progress(report, qid)

    await work_through(plan.todo, draft, workers=min(getattr(llm.config, "concurrency", 8), len(plan.todo) or 1),
                       stop=stop)
    if fatal:
        raise fatal[0]  # the topic stays incomplete with the reason; the caller reports the one error
    return report


def _stopped(ws: Workspace, qid: str, drafter: str, report: DraftReport, why: str) -> None:
    ws.finish_draft(qid, drafter, [why], 0)
    report.incomplete[qid] = [why]
