"""Retrieved contexts, as `eval evidence` and `eval context-recall` read them, and the rule for the top k.

A contexts file is a TREC run (one stage, ranked as trec_eval ranks: score descending, ties by docid
descending) or JSONL, one line per (topic, stage):

    {"qid": "t1", "stage": "reranked", "docids": ["d3", "d1"]}
    {"qid": "t1", "contexts": ["text", {"id": "d3", "text": "..."}], "run_id": "mysystem"}

`stage` defaults to "final"; stages are ordered as first seen in the file unless an order is given.
The top k contexts of a topic are the first k positions of its last stage, as the system produced
them: a context repeated in the list takes a position each time (`top_k_contexts`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, NamedTuple, Sequence, Union

import pandas as pd

from trecbench.errors import InputError, Problem
from trecbench.evaluation.evidence.jsonl import record_id

PathLike = Union[str, Path]


class Context(NamedTuple):
    """One retrieved context: its id (docid) and text, either of which may be unknown."""

    id: str | None
    text: str | None


def top_k_contexts(ranked: Sequence[Any], k: int | None) -> tuple[Any, ...]:
    """The top k contexts: the first k positions of the ranked list, duplicates included (all when k is None)."""
    if k is not None and k <= 0:
        raise ValueError(f"k must be positive, not {k}")
    return tuple(ranked[:k] if k is not None else ranked)


@dataclass(frozen=True)
class StagedContexts:
    """One system's contexts: per topic, the ranked contexts of each stage, stages in pipeline order.

    `contexts` maps qid -> stage -> ranked Context records; a plain docid string given in their place
    stands for `Context(docid, None)`.
    """

    run: str
    stages: tuple[str, ...]
    contexts: Mapping[str, Mapping[str, tuple[Any, ...]]]

    def __post_init__(self) -> None:
        object.__setattr__(self, "contexts", {
            str(q): {s: tuple(c if isinstance(c, Context) else Context(str(c), None) for c in ranked)
                     for s, ranked in by_stage.items()} for q, by_stage in self.contexts.items()})

    @property
    def topics(self) -> list[str]:
        return list(self.contexts)

    def ranked(self, qid: str, stage: str | None = None) -> tuple[Context, ...]:
        """A topic's contexts at one stage (the last stage by default); () when it has none."""
        return tuple(self.contexts.get(qid, {}).get(stage or self.stages[-1], ()))

    def ids(self, qid: str, stage: str | None = None) -> tuple[str | None, ...]:
        """The ids of `ranked(qid, stage)`, in order."""
        return tuple(c.id for c in self.ranked(qid, stage))

    def top_k(self, qid: str, k: int | None) -> tuple[Context, ...]:
        """The top k contexts of the topic's last stage (see `top_k_contexts`)."""
        return top_k_contexts(self.ranked(qid), k)


def read_contexts(path: PathLike, *, stages: Iterable[str] | None = None) -> StagedContexts:
    """Contexts from a TREC run (one stage, "retrieved") or JSONL (see the module docstring).

    The run is named by `run_id` on the lines, the run's tag, or else the file name. Raises
    InputError listing every problem.
    """
    from trecbench.files.lines import looks_like_jsonl

    p = Path(path)
    if not p.is_file():
        raise InputError(str(path), 0, "no such file")
    if looks_like_jsonl(p):
        return _jsonl(p, stages)
    from trecbench.runs import read_run

    run = read_run(p)
    name = run.attrs.get("runid") or p.name.split(".")[0]
    return StagedContexts(str(name), ("retrieved",), {q: {"retrieved": d} for q, d in ranked_docids(run).items()})


def ranked_docids(run: pd.DataFrame) -> dict[str, tuple[str, ...]]:
    """Each topic's docids in trec_eval order (score descending, ties by docid descending)."""
    from trecbench.evaluation.retrieval.rankings import form_rankings, qrels_table

    qids = pd.unique(run["query_id"].astype(str))
    if not len(qids):
        return {}
    # every topic of the run, judged nothing: only the ranking is wanted
    table = qrels_table(pd.DataFrame({"query_id": qids, "doc_id": [""] * len(qids), "relevance": [0] * len(qids)}))
    rankings = form_rankings(run, table, keep_docids=True)
    return {str(q): tuple(rankings.docids[i, : rankings.num_ret[i]]) for i, q in enumerate(rankings.qids)}


def _line_contexts(record: dict) -> tuple[list[Context] | None, str]:
    """The contexts of one JSONL line, or (None, what is wrong)."""
    items = record.get("contexts", record.get("retrieved_contexts"))
    if items is None:
        docs = record.get("docids")
        if docs is None:
            return None, "expected 'docids' (a list of ids) or 'contexts' (texts or {id, text})"
        if not isinstance(docs, list) or not all(record_id(d) for d in docs):
            return None, "'docids' must be a list of docids (strings)"
        return [Context(str(record_id(d)), None) for d in docs], ""
    if not isinstance(items, list):
        return None, "'contexts' must be a list"
    out = []
    for n, item in enumerate(items):
        if isinstance(item, str):
            out.append(Context(None, item))
        elif isinstance(item, dict) and isinstance(item.get("text", ""), str):
            out.append(Context(record_id(item.get("id", item.get("docid"))), item.get("text")))
        else:
            return None, f"context {n}: expected a string or {{id, text}}"
    return out, ""


def _jsonl(path: Path, order: Iterable[str] | None) -> StagedContexts:
    from trecbench.files.lines import iter_json_objects

    where = str(path)
    problems: list[Problem] = []
    contexts: dict[str, dict[str, tuple[Context, ...]]] = {}
    seen_stages: list[str] = []
    first: dict[tuple[str, str], int] = {}
    run_ids: list[str] = []
    for number, record, error in iter_json_objects(path):
        if record is None:
            problems.append(Problem(where, number, error))
            continue
        qid = record_id(record.get("qid", record.get("query_id")))
        stage = record_id(record.get("stage", "final"))
        if qid is None:
            problems.append(Problem(where, number, "missing or empty 'qid'"))
            continue
        if stage is None:
            problems.append(Problem(where, number, "'stage' must be a non-empty string"))
            continue
        ranked, wrong = _line_contexts(record)
        if ranked is None:
            problems.append(Problem(where, number, wrong))
            continue
        if (qid, stage) in first:
            problems.append(Problem(where, number, f"stage {stage!r} of topic {qid!r} appears twice (first on line "
                                                   f"{first[(qid, stage)]})"))
            continue
        first[(qid, stage)] = number
        if stage not in seen_stages:
            seen_stages.append(stage)
        run_id = record_id(record.get("run_id"))
        if run_id and run_id not in run_ids:
            run_ids.append(run_id)
        contexts.setdefault(qid, {})[stage] = tuple(ranked)
    stages = list(order) if order else seen_stages
    unknown = [s for s in seen_stages if s not in stages]
    if order and unknown:
        problems.append(Problem(where, 0, f"stages not in the given order: {', '.join(unknown)}"))
    if not contexts and not problems:
        problems.append(Problem(where, 0, "no contexts found"))
    if problems:
        raise InputError.of(problems)
    name = run_ids[0] if len(run_ids) == 1 else path.name.split(".")[0]
    return StagedContexts(name, tuple(stages), contexts)
