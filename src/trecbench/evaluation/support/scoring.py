"""One support grade per sentence-citation pair from the judgments stored for it: the rule every part uses.

Several judges may grade one pair (a person in the web app, a model, an imported file). The grade scored
is, as for relevance (`trecbench.qrels.select`): a person's most recent judgment, else an imported one,
else a model's (most recent = the newest row); or, when `judge` names one judge, that judge's most recent
judgment of each pair it graded. Failed judgments (no grade) never count. When the registered sentences
are given, a judgment made on another text of the sentence (its `text_hash` differs: the answer file
changed since) is left out, so a grade is never carried to a sentence it was not made on.
"""
from __future__ import annotations

from typing import Iterable, NamedTuple, Sequence

from trecbench.qrels.select import KIND_ORDER, judge_reference
from trecbench.store.support import SupportKey, SupportRow, SupportSentence


class ChosenGrade(NamedTuple):
    """The grade scored for one pair and the judgment it came from."""

    grade: str
    judge: str  # the judge's name
    judge_kind: str
    row_id: int


def chosen_judgments(rows: Iterable[SupportRow], judge: str | None = None,
                     sentences: Sequence[SupportSentence] | None = None) -> dict[SupportKey, ChosenGrade]:
    """{pair: the judgment scored} by the rule of the module doc, over `Workspace.support_rows()`' rows.

    judge: a judge's name (or `NAME (kind)`): only its judgments count; ValueError when it graded no pair.
    sentences: the registered sentences; a judgment on another text of its sentence (or of a sentence not
        registered) is left out. None: every row counts.
    """
    name, kind = judge_reference(judge) if judge is not None else (None, None)
    current = None if sentences is None else {(s.run_id, s.qid, s.sentence): s for s in sentences}
    best: dict[SupportKey, tuple[tuple[int, int], ChosenGrade]] = {}
    matched = False
    for r in rows:
        if r.status != "ok" or r.grade is None:
            continue
        if name is not None and (r.judge != name or (kind is not None and r.judge_kind != kind)):
            continue
        matched = True
        if current is not None:
            s = current.get((r.run_id, r.qid, r.sentence))
            if s is None or s.text_hash != r.text_hash:
                continue
        rank = (KIND_ORDER.get(r.judge_kind, len(KIND_ORDER)), -r.id)
        seen = best.get(r.key)
        if seen is None or rank < seen[0]:
            best[r.key] = (rank, ChosenGrade(r.grade, r.judge, r.judge_kind, r.id))
    if judge is not None and not matched:
        raise ValueError(f"no support judgments by {judge!r}")
    return {key: chosen for key, (_, chosen) in sorted(best.items())}


def chosen_grades(rows: Iterable[SupportRow], judge: str | None = None,
                  sentences: Sequence[SupportSentence] | None = None) -> dict[SupportKey, str]:
    """{(run_id, qid, sentence, docid): grade} scored for each judged pair (`chosen_judgments`' rule)."""
    return {key: c.grade for key, c in chosen_judgments(rows, judge, sentences).items()}
