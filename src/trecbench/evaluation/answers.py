"""Answer scores from nugget assignments: V_strict (primary), V, A_strict, A, W_strict, W.

Per (run, topic), with s = 1 for `support`, 0.5 for `partial_support` and 0 otherwise (strict scores
count `support` only), and weights w = 1 for vital nuggets and 0.5 for okay ones:

- V_strict, V: mean s over the topic's vital nuggets (TREC RAG's "Strict Vital Recall" and vital score)
- A_strict, A: mean s over all its nuggets
- W_strict, W: sum(w * s) / sum(w) over all its nuggets

(AutoNuggetizer's `strict_vital_score`, `vital_score`, `strict_all_score`, `all_score`, and the
weighted score of the TREC 2024 RAG nugget evaluation.) A run's score is the mean over topics. A topic
without vital nuggets has no V_strict or V (NaN): it is left out of those means and listed. A topic
whose assignment failed (an LLM batch that never parsed) is incomplete: it is not scored and is
listed, never counted as unsupported. A topic with nuggets that a run did not answer scores 0
(`missing_topics="zero"`, like trec_eval -c) or is left out (`"skip"`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import pandas as pd

from trecbench.evaluation.assign import NOT, PARTIAL, SUPPORT, NuggetAssignment, TopicAssignment
from trecbench.evaluation.topic_scores import scores_frame

MEASURES = ["V_strict", "V", "A_strict", "A", "W_strict", "W"]
_CREDIT = {SUPPORT: 1.0, PARTIAL: 0.5, NOT: 0.0}
_WEIGHT = {"vital": 1.0, "okay": 0.5}


def topic_scores(assignments: Iterable[NuggetAssignment]) -> dict[str, float]:
    """The six scores of one (run, topic) from its nugget labels (every label must be set)."""
    items = list(assignments)
    vital = [a for a in items if a.importance == "vital"]

    def share(group: list[NuggetAssignment], strict: bool) -> float:
        if not group:
            return math.nan
        return sum(_credit(a.label, strict) for a in group) / len(group)

    def weighted(strict: bool) -> float:
        total = sum(_WEIGHT[a.importance] for a in items)
        if not total:
            return math.nan
        return sum(_WEIGHT[a.importance] * _credit(a.label, strict) for a in items) / total

    return {"V_strict": share(vital, True), "V": share(vital, False), "A_strict": share(items, True),
            "A": share(items, False), "W_strict": weighted(True), "W": weighted(False)}


def _credit(label: str | None, strict: bool) -> float:
    if label is None:
        raise ValueError("cannot score a failed assignment")
    return float(label == SUPPORT) if strict else _CREDIT[label]


@dataclass
class AnswerScores:
    """Scores of answer runs: `frame` (per topic plus `all` rows) and what was left out, and why."""

    frame: pd.DataFrame
    incomplete: list[tuple[str, str, str]] = field(default_factory=list)  # (run, qid, error): not scored
    no_vital: list[str] = field(default_factory=list)  # topics without vital nuggets: no V_strict / V
    missing: dict[str, list[str]] = field(default_factory=dict)  # run -> nugget topics it did not answer
    unjudged: dict[str, list[str]] = field(default_factory=dict)  # run -> answered topics without nuggets

    def notes(self) -> dict[str, dict[str, Any]]:
        """Per run, what the JSON output lists beside the scores."""
        runs = dict.fromkeys(self.frame.index.get_level_values("run"))
        return {run: {"incomplete_topics": [q for r, q, _ in self.incomplete if r == run],
                      "topics_without_vital_nuggets": list(self.no_vital),
                      "missing_topics": self.missing.get(run, []),
                      "topics_without_nuggets": self.unjudged.get(run, [])} for run in runs}


def score_assignments(
    assignments: Iterable[TopicAssignment],
    *,
    nuggets: Mapping[str, Any] | None = None,
    missing_topics: str = "zero",
) -> AnswerScores:
    """Score (run, topic) assignments; see the module docstring for the rules.

    nuggets: {qid: TopicNuggets}; when given, its topics are the ones scored: a run's missing topic
        scores 0 (missing_topics="zero") or is skipped ("skip"), and assignments for other topics are
        listed as unjudged. Without it, the topics are those the assignments cover.
    """
    if missing_topics not in ("zero", "skip"):
        raise ValueError(f"missing_topics must be 'zero' or 'skip', not {missing_topics!r}")
    by_run: dict[str, dict[str, TopicAssignment]] = {}
    for t in assignments:
        by_run.setdefault(t.run_id, {}).setdefault(t.qid, t)
    result = AnswerScores(pd.DataFrame())
    rows = []
    if nuggets is not None:
        topics = list(nuggets)
        result.no_vital = [q for q in topics if not any(n.importance == "vital" for n in nuggets[q].nuggets)]
    else:
        topics = list(dict.fromkeys(q for run in by_run.values() for q in run))
        result.no_vital = [q for q in topics if not any(
            a.importance == "vital" for run in by_run.values() if q in run for a in run[q].assignments)]
    for run, given in by_run.items():
        result.unjudged[run] = [q for q in given if q not in topics]
        result.missing[run] = [q for q in topics if q not in given]
        for qid in topics:
            t = given.get(qid)
            if t is None:
                if missing_topics == "skip" or nuggets is None:
                    continue
                t = TopicAssignment(run, qid, tuple(NuggetAssignment(n.id, n.text, n.importance, NOT, "no answer")
                                                    for n in nuggets[qid].nuggets))
            if not t.complete:
                result.incomplete.append((run, qid, t.error or "assignment failed"))
                continue
            if not t.assignments:
                continue
            rows.append((run, qid, topic_scores(t.assignments)))
    result.frame = scores_frame(rows, MEASURES)
    return result


def evaluate_answers(
    nuggets: Any,
    answers: Any,
    *,
    assigner: Any = "citation",
    missing_topics: str = "zero",
    **options: Any,
) -> tuple[AnswerScores, list[TopicAssignment]]:
    """Assign nuggets to answers and score them.

    nuggets: a nuggets file path, or TopicNuggets records.
    answers: answer file path(s), or Answer records.
    assigner: a name (`citation`, `string`, `llm`) built with `options`, or an assigner object.

    Returns (scores, assignments); the assignments can be saved with `write_assignments`.

    Example:
        >>> scores, _ = evaluate_answers("nuggets.jsonl", ["run1.jsonl"], assigner="citation")
        >>> scores.frame.loc[("run1", "all"), "V_strict"]
    """
    from trecbench.answers import Answer, answers_by_run, read_answers
    from trecbench.evaluation.assign import get_assigner
    from trecbench.nuggets.io import read_nuggets

    topics = read_nuggets(nuggets) if isinstance(nuggets, (str, bytes)) or hasattr(nuggets, "__fspath__") \
        else list(nuggets)
    by_topic = {t.qid: t for t in topics}
    if isinstance(answers, (str, bytes)) or hasattr(answers, "__fspath__"):
        answers = [answers]
    records: list[Answer] = []
    for item in answers:
        records.extend([item] if isinstance(item, Answer) else read_answers(item))
    owned = isinstance(assigner, str)
    if owned:
        assigner = get_assigner(assigner, **options)
    pairs = [(a, by_topic[a.qid]) for run in answers_by_run(records).values() for a in run.values()
             if a.qid in by_topic]
    try:
        assignments = assigner.assign(pairs)
    finally:
        if owned and hasattr(assigner, "close"):
            assigner.close()  # the model client's cache database
    seen = {(t.run_id, t.qid) for t in assignments}
    # runs' answers to topics without nuggets are listed, not scored
    extra = [TopicAssignment(a.run_id, a.qid, ()) for a in records if a.qid not in by_topic
             and (a.run_id, a.qid) not in seen]
    return score_assignments(assignments + extra, nuggets=by_topic, missing_topics=missing_topics), assignments
