"""Reference files for context recall: what each topic's contexts should contain.

JSONL `{qid, reference_ids?: [...], reference_contexts?: ["passage", ...], reference?: "answer",
question?}`, or reference ids taken from qrels (`references_from_qrels`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Union

import pandas as pd

from trecbench.errors import Problem, checked
from trecbench.evaluation.evidence.jsonl import record_id, topic_records

PathLike = Union[str, Path]


@dataclass(frozen=True)
class Reference:
    """What a topic's contexts should contain: ids, reference passages, and/or a reference answer."""

    qid: str
    ids: tuple[str, ...] = ()
    contexts: tuple[str, ...] = ()
    answer: str | None = None
    question: str | None = None  # the topic's question, shown to the model in llm mode


def read_references(path: PathLike) -> dict[str, Reference]:
    """References from JSONL `{qid, reference_ids?: [...], reference_contexts?: [...], reference?: "..."}`."""
    where = str(path)
    out: dict[str, Reference] = {}
    problems: list[Problem] = []
    for number, qid, record in topic_records(path, problems):
        ids, texts, answer = (record.get("reference_ids", []), record.get("reference_contexts", []),
                              record.get("reference"))
        question = record.get("question", record.get("query"))
        if not isinstance(ids, list) or not all(record_id(x) for x in ids):
            problems.append(Problem(where, number, "'reference_ids' must be a list of ids"))
            continue
        if not isinstance(texts, list) or not all(isinstance(t, str) and t.strip() for t in texts):
            # an empty reference context names nothing to recall (Ragas counts it found by an empty context)
            problems.append(Problem(where, number, "'reference_contexts' must be a list of non-empty strings"))
            continue
        if answer is not None and not isinstance(answer, str):
            problems.append(Problem(where, number, "'reference' must be a string (the reference answer)"))
            continue
        out[qid] = Reference(qid, tuple(dict.fromkeys(str(record_id(x)) for x in ids)),
                             tuple(t for t in texts if t.strip()), answer if answer and answer.strip() else None,
                             question if isinstance(question, str) and question.strip() else None)
    return checked(out, problems, where, "references")


def references_from_qrels(qrels: PathLike | pd.DataFrame, rel_level: int = 1) -> dict[str, Reference]:
    """Reference ids from qrels: the documents judged at `rel_level` or above."""
    from trecbench.qrels import read_qrels

    frame = qrels if isinstance(qrels, pd.DataFrame) else read_qrels(qrels)
    rel = frame[frame["relevance"] >= rel_level]
    out = {str(q): Reference(str(q), tuple(dict.fromkeys(g["doc_id"].astype(str))))
           for q, g in rel.groupby("query_id", sort=False)}
    for q in frame["query_id"].astype(str).unique():
        out.setdefault(q, Reference(q))
    return out
