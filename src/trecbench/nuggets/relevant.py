"""The judged-relevant documents of each topic, from the workspace's qrels: what drafters read and what people
choose a nugget's support from."""
from __future__ import annotations

from trecbench.store.workspace import Workspace


# The grade a judged document needs to be drafted from (nuggetizer's --min-judgment default is 2 as well):
# on trecbench's 0-3 scale, 1 means "related, does not answer the question".
DRAFT_MIN_GRADE = 2


def relevant_by_topic(ws: Workspace, min_grade: int = 1, *, qid: str | None = None) -> dict[str, list[tuple[str, int]]]:
    """{qid: [(docid, grade), ...]} of the judged-relevant documents (grade >= min_grade), grade descending
    then docid, of the workspace's qrels (`trecbench.workspace_qrels`: its grade selection); with `qid`, of
    that topic only (reading only its judgments). A duplicate whose grade was propagated is left out (its
    text is its listed twin's), so the pool, which only propagates, is not read."""
    return relevant_in_rows(ws.grade_rows(qid=qid), min_grade)


def relevant_in_rows(rows, min_grade: int = 1) -> dict[str, list[tuple[str, int]]]:
    """`relevant_by_topic` of judgment rows as `Workspace.grade_rows` gives them (the web app keeps a topic's
    rows and reads only those added since)."""
    from trecbench.qrels.select import choose_grades

    out: dict[str, list[tuple[str, int]]] = {}
    for topic, docid, grade, _ in choose_grades(rows):
        if grade >= min_grade:
            out.setdefault(str(topic), []).append((str(docid), grade))
    for docs in out.values():
        docs.sort(key=lambda d: (-d[1], d[0]))
    return out


def relevant_documents(ws: Workspace, qid: str, min_grade: int = 1) -> list[str]:
    """The topic's judged-relevant docids (grade >= min_grade), grade descending then docid: the documents
    a person chooses support from."""
    return [d for d, _ in relevant_by_topic(ws, min_grade, qid=str(qid)).get(str(qid), [])]
