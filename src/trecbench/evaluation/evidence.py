"""Evidence recall: did retrieval bring back what an answer needs, and where in the pipeline was it lost?

Evidence is a list of items per topic, each needed by a good answer; an item is established by any one
of its alternatives, and an alternative is a joint group of documents all of which are needed
(`any_of: [["A"], ["B", "C"]]` reads "A, or B together with C"). An item is covered by a set of
documents when one alternative is in it in full; it counts once however many of its sources come back.

Measures per topic, on the last stage of the contexts cut at k:

- `EvidenceRecall@k`: covered items / required items
- `CompleteEvidence@k`: 1 when every required item is covered, else 0 (its mean: the share of topics)
- `IDRecall@k`: retrieved source documents / all source documents (plain ID recall, for contrast)

The funnel follows each item through ordered stages (initial, filtered, reranked, final ...): the last
stage where it was present and the stage where it was lost (`cut@k` when the last stage has it below
rank k, `never retrieved` when no stage has it).

Permissions map a topic to the documents (and named groups of documents) it may see. Sources it may
not see are dropped from the requirement and reported: an alternative needing one is dropped, and an
item with no alternative left is not required, so a correct permission filter is never scored as a miss.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, NamedTuple, Union

import pandas as pd

from trecbench.errors import InputError, Problem
from trecbench.evaluation.topic_scores import scores_frame
from trecbench.nuggets.model import Support, normalise_support, satisfied_group

PathLike = Union[str, Path]
NEVER = "never retrieved"


@dataclass(frozen=True)
class EvidenceItem:
    """One piece of evidence a topic's answer needs, with the alternative document groups that give it."""

    qid: str
    id: str
    any_of: Support
    text: str | None = None
    importance: str | None = None

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(d for g in self.any_of for d in g))


@dataclass(frozen=True)
class StagedContexts:
    """One system's contexts: per topic, the ranked docids of each stage, stages in pipeline order."""

    run: str
    stages: tuple[str, ...]
    docids: dict[str, dict[str, tuple[str, ...]]]  # qid -> stage -> ranked docids

    def final(self, qid: str) -> tuple[str, ...]:
        return self.docids.get(qid, {}).get(self.stages[-1], ())


@dataclass(frozen=True)
class Permissions:
    """Which documents each topic may see: docids, and `group:NAME` entries expanded through `groups`."""

    allowed: dict[str, frozenset[str]]  # qid -> docids and group names ("group:NAME")
    groups: dict[str, frozenset[str]] = field(default_factory=dict)  # NAME -> docids

    def visible(self, qid: str, docid: str) -> bool:
        allowed = self.allowed.get(qid)
        if allowed is None:
            return True  # a topic the map does not mention is unrestricted
        if docid in allowed:
            return True
        return any(docid in self.groups.get(g[6:], ()) for g in allowed if g.startswith("group:"))


# --- reading ---------------------------------------------------------------------------------------


def _id(value: Any) -> str | None:
    from trecbench._lines import json_id

    return json_id(value)


def read_evidence(path: PathLike) -> list[EvidenceItem]:
    """Evidence items from JSONL `{qid, evidence: [{id, text?, importance?, any_of: [[docid, ...], ...]}]}`.

    A nuggets file is read too (nuggets with `support` become items; see `evidence_from_nuggets`).
    Raises InputError listing every problem.
    """
    from trecbench._lines import iter_json_objects

    where = str(path)
    items: list[EvidenceItem] = []
    problems: list[Problem] = []
    first: dict[str, int] = {}
    nugget_lines = False
    for number, record, error in iter_json_objects(path):
        if record is None:
            problems.append(Problem(where, number, error))
            continue
        if "evidence" not in record and "nuggets" in record:
            nugget_lines = True
            continue
        qid = _id(record.get("qid", record.get("query_id")))
        if qid is None:
            problems.append(Problem(where, number, "missing or empty 'qid'"))
            continue
        if qid in first:
            problems.append(Problem(where, number, f"topic {qid!r} appears twice (first on line {first[qid]})"))
            continue
        first[qid] = number
        entries = record.get("evidence")
        if not isinstance(entries, list):
            problems.append(Problem(where, number, f"topic {qid!r}: 'evidence' must be a list"))
            continue
        seen: set[str] = set()
        for n, entry in enumerate(entries, start=1):
            what = f"topic {qid!r}, evidence {n}"
            if not isinstance(entry, dict):
                problems.append(Problem(where, number, f"{what}: expected an object"))
                continue
            eid = _id(entry.get("id", f"E{n}"))
            any_of = entry.get("any_of")
            if eid is None:
                problems.append(Problem(where, number, f"{what}: 'id' must be a non-empty string"))
            elif eid in seen:
                problems.append(Problem(where, number, f"{what}: id {eid!r} is used twice"))
            elif not isinstance(any_of, list) or not any_of or not all(
                    isinstance(g, list) and g and all(isinstance(d, str) and d for d in g) for g in any_of):
                problems.append(Problem(where, number, f"{what}: 'any_of' must be a non-empty list of non-empty "
                                                       "lists of docids, e.g. [[\"d1\"], [\"d2\", \"d3\"]]"))
            else:
                seen.add(eid)
                text = entry.get("text") if isinstance(entry.get("text"), str) else None
                importance = entry.get("importance") if isinstance(entry.get("importance"), str) else None
                items.append(EvidenceItem(qid, eid, normalise_support(any_of), text, importance))
    if nugget_lines and not items and not problems:
        from trecbench.nuggets.io import read_nuggets

        return evidence_from_nuggets(read_nuggets(path))
    if not items and not problems:
        problems.append(Problem(where, 0, "no evidence items found"))
    if problems:
        raise InputError.of(problems)
    return items


def evidence_from_nuggets(topics: Iterable[Any]) -> list[EvidenceItem]:
    """Nuggets that have supporting documents, as evidence items (nuggets without support are skipped)."""
    return [EvidenceItem(n.qid, n.id, n.support, n.text, n.importance)
            for t in topics for n in t.nuggets if n.support]


def read_contexts(path: PathLike, *, stages: Iterable[str] | None = None) -> StagedContexts:
    """Contexts from a TREC run (one stage, ranked as trec_eval ranks) or JSONL `{qid, stage, docids}`.

    JSONL stages are ordered as first seen in the file unless `stages` gives the order; a line
    without `stage` is the stage "final". The run is named by `run_id` on the lines, the run's tag,
    or else the file name.
    """
    from trecbench._lines import looks_like_jsonl

    p = Path(path)
    if not p.is_file():
        raise InputError(str(path), 0, "no such file")
    if looks_like_jsonl(p):
        return _staged_jsonl(p, stages)
    from trecbench.runs import read_run

    run = read_run(p)
    ranked = ranked_docids(run)
    name = run.attrs.get("runid") or p.name.split(".")[0]
    return StagedContexts(str(name), ("retrieved",), {q: {"retrieved": d} for q, d in ranked.items()})


def ranked_docids(run: pd.DataFrame) -> dict[str, tuple[str, ...]]:
    """Each topic's docids in trec_eval order (score descending, ties by docid descending)."""
    from trecbench.evaluation.rankings import form_rankings, qrels_table

    qids = pd.unique(run["query_id"].astype(str))
    if not len(qids):
        return {}
    # every topic of the run, judged nothing: only the ranking is wanted
    table = qrels_table(pd.DataFrame({"query_id": qids, "doc_id": [""] * len(qids), "relevance": [0] * len(qids)}))
    rankings = form_rankings(run, table, keep_docids=True)
    return {str(q): tuple(rankings.docids[i, : rankings.num_ret[i]]) for i, q in enumerate(rankings.qids)}


def _staged_jsonl(path: Path, order: Iterable[str] | None) -> StagedContexts:
    from trecbench._lines import iter_json_objects

    where = str(path)
    problems: list[Problem] = []
    docids: dict[str, dict[str, tuple[str, ...]]] = {}
    seen_stages: list[str] = []
    first: dict[tuple[str, str], int] = {}
    run_ids: list[str] = []
    for number, record, error in iter_json_objects(path):
        if record is None:
            problems.append(Problem(where, number, error))
            continue
        qid = _id(record.get("qid", record.get("query_id")))
        stage = _id(record.get("stage", "final"))
        docs = record.get("docids")
        if qid is None:
            problems.append(Problem(where, number, "missing or empty 'qid'"))
            continue
        if stage is None:
            problems.append(Problem(where, number, "'stage' must be a non-empty string"))
            continue
        if not isinstance(docs, list) or not all(isinstance(d, str) and d for d in docs):
            problems.append(Problem(where, number, "'docids' must be a list of docids (strings)"))
            continue
        if (qid, stage) in first:
            problems.append(Problem(where, number, f"stage {stage!r} of topic {qid!r} appears twice (first on line "
                                                   f"{first[(qid, stage)]})"))
            continue
        first[(qid, stage)] = number
        if stage not in seen_stages:
            seen_stages.append(stage)
        if _id(record.get("run_id")) and _id(record.get("run_id")) not in run_ids:
            run_ids.append(str(_id(record.get("run_id"))))
        docids.setdefault(qid, {})[stage] = tuple(dict.fromkeys(docs))
    stages = list(order) if order else seen_stages
    unknown = [s for s in seen_stages if s not in stages]
    if order and unknown:
        problems.append(Problem(where, 0, f"stages not in the given order: {', '.join(unknown)}"))
    if not docids and not problems:
        problems.append(Problem(where, 0, "no contexts found"))
    if problems:
        raise InputError.of(problems)
    name = run_ids[0] if len(run_ids) == 1 else path.name.split(".")[0]
    return StagedContexts(name, tuple(stages), docids)


def read_permissions(path: PathLike) -> Permissions:
    """Permissions from JSONL: `{qid, allow: [docid | "group:NAME", ...]}` and `{group: NAME, docids: [...]}`."""
    from trecbench._lines import iter_json_objects

    where = str(path)
    allowed: dict[str, frozenset[str]] = {}
    groups: dict[str, frozenset[str]] = {}
    problems: list[Problem] = []
    for number, record, error in iter_json_objects(path):
        if record is None:
            problems.append(Problem(where, number, error))
            continue
        if "group" in record:
            name, docs = _id(record.get("group")), record.get("docids")
            if name is None or not isinstance(docs, list) or not all(isinstance(d, str) for d in docs):
                problems.append(Problem(where, number, "a group line is {\"group\": NAME, \"docids\": [...]}"))
            else:
                groups[name] = groups.get(name, frozenset()) | frozenset(docs)
            continue
        qid, allow = _id(record.get("qid")), record.get("allow")
        if qid is None or not isinstance(allow, list) or not all(isinstance(d, str) for d in allow):
            problems.append(Problem(where, number, "a topic line is {\"qid\": QID, \"allow\": [docid or "
                                                   "\"group:NAME\", ...]}"))
            continue
        allowed[qid] = allowed.get(qid, frozenset()) | frozenset(allow)
    for qid, allow in allowed.items():
        for entry in sorted(allow):
            if entry.startswith("group:") and entry[6:] not in groups:
                problems.append(Problem(where, 0, f"topic {qid!r} allows unknown group {entry[6:]!r}"))
    if problems:
        raise InputError.of(problems)
    return Permissions(allowed, groups)


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
                             "share": present / total if total else math.nan, "lost_here": lost})
            never = sum(f.lost_at == NEVER for f in mine)
            rows.append({"run": run, "stage": NEVER, "present": 0, "required": total,
                         "share": math.nan, "lost_here": never})
        return pd.DataFrame(rows, columns=["run", "stage", "present", "required", "share", "lost_here"])

    def notes(self) -> dict[str, dict[str, Any]]:
        return {run: {"stages": list(stages), "topics_without_evidence": list(self.no_evidence),
                      "missing_topics": self.missing.get(run, []), "topics_not_in_evidence": self.unjudged.get(run, []),
                      "not_permitted_but_retrieved": [list(x) for x in self.leaks.get(run, [])],
                      "dropped_by_permissions": [{"qid": d.qid, "item": d.item, "sources": list(d.sources),
                                                  "item_dropped": d.item_dropped} for d in self.dropped],
                      "funnel": [{"qid": f.qid, "item": f.item, "last_stage": f.last_stage, "lost_at": f.lost_at}
                                 for f in self.funnel if f.run == run]}
                for run, stages in self.stages.items()}


def measures(k: int) -> list[str]:
    return [f"EvidenceRecall@{k}", f"CompleteEvidence@{k}", f"IDRecall@{k}"]


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
) -> EvidenceScores:
    """Score staged contexts against evidence: EvidenceRecall@k, CompleteEvidence@k, IDRecall@k, funnel.

    evidence: an evidence (or nuggets) file, or EvidenceItem records.
    contexts: one or more contexts files (TREC run or staged JSONL) or StagedContexts, one per system.
    permissions: a permissions file or Permissions; sources a topic may not see are not required.
    missing_topics: "zero" (an evidence topic without contexts scores 0) or "skip".

    Example:
        >>> scores = evaluate_evidence("evidence.jsonl", ["stages.jsonl"], k=10)
        >>> scores.frame.loc[("mysystem", "all"), "EvidenceRecall@10"]
    """
    if k <= 0:
        raise ValueError(f"k must be positive, not {k}")
    if missing_topics not in ("zero", "skip"):
        raise ValueError(f"missing_topics must be 'zero' or 'skip', not {missing_topics!r}")
    items = read_evidence(evidence) if isinstance(evidence, (str, Path)) else list(evidence)
    if isinstance(permissions, (str, Path)):
        permissions = read_permissions(permissions)
    if isinstance(contexts, (str, Path, StagedContexts)):
        contexts = [contexts]
    systems = [c if isinstance(c, StagedContexts) else read_contexts(c) for c in contexts]
    required, dropped = apply_permissions(items, permissions)
    topics = list(dict.fromkeys(i.qid for i in items))
    by_topic: dict[str, list[EvidenceItem]] = {q: [] for q in topics}
    for item in required:
        by_topic[item.qid].append(item)
    result = EvidenceScores(pd.DataFrame(), k, dropped=dropped)
    result.no_evidence = [q for q in topics if not by_topic[q]]
    names = [s.run for s in systems]
    rows = []
    for n, system in enumerate(systems):
        # systems sharing a name are told apart by their position
        run = system.run if names.count(system.run) == 1 else f"{system.run}#{names[:n].count(system.run) + 1}"
        stages = system.stages + (f"cut@{k}",)
        result.stages[run] = stages
        result.missing[run] = [q for q in topics if q not in system.docids]
        result.unjudged[run] = [q for q in system.docids if q not in by_topic]
        if permissions is not None:
            result.leaks[run] = [(q, d) for q in system.docids for d in system.final(q)[:k]
                                 if not permissions.visible(q, d)]
        for qid in topics:
            if qid not in system.docids and missing_topics == "skip":
                continue
            per_stage = [set(system.docids.get(qid, {}).get(s, ())) for s in system.stages]
            at_k = set(system.final(qid)[:k])
            need = by_topic[qid]
            for item in need:
                present = tuple(satisfied_group(item.any_of, docs) is not None for docs in per_stage + [at_k])
                result.funnel.append(_funnel_row(run, qid, item.id, present, stages))
            if not need:
                rows.append((run, qid, {m: math.nan for m in measures(k)}))
                continue
            covered = sum(satisfied_group(i.any_of, at_k) is not None for i in need)
            sources = {d for i in need for d in i.sources}
            rows.append((run, qid, {f"EvidenceRecall@{k}": covered / len(need),
                                    f"CompleteEvidence@{k}": float(covered == len(need)),
                                    f"IDRecall@{k}": len(sources & at_k) / len(sources)}))
    result.frame = scores_frame(rows, measures(k))
    return result


def _funnel_row(run: str, qid: str, item: str, present: tuple[bool, ...], stages: tuple[str, ...]) -> FunnelRow:
    named = stages[:-1]  # the pipeline's own stages; the last entry of `present` is the cut at k
    last = max((i for i, p in enumerate(present[:-1]) if p), default=-1)
    if last < 0:
        return FunnelRow(run, qid, item, present, "", NEVER)
    if present[-1]:
        return FunnelRow(run, qid, item, present, named[last], "")
    lost = stages[last + 1]  # the next stage, or the cut when the last stage had it
    return FunnelRow(run, qid, item, present, named[last], lost)

