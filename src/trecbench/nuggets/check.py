"""Judgments made against a document text the corpus no longer has (what `trecbench check` adds to links).

Each judgment stores the sha256 of the text it judged (`doc_hash`). The model judge hashed the title and
text (`title\\ntext`), the web app the text alone: either form counts as unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, NamedTuple

from trecbench.store.workspace import Workspace, text_hash


class JudgmentProblem(NamedTuple):
    qid: str
    docid: str
    problem: str  # "changed" | "missing"
    judge: str


@dataclass
class JudgmentCheck:
    """The problems found and how many (pair, judge) latest judgments with a hash were checked."""

    problems: list[JudgmentProblem] = field(default_factory=list)
    checked: int = 0

    def __iter__(self) -> Iterator[JudgmentProblem]:
        return iter(self.problems)

    def __len__(self) -> int:
        return len(self.problems)


def check_judgments(ws: Workspace, corpus) -> JudgmentCheck:
    """Each judge's latest successful judgment of each pair that recorded a hash, checked against the corpus."""
    latest: dict[tuple[str, str, str], str] = {}
    for row in ws.judgment_rows(direct=True):
        if row.doc_hash is not None:
            latest[(row.qid, row.docid, row.judge)] = row.doc_hash
    out = JudgmentCheck(checked=len(latest))
    hashes: dict[str, set[str] | None] = {}
    for (qid, docid, judge), doc_hash in sorted(latest.items()):
        if docid not in hashes:
            doc = corpus.get(docid)
            hashes[docid] = None if doc is None else {text_hash(doc.text), text_hash(
                doc.text if not doc.title else f"{doc.title}\n{doc.text}")}
        now = hashes[docid]
        if now is None:
            out.problems.append(JudgmentProblem(qid, docid, "missing", judge))
        elif doc_hash not in now:
            out.problems.append(JudgmentProblem(qid, docid, "changed", judge))
    return out
