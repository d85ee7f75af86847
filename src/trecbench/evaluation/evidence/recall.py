"""Evidence recall: did retrieval bring back what an answer needs, and where in the pipeline was it lost?

Evidence is a list of items per topic (`evidence_files`), each needed by a good answer; an item is
established by any one of its alternatives, and an alternative is a joint group of documents all of
which are needed. An item is covered by a set of documents when one alternative is in it in full; it
counts once however many of its sources come back.

Measures per topic, on the top k contexts (the first k positions of the last stage, `contexts`):

- `EvidenceRecall@k`: covered items / required items
- `CompleteEvidence@k`: 1 when every required item is covered, else 0 (its mean: the share of topics)
- `IDRecall@k`: retrieved source documents / all source documents (plain ID recall, for contrast)

A run's score is the macro mean: the mean over topics of the per-topic values, each topic weighing
the same. The funnel follows each item through ordered stages (initial, filtered, reranked, final
...): the last stage where it was present and the stage where it was lost (`cut@k` when the last
stage has it below rank k, `never retrieved` when no stage has it). Its shares are micro: items
present / items required, all topics' items pooled, so a topic with many items weighs more.

Another chunking (`chunking`, `chunkings.Chunking`): evidence made on the benchmark's passages scores
contexts retrieved from another chunking of the same sources: each stage's (and the cut's) contexts are
turned into the evidence passages they cover by source span, and scoring goes on as above. Duplicate
groups name passages of the evidence's chunking and are not used then.

Token budgets (`budgets`, `budgets.Budget`): `EvidenceRecall@Ntok[tokenizer]` and
`CompleteEvidence@Ntok[tokenizer]` on the contexts within N tokens instead of the top k, and the funnel's
tokens per stage (see `budgets` for the rule).

Permissions: sources a topic may not see are dropped from the requirement and reported: an
alternative needing one is dropped, and an item with no alternative left is not required, so a
correct permission filter is never scored as a miss. A nugget without supporting documents is not
required either, and is listed. With duplicate groups (`duplicates`), the members of a group are
one document: retrieving any of them retrieves them all.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, NamedTuple, Union

import pandas as pd

from trecbench.evaluation.evidence.budgets import Budget, TokenCounter, budget_measures, within_budget
from trecbench.evaluation.evidence.chunkings import Chunking, ChunkingReport, chunking_messages, chunking_notes
from trecbench.evaluation.evidence.contexts import StagedContexts, ranked_docids, read_contexts  # noqa: F401 (re-exported)
from trecbench.evaluation.evidence.duplicates import NONE, DuplicateGroups
from trecbench.evaluation.evidence.files import (  # noqa: F401 (re-exported)
    EvidenceItem,
    Permissions,
    evidence_from_nuggets,
    permission_warnings,
    read_evidence,
    read_permissions,
)
from trecbench.evaluation.topic_scores import scores_frame
from trecbench.nuggets.model import satisfied_group

PathLike = Union[str, Path]
NEVER = "never retrieved"
AVERAGING = {"EvidenceRecall@k, CompleteEvidence@k, IDRecall@k": "macro: the mean over topics of each topic's value",
             "funnel share": "micro: items present / items required, all topics' items pooled"}


# --- scoring ---------------------------------------------------------------------------------------


class FunnelRow(NamedTuple):
    """Where one evidence item went in one run's pipeline."""

    run: str
    qid: str
    item: str
    present: tuple[bool, ...]  # per stage, then at the cut (@k) of the last stage
    last_stage: str  # the last stage that had it ("" if none)
    lost_at: str  # the stage that dropped it, `cut@k`, `never retrieved`, or "" when kept to the end


class Dropped(NamedTuple):
    """Sources of an item a topic may not see; `item_dropped` when no alternative was left."""

    qid: str
    item: str
    sources: tuple[str, ...]
    item_dropped: bool


@dataclass
class EvidenceScores:
    """Evidence measures (`frame`: per topic plus `all` rows), the funnel, and what was set aside."""

    frame: pd.DataFrame
    k: int
    stages: dict[str, tuple[str, ...]] = field(default_factory=dict)  # run -> stages (then `@k`)
    funnel: list[FunnelRow] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    leaks: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # run -> (qid, docid) not permitted
    no_evidence: list[str] = field(default_factory=list)  # topics with no required item: NaN, not averaged
    missing: dict[str, list[str]] = field(default_factory=dict)  # run -> evidence topics it has no contexts for
    unjudged: dict[str, list[str]] = field(default_factory=dict)  # run -> its topics without evidence
    unsupported: list[tuple[str, str]] = field(default_factory=list)  # (qid, item) without sources: not required
    warnings: list[str] = field(default_factory=list)  # what the permissions map probably gets wrong
    duplicates: int = 0  # documents scored as their duplicate group's representative
    budgets: tuple[Budget, ...] = ()  # the token budgets measured besides k
    tokenizer: str | None = None  # what tokens were counted with (None: not counted)
    tokens: dict[str, tuple[int, ...]] = field(default_factory=dict)  # run -> tokens per stage (then @k), all topics
    scored_topics: dict[str, int] = field(default_factory=dict)  # run -> topics its tokens were counted over
    chunking: Chunking | None = None  # the retrieval chunking the evidence was projected onto
    chunking_report: ChunkingReport | None = None
    unspanned: dict[str, list[str]] = field(default_factory=dict)  # run -> retrieved docids without a span
    duplicates_unused: bool = False  # groups given but not used (they name the evidence chunking's passages)

    def stage_summary(self) -> pd.DataFrame:
        """Per run and stage: items present, their share of the required items, and items lost there."""
        rows = []
        for run, stages in self.stages.items():
            mine = [f for f in self.funnel if f.run == run]
            total = len(mine)
            for i, stage in enumerate(stages):
                present = sum(f.present[i] for f in mine)
                lost = sum(f.lost_at == stage for f in mine)
                rows.append({"run": run, "stage": stage, "present": present, "required": total,
                             "share": present / total if total else math.nan, "lost_here": lost,
                             **self._stage_tokens(run, i)})
            never = sum(f.lost_at == NEVER for f in mine)
            rows.append({"run": run, "stage": NEVER, "present": 0, "required": total,
                         "share": math.nan, "lost_here": never, **self._stage_tokens(run, None)})
        columns = ["run", "stage", "present", "required", "share", "lost_here"]
        return pd.DataFrame(rows, columns=columns + (["tokens", "tokens_per_topic"] if self.tokenizer else []))

    def _stage_tokens(self, run: str, stage: int | None) -> dict[str, float]:
        """The tokens a stage's contexts spend over the run's scored topics, and per topic (counted only when
        a tokenizer was given)."""
        if not self.tokenizer:
            return {}
        if stage is None:
            return {"tokens": math.nan, "tokens_per_topic": math.nan}
        spent, topics = self.tokens[run][stage], self.scored_topics.get(run, 0)
        return {"tokens": spent, "tokens_per_topic": spent / topics if topics else math.nan}

    def messages(self, missing_topics: str = "zero") -> list[str]:
        """A sentence for each thing set aside or counted apart, and why (the command prints them, the report
        lists them); `missing_topics` as the scores were made with."""
        from trecbench.helpers.messages import some

        out = list(self.warnings)
        if self.chunking is not None and self.chunking_report is not None:
            out += chunking_messages(self.chunking, self.chunking_report, self.unspanned)
        if self.duplicates_unused:
            out.append("duplicate groups not used: they name passages of the evidence's chunking, not the contexts'")
        if self.unsupported:
            out.append(f"{len(self.unsupported)} nugget(s) not required, no evidence (no supporting documents): "
                       f"{some(f'{q}:{i}' for q, i in self.unsupported)}")
        if self.duplicates:
            out.append(f"{self.duplicates} retrieved document(s) in the top k scored as their duplicate group's "
                       "representative (--duplicates distinct to count them apart)")
        if self.no_evidence:
            out.append(f"{len(self.no_evidence)} topic(s) have no required evidence, left out of the means: "
                       f"{some(self.no_evidence)}")
        for d in self.dropped:
            what = "no longer required" if d.item_dropped else "its other alternatives still count"
            out.append(f"topic {d.qid}, item {d.item}: not permitted to see {' '.join(d.sources)}; {what}")
        for run, leaks in self.leaks.items():
            if leaks:
                out.append(f"{run}: {len(leaks)} retrieved document(s) the topic may not see: "
                           f"{some(f'{q}:{d}' for q, d in leaks)}")
        for run, qids in self.missing.items():
            if qids:
                what = "scored 0" if missing_topics == "zero" else "left out"
                out.append(f"{run}: {len(qids)} evidence topic(s) not in the contexts, {what}: {some(qids)}")
        for run, qids in self.unjudged.items():
            if qids:
                out.append(f"{run}: {len(qids)} topic(s) without evidence, not scored: {some(qids)}")
        return out

    def notes(self) -> dict[str, dict[str, Any]]:
        return {run: {"stages": list(stages), "averaging": dict(AVERAGING), **self._new_notes(run),
                      "topics_without_evidence": list(self.no_evidence),
                      "not_required_without_evidence": [f"{q}:{i}" for q, i in self.unsupported],
                      "permission_warnings": list(self.warnings),
                      "missing_topics": self.missing.get(run, []), "topics_not_in_evidence": self.unjudged.get(run, []),
                      "not_permitted_but_retrieved": [list(x) for x in self.leaks.get(run, [])],
                      "dropped_by_permissions": [{"qid": d.qid, "item": d.item, "sources": list(d.sources),
                                                  "item_dropped": d.item_dropped} for d in self.dropped],
                      "funnel": [{"qid": f.qid, "item": f.item, "last_stage": f.last_stage, "lost_at": f.lost_at}
                                 for f in self.funnel if f.run == run]}
                for run, stages in self.stages.items()}

    def _new_notes(self, run: str) -> dict[str, Any]:
        """What another chunking and token budgets add to a run's JSON notes (nothing when not used)."""
        out: dict[str, Any] = {}
        if self.chunking is not None and self.chunking_report is not None:
            out["coverage"] = chunking_notes(self.chunking, self.chunking_report)
            out["retrieved_without_span"] = self.unspanned.get(run, [])
        if self.tokenizer:
            out["tokenizer"] = self.tokenizer
            out["budgets"] = [b.tokens for b in self.budgets]
            out["tokens_per_stage"] = dict(zip(self.stages[run], self.tokens[run]))
            out["tokens_counted_over_topics"] = self.scored_topics.get(run, 0)
        return out


def measures(k: int, budgets: Iterable[Budget] = ()) -> list[str]:
    """The measure names, at k and then at each token budget."""
    return [f"EvidenceRecall@{k}", f"CompleteEvidence@{k}", f"IDRecall@{k}"] + [
        m for b in budgets for m in budget_measures(b)]


def apply_permissions(items: list[EvidenceItem], permissions: Permissions | None) -> tuple[list[EvidenceItem],
                                                                                            list[Dropped]]:
    """Items restricted to what their topic may see, and what was dropped."""
    if permissions is None:
        return items, []
    kept, dropped = [], []
    for item in items:
        hidden = tuple(d for d in item.sources if not permissions.visible(item.qid, d))
        if not hidden:
            kept.append(item)
            continue
        groups = tuple(g for g in item.any_of if not any(d in hidden for d in g))
        dropped.append(Dropped(item.qid, item.id, hidden, not groups))
        if groups:
            kept.append(EvidenceItem(item.qid, item.id, groups, item.text, item.importance))
    return kept, dropped


def evaluate_evidence(
    evidence: PathLike | Iterable[EvidenceItem],
    contexts: PathLike | StagedContexts | Iterable[PathLike | StagedContexts],
    *,
    k: int = 10,
    permissions: PathLike | Permissions | None = None,
    missing_topics: str = "zero",
    duplicates: DuplicateGroups | None = None,
    chunking: Chunking | None = None,
    budgets: Iterable[int] = (),
    tokenizer: str | None = None,
    corpus: Any = None,
) -> EvidenceScores:
    """Score staged contexts against evidence: EvidenceRecall@k, CompleteEvidence@k, IDRecall@k, funnel.

    evidence: an evidence (or nuggets) file, or EvidenceItem records (`any_of` () is a nugget without
        supporting documents: listed in `unsupported`, not required).
    contexts: one or more contexts files (TREC run or staged JSONL) or StagedContexts, one per system.
    permissions: a permissions file or Permissions; sources a topic may not see are not required.
    missing_topics: "zero" (an evidence topic without contexts scores 0) or "skip".
    duplicates: duplicate groups (`duplicate_groups(workspace)`): a group's members are one document.
    chunking: the evidence's chunking and the contexts' (`chunkings.read_chunking(evidence_spans,
        corpus_spans, cover)`): contexts retrieved from another chunking of the same sources cover the
        evidence passages they hold (together) at least `cover` of; duplicate groups are not used then.
    budgets: token budgets N: adds EvidenceRecall@Ntok[tokenizer] and CompleteEvidence@Ntok[tokenizer]
        (the last stage's contexts in rank order while their total stays within N; see `budgets`).
    tokenizer: "whitespace" (the default with budgets) or a tiktoken encoding available offline; with
        it, the funnel counts each stage's tokens (`stage_summary`'s tokens, tokens_per_topic).
    corpus: a Corpus or path giving the texts of contexts that carry only an id (for tokens).

    Refuses (ValueError) k or a budget that is not positive, and an unknown or not installed tokenizer.

    Example:
        >>> scores = evaluate_evidence("evidence.jsonl", ["stages.jsonl"], k=10)
        >>> scores.frame.loc[("mysystem", "all"), "EvidenceRecall@10"]
        >>> scores = evaluate_evidence("evidence.jsonl", ["chunks.run"], budgets=[500],
        ...                            chunking=read_chunking("corpus.jsonl", "chunks.jsonl"))
        >>> scores.frame.loc[("mysystem", "all"), "EvidenceRecall@500tok[whitespace]"]
    """
    if k <= 0:
        raise ValueError(f"k must be positive, not {k}")
    if missing_topics not in ("zero", "skip"):
        raise ValueError(f"missing_topics must be 'zero' or 'skip', not {missing_topics!r}")
    items = read_evidence(evidence) if isinstance(evidence, (str, Path)) else list(evidence)
    if isinstance(permissions, (str, Path)):
        permissions = read_permissions(permissions)
    systems = _read_systems(contexts)
    how = _scoring(k, missing_topics, duplicates, permissions, chunking, budgets, tokenizer, corpus)
    topics = list(dict.fromkeys(i.qid for i in items))
    required, dropped = apply_permissions([i for i in items if i.any_of], permissions)
    warnings = [] if permissions is None else _permission_warnings(permissions, topics, items, systems)
    need = _required_by_topic(required, topics, how.groups)
    scored = [_score_system(run, system, need, how) for run, system in zip(_run_names(systems), systems)]
    scores = _evidence_scores(scored, how, with_leaks=permissions is not None, dropped=dropped,
                              no_evidence=[q for q in topics if not need[q]],
                              unsupported=[(i.qid, i.id) for i in items if not i.any_of], warnings=warnings)
    if chunking is not None:
        scores.chunking, scores.duplicates_unused = chunking, bool(duplicates)
        scores.chunking_report = chunking.report(d for i in required for d in i.sources)
    return scores


def _scoring(k: int, missing_topics: str, duplicates: DuplicateGroups | None, permissions: Permissions | None,
             chunking: Chunking | None, budgets: Iterable[int], tokenizer: str | None, corpus: Any) -> _Scoring:
    """The options every system is scored with, checked; tokens counted only when a budget or tokenizer is given."""
    cuts = tuple(budgets)
    if any(not isinstance(b, int) or b <= 0 for b in cuts):
        raise ValueError(f"token budgets must be positive integers, not {list(cuts)}")
    if tokenizer is None and cuts:
        tokenizer = "whitespace"
    if isinstance(corpus, (str, Path)):
        from trecbench.corpus import open_corpus

        corpus = open_corpus(corpus)
    tokens = TokenCounter(tokenizer, corpus) if tokenizer else None
    groups = NONE if chunking is not None else duplicates or NONE
    return _Scoring(k, missing_topics, groups, permissions, chunking,
                    tuple(Budget(b, tokenizer or "whitespace") for b in cuts), tokens)


def _evidence_scores(scored: list[_SystemScores], how: _Scoring, *, with_leaks: bool, dropped: list[Dropped],
                     no_evidence: list[str], unsupported: list[tuple[str, str]], warnings: list[str]) -> EvidenceScores:
    """Every system's scores gathered into one `EvidenceScores` (leaks listed only when permissions were given)."""
    counted = how.tokens is not None
    return EvidenceScores(
        scores_frame([row for s in scored for row in s.rows], measures(how.k, how.budgets)), how.k,
        stages={s.run: s.stages for s in scored}, funnel=[f for s in scored for f in s.funnel], dropped=dropped,
        leaks={s.run: s.leaks for s in scored} if with_leaks else {}, no_evidence=no_evidence,
        missing={s.run: s.missing for s in scored}, unjudged={s.run: s.unjudged for s in scored},
        unsupported=unsupported, warnings=warnings, duplicates=sum(s.duplicates for s in scored),
        budgets=how.budgets, tokenizer=how.tokens.name if how.tokens is not None else None,
        tokens={s.run: s.tokens for s in scored} if counted else {},
        scored_topics={s.run: len(s.rows) for s in scored} if counted else {},
        unspanned={s.run: s.unspanned for s in scored} if how.chunking is not None else {})


class _Scoring(NamedTuple):
    """The options every system is scored with."""

    k: int
    missing_topics: str
    groups: DuplicateGroups
    permissions: Permissions | None
    chunking: Chunking | None = None
    budgets: tuple[Budget, ...] = ()
    tokens: TokenCounter | None = None


class _SystemScores(NamedTuple):
    """One system's share of `EvidenceScores`."""

    run: str
    stages: tuple[str, ...]
    missing: list[str]
    unjudged: list[str]
    leaks: list[tuple[str, str]]
    funnel: list[FunnelRow]
    rows: list[tuple[str, str, dict[str, float]]]
    duplicates: int
    tokens: tuple[int, ...] = ()  # per stage, then the top k, summed over the scored topics
    unspanned: list[str] = []  # retrieved docids without a span in the retrieval chunking


def _read_systems(contexts: PathLike | StagedContexts | Iterable[PathLike | StagedContexts]) -> list[StagedContexts]:
    if isinstance(contexts, (str, Path, StagedContexts)):
        contexts = [contexts]
    return [c if isinstance(c, StagedContexts) else read_contexts(c) for c in contexts]


def _permission_warnings(permissions: Permissions, topics: list[str], items: list[EvidenceItem],
                         systems: list[StagedContexts]) -> list[str]:
    """What the permissions map probably gets wrong, judged by every docid the evidence and contexts name."""
    seen = {c.id for s in systems for q in s.contexts for st in s.stages for c in s.ranked(q, st) if c.id}
    return permission_warnings(permissions, topics, seen | {d for i in items for d in i.sources})


def _required_by_topic(required: list[EvidenceItem], topics: list[str],
                       groups: DuplicateGroups) -> dict[str, list[EvidenceItem]]:
    """Each topic's required items, each alternative's documents in their duplicate groups' terms."""
    by_topic: dict[str, list[EvidenceItem]] = {q: [] for q in topics}
    for item in required:
        by_topic[item.qid].append(EvidenceItem(item.qid, item.id, tuple(
            tuple(dict.fromkeys(groups.all_same(item.qid, g))) for g in item.any_of), item.text, item.importance))
    return by_topic


def _run_names(systems: list[StagedContexts]) -> list[str]:
    """Each system's name; systems sharing a name are told apart by their position (`name#2`)."""
    names = [s.run for s in systems]
    return [name if names.count(name) == 1 else f"{name}#{names[:n].count(name) + 1}"
            for n, name in enumerate(names)]


def _score_system(run: str, system: StagedContexts, need: dict[str, list[EvidenceItem]],
                  how: _Scoring) -> _SystemScores:
    """One system's per-topic measures, funnel rows and what it is missing or leaks."""
    _no_ids(system)
    k = how.k
    stages = system.stages + (f"cut@{k}",)
    leaks = [] if how.permissions is None else [
        (q, str(c.id)) for q in system.contexts for c in system.top_k(q, k) if not how.permissions.visible(q, str(c.id))]
    topics = [_score_topic(run, system, qid, items, stages, how) for qid, items in need.items()
              if qid in system.contexts or how.missing_topics != "skip"]
    return _SystemScores(run, stages, [q for q in need if q not in system.contexts and need[q]],
                         [q for q in system.contexts if q not in need], leaks, [f for t in topics for f in t.funnel],
                         [t.row for t in topics], sum(t.duplicates for t in topics),
                         tuple(int(sum(n)) for n in zip(*(t.tokens for t in topics))), _unspanned(system, how))


def _unspanned(system: StagedContexts, how: _Scoring) -> list[str]:
    """The system's retrieved docids that have no span in the retrieval chunking (none without one)."""
    if how.chunking is None:
        return []
    return how.chunking.unspanned(str(c.id) for q in system.contexts for s in system.stages for c in system.ranked(q, s))


class _TopicScores(NamedTuple):
    funnel: list[FunnelRow]
    row: tuple[str, str, dict[str, float]]
    duplicates: int  # documents of its top k scored as their group's representative
    tokens: tuple[int, ...] = ()  # per stage, then the top k (counted only with a tokenizer)


def _score_topic(run: str, system: StagedContexts, qid: str, need: list[EvidenceItem], stages: tuple[str, ...],
                 how: _Scoring) -> _TopicScores:
    """One topic of one system: where each required item went, and the topic's measures on the top k."""
    groups = how.groups
    ranked = [system.ranked(qid, s) for s in system.stages]
    per_stage = [_found(how, qid, need, contexts) for contexts in ranked]
    top_k = system.top_k(qid, how.k)
    at_k = _found(how, qid, need, top_k)
    funnel = [_funnel_row(run, qid, item.id, tuple(satisfied_group(item.any_of, docs) is not None
                                                   for docs in per_stage + [at_k]), stages)
              for item in need]
    row = _topic_measures(need, at_k, how.k)
    for budget in how.budgets:
        within = within_budget(system.ranked(qid), budget.tokens, lambda c: how.tokens(c, system.run))  # type: ignore[misc]
        row.update(_budget_measures(need, _found(how, qid, need, within), budget))
    tokens = tuple(how.tokens.total(c, system.run) for c in ranked + [top_k]) if how.tokens else ()
    return _TopicScores(funnel, (run, qid, row), sum(groups.same(qid, str(c.id)) != c.id for c in top_k), tokens)


def _found(how: _Scoring, qid: str, need: list[EvidenceItem], contexts: tuple[Any, ...]) -> set[str]:
    """The evidence documents these contexts give: their docids (a duplicate group's as its representative),
    or, from another chunking, the evidence passages they cover together."""
    docids = how.groups.all_same(qid, (str(c.id) for c in contexts))
    if how.chunking is None:
        return set(docids)
    # a list, not a set: a span link equals its docid, and a set would keep only one of the two
    return how.chunking.covered([d for i in need for d in i.sources], docids)


def _topic_measures(need: list[EvidenceItem], at_k: set[str], k: int) -> dict[str, float]:
    """One topic's EvidenceRecall@k, CompleteEvidence@k and IDRecall@k (NaN when it requires nothing)."""
    if not need:
        return {m: math.nan for m in measures(k)}
    covered = sum(satisfied_group(i.any_of, at_k) is not None for i in need)
    sources = {d for i in need for d in i.sources}
    return {f"EvidenceRecall@{k}": covered / len(need), f"CompleteEvidence@{k}": float(covered == len(need)),
            f"IDRecall@{k}": len(sources & at_k) / len(sources)}


def _budget_measures(need: list[EvidenceItem], found: set[str], budget: Budget) -> dict[str, float]:
    """One topic's EvidenceRecall and CompleteEvidence on the contexts within a token budget."""
    recall, complete = budget_measures(budget)
    if not need:
        return {recall: math.nan, complete: math.nan}
    covered = sum(satisfied_group(i.any_of, found) is not None for i in need)
    return {recall: covered / len(need), complete: float(covered == len(need))}


def _no_ids(system: StagedContexts) -> None:
    from trecbench.errors import InputError

    for qid in system.contexts:
        for stage in system.stages:
            if any(c.id is None for c in system.ranked(qid, stage)):
                raise InputError(system.run, 0, f"topic {qid}, stage {stage}: contexts without ids; evidence is "
                                                "matched by docid (give {id, text} or docids)")


def _funnel_row(run: str, qid: str, item: str, present: tuple[bool, ...], stages: tuple[str, ...]) -> FunnelRow:
    named = stages[:-1]  # the pipeline's own stages; the last entry of `present` is the cut at k
    last = max((i for i, p in enumerate(present[:-1]) if p), default=-1)
    if last < 0:
        return FunnelRow(run, qid, item, present, "", NEVER)
    if present[-1]:
        return FunnelRow(run, qid, item, present, named[last], "")
    lost = stages[last + 1]  # the next stage, or the cut when the last stage had it
    return FunnelRow(run, qid, item, present, named[last], lost)

