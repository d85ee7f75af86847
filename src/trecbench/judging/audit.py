"""Checking old qrels cheaply: a model re-judges them, and the pairs where it disagrees most go to people.

`audit_qrels` takes the reference's judged pairs (each pair's newest grade by a person, else by an import,
as `judge validate` chooses them; or one judge's), re-judges them through `judge_pool` (the same prompt,
batches, samples, model cache, cost limit, dry run, failure rules and judge name as `judge llm`), measures
how far the model agrees with the old grades, and stores the pairs where the two differ by `min_diff`
grades or more as a pool of its own (strategy `audit`), the largest disagreements first. The queue is made
once every pair in scope has a model grade; until then a rerun judges what is missing.

`serve --pool NAME` offers the queue blind to both grades: the model's is hidden, as on a validation
sample, and the pool counts only people's judgments made after it was queued (the pool's `since`), so an
assessor's old grade of a pair is neither shown nor counted as done. `read_audit` lists each queued pair
with its old grade, the model's and people's new one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, TYPE_CHECKING

import numpy as np
import pandas as pd

from trecbench.errors import InputError
from trecbench.judging.samples import AUDIT as STRATEGY

if TYPE_CHECKING:
    from trecbench.store.workspace import Workspace, WorkspaceLike


class AuditPair(NamedTuple):
    """One queued pair: the old grade, the model's, and the newest grade people gave it in the queue."""

    query_id: str
    doc_id: str
    old: int
    model: int
    new: int | None = None
    assessor: str | None = None  # who gave the new grade

    @property
    def diff(self) -> int:
        return self.model - self.old

    @property
    def closer(self) -> str | None:
        """Which grade people's new one is nearer: `old`, `model`, `halfway`; None before people re-judged it."""
        if self.new is None:
            return None
        to_old, to_model = abs(self.new - self.old), abs(self.new - self.model)
        return "old" if to_old < to_model else "model" if to_model < to_old else "halfway"


@dataclass
class Audit:
    """What `audit_qrels` found (or `read_audit` reads back): agreement, disagreements, and the queue."""

    name: str  # the queue's pool name
    reference: str  # the judge(s) whose grades were re-judged
    judge: str  # the model judge's name
    threshold: int  # binarised agreement: relevant from this grade
    min_diff: int
    in_scope: int  # reference pairs to re-judge (after --topic / --sample, without those left out)
    pairs: int  # pairs with both an old and a model grade
    left_out: int = 0  # reference pairs whose topic or document the workspace lacks
    exact: float = float("nan")  # share of pairs with the same grade
    within_one: float = float("nan")  # share differing by at most one grade
    binary: float = float("nan")  # share agreeing when binarised at `threshold`
    kappa: float = float("nan")  # Cohen's kappa on all grades
    disagreements: list[AuditPair] = field(default_factory=list)  # largest first
    queued: bool = False  # the pool `name` holds the disagreements
    queued_now: bool = False  # ... and this run stored it
    run: Any = None  # trecbench.judging.pool.JudgeRun of this run (None when nothing was judged)
    notes: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.pairs == self.in_scope

    @property
    def rejudged(self) -> int:
        """Queued pairs people have graded since the queue was made."""
        return sum(p.new is not None for p in self.disagreements)

    def as_dict(self) -> dict:
        def num(v: float) -> float | None:
            return None if v != v else float(v)

        return {"pool": self.name, "queued": self.queued, "reference": self.reference, "judge": self.judge,
                "threshold": self.threshold, "min_diff": self.min_diff, "in_scope": self.in_scope,
                "pairs": self.pairs, "left_out": self.left_out,
                "agreement": {"exact": num(self.exact), "within_one": num(self.within_one),
                              "binary": num(self.binary), "kappa": num(self.kappa)},
                "disagreements": [{**p._asdict(), "diff": p.diff, "closer": p.closer} for p in self.disagreements],
                "rejudged": self.rejudged, "closer": self.closer, "judging": self._judging(), "notes": self.notes}

    @property
    def closer(self) -> dict[str, int]:
        """How many of people's new grades are nearer the old grade, the model's, or halfway."""
        found = [p.closer for p in self.disagreements]
        return {side: found.count(side) for side in ("old", "model", "halfway")}

    def _judging(self) -> dict | None:
        """This run's model calls (None when it made none: a dry run, or a queue read back)."""
        report = None if self.run is None else self.run.report
        if report is None:
            return None
        return {"judged": report.judged, "failed": len(report.failed), "calls": report.calls, "cached": report.cached,
                "input_tokens": report.prompt_tokens, "output_tokens": report.completion_tokens, "cost": report.cost}


def _settings(judge: str, reference: str | None, min_diff: int, threshold: int, topics: list[str] | None,
              sample: int | None, seed: int) -> dict:
    """What decides an audit's pairs and grades: a queue is reused only by a run with the same settings."""
    return {"judge": judge, "reference": reference, "min_diff": min_diff, "threshold": threshold,
            "topics": sorted(topics) if topics else None, "sample": sample, "seed": seed if sample else None}


def audit_qrels(ws: WorkspaceLike, config: Any, *, reference: str | None = None, min_diff: int = 2, name: str = "audit",
                topics: list[str] | None = None, sample: int | None = None, seed: int = 0, threshold: int = 1,
                prompt: Any = None, batch: int = 1, samples: int = 1, examples: int = 0, limit: int | None = None,
                max_cost: Any = None, dry_run: bool = False, provider_batch: bool = False, collect: bool = False,
                on_start: Callable | None = None, on_progress: Callable | None = None) -> Audit:
    """Re-judge the reference's judged pairs with `config`'s model; queue those it disagrees with by `min_diff`+.

    ws: a `Workspace` or its path. reference: one person's or import's name (default: people, then imports).
    topics: only these topics; sample: only this many pairs, drawn at random (`seed`); limit: judge at most
    this many pairs in this run (as `judge llm --limit`). The other options are `judge_pool`'s (`provider_batch`:
    the requests go through the provider's batch interface and a later run collects them). When the pool
    `name` already holds an audit with the same settings, nothing is asked again: it is read back with
    people's new grades (`read_audit`); with other settings, or when it is another kind of pool, InputError.
    """
    from trecbench.judging.llm import model_judge
    from trecbench.judging.prompts import Prompt, load_prompt
    from trecbench.judging.pool import judge_pool, model_grades
    from trecbench.store import as_workspace

    ws = as_workspace(ws)
    prompt = prompt if isinstance(prompt, Prompt) else load_prompt(prompt, ws.settings.scale)
    identity = model_judge(config.model, prompt, batch=batch, samples=samples, params=dict(config.params),
                           examples=examples)
    settings = _settings(identity.name, reference, min_diff, threshold, topics, sample, seed)
    existing = next((p for p in ws.pools() if p.name == name), None)
    if existing is not None:
        if existing.strategy != STRATEGY:
            raise InputError(str(ws.path), 0, f"pool {name!r} exists and is not an audit queue: choose another --name")
        if existing.params.get("settings") != settings:
            raise InputError(str(ws.path), 0, f"pool {name!r} holds an audit with other settings "
                                              f"({_describe(existing.params.get('settings', {}))}): repeat them to "
                                              "list it, or choose another --name for a new audit")
        return read_audit(ws, name)
    frame, source, left_out = _scope(ws, reference, topics, sample, seed)
    frame.attrs["name"] = name
    run = judge_pool(ws, config, prompt=prompt, batch=batch, samples=samples, examples=examples, limit=limit,
                     max_cost=max_cost, dry_run=dry_run, provider_batch=provider_batch, collect=collect, pairs=frame,
                     on_start=on_start, on_progress=on_progress)
    audit = Audit(name, source, identity.name, threshold, min_diff, len(frame), 0, left_out, run=run)
    if left_out:
        audit.notes.append(f"{left_out} pair(s) of the reference left out: their topic or document is not in "
                           "the workspace")
    if dry_run:
        return audit
    done = model_grades(ws, identity.name)
    model = pd.DataFrame([(q, d, g) for (q, d), g in done.items()], columns=["query_id", "doc_id", "model"])
    both = frame[["query_id", "doc_id", "old"]].merge(model, on=["query_id", "doc_id"], how="inner")
    _measure(audit, both)
    above = int((frame["old"] > prompt.max_grade).sum())
    if above:
        audit.notes.append(f"{above} old grade(s) are above the prompt's top grade {prompt.max_grade}: the reference "
                           "uses a longer scale, so differences there are partly the scales'")
    audit.disagreements = _disagreements(both, min_diff)
    if not audit.complete:
        audit.notes.append(f"queue not made yet: {audit.in_scope - audit.pairs} of {audit.in_scope} pairs have no "
                           "model grade (failed, stopped, beyond --limit or waiting for a provider batch); run the same "
                           "command again")
        return audit
    if not audit.disagreements:
        audit.notes.append(f"no pair differs by {min_diff} grades or more: nothing to queue")
        return audit
    _store(ws, audit, settings)
    audit.queued = audit.queued_now = True
    return audit


def _scope(ws: Workspace, reference: str | None, topics: list[str] | None, sample: int | None,
           seed: int) -> tuple[pd.DataFrame, str, int]:
    """The reference pairs to re-judge (query_id, doc_id, old, priority), their judges, and how many were left out."""
    from trecbench.judging.validate import reference_grades

    grades, source = reference_grades(ws.judgments(direct=True), reference)
    if grades.empty:
        who = f"judge {reference!r} (a person or an import)" if reference else "a person or an import"
        raise InputError(str(ws.path), 0, f"no judgment by {who} to audit: record old qrels with "
                                          "`trecbench qrels import FILE -w BENCH --judge NAME`")
    grades = grades.rename(columns={"relevance": "old"})
    if topics:
        unknown = sorted(set(topics) - set(grades["query_id"]))
        if unknown:
            raise InputError(str(ws.path), 0, f"no judgment by {source} of topic(s) {', '.join(unknown)} to audit")
        grades = grades[grades["query_id"].isin(topics)]
    stored, corpus = ws.topics(), ws.corpus()
    present = [q in stored and corpus.get(d) is not None for q, d in zip(grades["query_id"], grades["doc_id"])]
    left_out = len(grades) - sum(present)
    grades = grades[present]
    if sample is not None and sample < len(grades):
        rng = np.random.default_rng(seed)
        grades = grades.iloc[np.sort(rng.choice(len(grades), size=sample, replace=False))]
    grades = grades.sort_values(["query_id", "doc_id"]).reset_index(drop=True)
    grades["priority"] = grades.groupby("query_id").cumcount() + 1
    return grades, source, left_out


def _measure(audit: Audit, both: pd.DataFrame) -> None:
    from trecbench.qrels.agreement import agreement

    audit.pairs = len(both)
    if both.empty:
        return
    diff = (both["model"] - both["old"]).abs()
    audit.exact = float((diff == 0).mean())
    audit.within_one = float((diff <= 1).mean())
    audit.binary = float(((both["old"] >= audit.threshold) == (both["model"] >= audit.threshold)).mean())
    audit.kappa = agreement(both.rename(columns={"old": "relevance"})[["query_id", "doc_id", "relevance"]],
                            both.rename(columns={"model": "relevance"})[["query_id", "doc_id", "relevance"]],
                            threshold=audit.threshold).kappa


def _disagreements(both: pd.DataFrame, min_diff: int) -> list[AuditPair]:
    """Pairs whose grades differ by `min_diff` or more: the largest difference first, then topic and document."""
    far = both[(both["model"] - both["old"]).abs() >= min_diff]
    rows = sorted(zip(far["query_id"], far["doc_id"], far["old"], far["model"]),
                  key=lambda r: (-abs(int(r[3]) - int(r[2])), str(r[0]), str(r[1])))
    return [AuditPair(str(q), str(d), int(o), int(m)) for q, d, o, m in rows]


def _store(ws: Workspace, audit: Audit, settings: dict) -> None:
    """The disagreements as pool `audit.name`; people's judgments count for it from the newest row on."""
    from trecbench.store.workspace import save_pool

    rows = pd.DataFrame([(p.query_id, p.doc_id) for p in audit.disagreements], columns=["query_id", "doc_id"])
    rows["priority"] = rows.groupby("query_id").cumcount() + 1  # within a topic: largest disagreement first
    rows["group"] = None
    rows["representative"] = True
    summary = {"in_scope": audit.in_scope, "pairs": audit.pairs, "left_out": audit.left_out, "exact": audit.exact,
               "within_one": audit.within_one, "binary": audit.binary, "kappa": audit.kappa}
    params = {"settings": settings, "source": audit.reference, "since": ws.newest_judgment(), "runs": [],
              "summary": summary, "notes": audit.notes,
              "grades": [[p.query_id, p.doc_id, p.old, p.model] for p in audit.disagreements]}
    save_pool(ws, audit.name, STRATEGY, params, rows)


def read_audit(ws: WorkspaceLike, name: str | None = None) -> Audit:
    """The audit queue `name` (default: the newest) with people's newest grade of each pair since it was queued."""
    from trecbench.store import as_workspace

    ws = as_workspace(ws)
    chosen = ws.pool(name) if name is not None else next((p for p in reversed(ws.pools()) if p.strategy == STRATEGY),
                                                         None)
    if chosen is None or chosen.strategy != STRATEGY:
        what = f"pool {name!r} is not an audit queue" if chosen else "the workspace has no audit queue"
        raise InputError(str(ws.path), 0, f"{what}: make one with `trecbench judge llm -w BENCH --audit --model ...`")
    params, since = chosen.params, chosen.since
    people = {(r.qid, r.docid): (r.grade, r.judge) for r in ws.judgment_rows(kind="human", direct=True, after=since)}
    pairs = [AuditPair(q, d, o, m, *people.get((q, d), (None, None))) for q, d, o, m in params["grades"]]
    s, summary = params["settings"], params["summary"]
    audit = Audit(chosen.name, params["source"], s["judge"], s["threshold"], s["min_diff"], summary["in_scope"],
                  summary["pairs"], summary["left_out"], _nan(summary["exact"]), _nan(summary["within_one"]),
                  _nan(summary["binary"]), _nan(summary["kappa"]), pairs, queued=True, notes=list(params["notes"]))
    return audit


def _nan(v: float | None) -> float:
    return float("nan") if v is None else float(v)


def _describe(settings: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in settings.items() if v is not None)


def format_audit(audit: Audit, workspace: str) -> str:
    """The terminal table: agreement, then the disagreements (largest first) with any new grade, then the queue."""
    lines = [f"audit of {audit.reference} by {audit.judge}: {audit.pairs} of {audit.in_scope} pairs re-judged"]
    if audit.pairs:
        lines.append(f"agreement: exact {audit.exact:.3f}, within 1 grade {audit.within_one:.3f}, binarised at grade "
                     f">= {audit.threshold} {audit.binary:.3f}, Cohen's kappa {_fmt(audit.kappa)}")
    lines.append(f"disagreements by {audit.min_diff} or more grades: {len(audit.disagreements)}")
    if audit.disagreements:
        from trecbench.evaluation.retrieval.output import aligned

        header = ["topic", "doc", "old", "model", "diff", "new", "by"]
        rows = [[p.query_id, p.doc_id, str(p.old), str(p.model), f"{p.diff:+d}",
                 "-" if p.new is None else str(p.new), p.assessor or "-"] for p in audit.disagreements]
        lines += aligned(header, rows, left=len(header))
    if audit.queued:
        made = "queued" if audit.queued_now else "queue"
        n = len(audit.disagreements)
        lines.append(f"{made}: pool {audit.name!r}, {n} pair{'s' * (n != 1)}, {audit.rejudged} re-judged by "
                     f"people; judge them blind with: trecbench serve -w {workspace} --pool {audit.name}")
        if audit.rejudged:
            c = audit.closer
            lines.append(f"people's new grades: {c['old']} nearer the old grade, {c['model']} nearer the model's, "
                         f"{c['halfway']} halfway")
    lines += [f"note: {n}" for n in audit.notes]
    return "\n".join(lines)


def _fmt(v: float) -> str:
    return "-" if v != v else f"{v:.3f}"
