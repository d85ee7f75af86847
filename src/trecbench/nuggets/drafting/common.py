"""What both nugget drafters share: the relevant documents per topic, the per-topic run record, the report.

A drafting run records each topic in table `nugget_drafts` under its drafter's name (`llm:<model>` or
`extractive`): `running` while it is drafted, then `complete`, or `incomplete` with the problems that
kept it from completing. A rerun skips complete topics and drafts the others again.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, NamedTuple

from trecbench.llm.records import Usage
from trecbench.store.workspace import Workspace

# The problem of a topic none of whose judged-relevant documents the corpus has (both drafters report it).
NO_DOCUMENTS = "none of its relevant documents is in the corpus"


@dataclass
class DraftReport:
    """What a drafting run did, for the command's summary and exit status."""

    complete: list[str] = field(default_factory=list)
    incomplete: dict[str, list[str]] = field(default_factory=dict)  # qid -> problems
    skipped: list[str] = field(default_factory=list)  # complete from an earlier run
    no_documents: list[str] = field(default_factory=list)  # topics with no judged-relevant document
    missing: list[tuple[str, str]] = field(default_factory=list)  # (qid, docid) not in the corpus
    nuggets: int = 0
    stopped: str | None = None  # why the run stopped early (budget, a call that can never succeed)
    budget_stop: bool = False
    usage: Usage = field(default_factory=Usage)

    # The totals the summary line prints.
    calls = property(lambda self: self.usage.calls)
    cached = property(lambda self: self.usage.cached)
    prompt_tokens = property(lambda self: self.usage.prompt_tokens)
    completion_tokens = property(lambda self: self.usage.completion_tokens)
    cost = property(lambda self: self.usage.cost)

    def count(self, outcome) -> None:
        """Add an llm Outcome's replies to the totals."""
        self.usage += Usage.of(outcome.completions)

    def finish(self, ws: Workspace, store, qid: str, drafter: str, nuggets: list, problems: list[str], *,
               author: str, keep: int | None) -> list:
        """Store a topic's new drafts (people's work kept), close its drafting run, count it; the stored nuggets."""
        stored = store.replace_drafts(qid, nuggets, author=author, keep=keep)
        ws.finish_draft(qid, drafter, problems, len(stored))
        self.nuggets += len(stored)
        if problems:
            self.incomplete[qid] = problems
        else:
            self.complete.append(qid)
        return stored


def draft_states(ws: Workspace, drafter: str) -> dict[str, str]:
    """{qid: running | complete | incomplete} of this drafter's earlier runs."""
    return {run.qid: run.status for run in ws.draft_runs(drafter=drafter)}


def plan_topics(ws: Workspace, drafter: str, relevant: dict[str, list[tuple[str, int]]],
                only: Iterable[str] = (), redraft: bool = False) -> tuple[list[str], list[str], list[str]]:
    """(topics to draft, topics skipped as complete, topics without relevant documents), in qid order.

    The topics are the workspace's (or, without topics, those with judgments), narrowed to `only`.
    """
    wanted = list(ws.topics()) or sorted(relevant)
    if only:
        chosen = set(only)
        unknown = sorted(chosen - set(wanted) - set(relevant))
        if unknown:
            raise ValueError(f"no such topic: {', '.join(unknown)}")
        wanted = [q for q in sorted(set(wanted) | set(relevant)) if q in chosen]
    states = draft_states(ws, drafter)
    todo, skipped, empty = [], [], []
    for qid in wanted:
        if not relevant.get(qid):
            empty.append(qid)
        elif states.get(qid) == "complete" and not redraft:
            skipped.append(qid)
        else:
            todo.append(qid)
    return todo, skipped, empty


class DraftPlan(NamedTuple):
    """What a drafting run works through: each topic's relevant documents, the topics to draft, the report
    it fills, the workspace's topics, the corpus the documents are read from and the nugget store."""

    relevant: dict[str, list[tuple[str, int]]]
    todo: list[str]
    report: DraftReport
    topics: dict
    corpus: Any
    store: Any

    def documents(self, qid: str, *, titles: bool = True) -> list[tuple[str, str]]:
        """The topic's relevant documents [(docid, text)] as `read_documents` gives them; those the corpus
        lacks go into the report's `missing`."""
        docs, missing = read_documents(self.corpus, [d for d, _ in self.relevant[qid]], titles=titles)
        self.report.missing.extend((qid, d) for d in missing)
        return docs


def plan_drafting(ws: Workspace, drafter: str, min_grade: int, only: Iterable[str] = (), redraft: bool = False,
                  corpus: Any = None) -> DraftPlan:
    """The start of both drafters: the documents judged >= `min_grade`, and the topics `plan_topics` gives."""
    from trecbench.nuggets.relevant import relevant_by_topic
    from trecbench.nuggets.store import NuggetStore

    relevant = relevant_by_topic(ws, min_grade)
    todo, skipped, empty = plan_topics(ws, drafter, relevant, only, redraft)
    return DraftPlan(relevant, todo, DraftReport(skipped=skipped, no_documents=empty), ws.topics(),
                     corpus if corpus is not None else ws.corpus(), NuggetStore(ws))


def read_documents(corpus, docids: Iterable[str], *, titles: bool = True) -> tuple[list[tuple[str, str]], list[str]]:
    """[(docid, text)] in the given order (the title on a line before the text, with `titles`), and the
    docids the corpus does not have."""
    found, missing = corpus.lookup(docids)
    return [(docid, doc.text if not (titles and doc.title) else f"{doc.title}\n{doc.text}")
            for docid, doc in found], missing
