"""Answer scores from nugget assignments: V_strict (primary), V, A_strict, A, W_strict, W.

Per (run, topic), with s = 1 for `support`, 0.5 for `partial_support` and 0 otherwise (strict scores
count `support` only), and weights w = 1 for vital nuggets and 0.5 for okay ones:

- V_strict, V: mean s over the topic's vital nuggets (TREC RAG's "Strict Vital Recall" and vital score)
- A_strict, A: mean s over all its nuggets
- W_strict, W: sum(w * s) / sum(w) over all its nuggets

(AutoNuggetizer's `strict_vital_score`, `vital_score`, `strict_all_score`, `all_score`, and the
weighted score of the TREC 2024 RAG nugget evaluation.) A run's score is the mean over topics, and
every run is scored on the same topics: those of the nuggets when given, else every topic the
assignments cover. Two sets of rules decide the edge cases (`rules=`):

- `trecbench` (default): a topic without vital nuggets has no V_strict or V (NaN), a topic without
  nuggets no score at all: left out of the means and listed. A topic whose assignment failed (an LLM
  batch that never parsed) is incomplete: it is not scored and is listed, never counted as unsupported.
  Labels are read in any common spelling (`Supported`, `partial`).
- `nuggetizer`: castorini/nuggetizer's `calculate_nugget_scores`, cell for cell: a topic without vital
  nuggets scores 0 on V_strict and V and counts, a topic without nuggets scores 0, and only the exact
  labels `support` and `partial_support` earn credit (a `failed` label, or `Supported`, scores 0);
  only the exact importance `vital` is vital. W_strict and W (not in nuggetizer) follow the same rules.

Under both, a topic with nuggets that a run did not answer scores 0 (`missing_topics="zero"`, like
trec_eval -c) or is left out (`"skip"`); the zero-filled topics are listed and kept among the
assignments (`AnswerScores.assignments`), so a saved file scores the same again.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, NamedTuple, TYPE_CHECKING

import pandas as pd

from trecbench.helpers.messages import some
from trecbench.errors import InputError, Problem
from trecbench.evaluation.answers.assign import NOT, PARTIAL, SUPPORT, NuggetAssignment, TopicAssignment
from trecbench.evaluation.topic_scores import scores_frame

if TYPE_CHECKING:
    from trecbench.store.workspace import WorkspaceLike

MEASURES = ["V_strict", "V", "A_strict", "A", "W_strict", "W"]
RULES = ("trecbench", "nuggetizer")
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


def nuggetizer_topic_scores(assignments: Iterable[NuggetAssignment]) -> dict[str, float]:
    """The six scores of one (run, topic) by nuggetizer's rules: exact labels, 0 where a group is empty."""
    items = list(assignments)
    vital = [a for a in items if a.written_importance == "vital"]

    def credit(a: NuggetAssignment, strict: bool) -> float:
        label = a.written_label
        return 1.0 if label == SUPPORT else 0.5 if label == PARTIAL and not strict else 0.0

    def share(group: list[NuggetAssignment], strict: bool) -> float:
        return sum(credit(a, strict) for a in group) / len(group) if group else 0.0

    def weighted(strict: bool) -> float:
        weights = [1.0 if a.written_importance == "vital" else 0.5 for a in items]
        total = sum(weights)
        return sum(w * credit(a, strict) for w, a in zip(weights, items)) / total if total else 0.0

    return {"V_strict": share(vital, True), "V": share(vital, False), "A_strict": share(items, True),
            "A": share(items, False), "W_strict": weighted(True), "W": weighted(False)}


@dataclass
class AnswerScores:
    """Scores of answer runs: `frame` (per topic plus `all` rows) and what was left out, and why."""

    frame: pd.DataFrame
    rules: str = "trecbench"
    # (run, qid, error): trecbench rules: not scored; nuggetizer rules: its failed labels scored 0
    incomplete: list[tuple[str, str, str]] = field(default_factory=list)
    no_vital: list[str] = field(default_factory=list)  # topics without vital nuggets: no V_strict / V (or 0)
    no_nuggets: list[str] = field(default_factory=list)  # scored topics without a nugget: no score (or 0)
    missing: dict[str, list[str]] = field(default_factory=dict)  # run -> scored topics it did not answer
    unjudged: dict[str, list[str]] = field(default_factory=dict)  # run -> answered topics without nuggets
    assignments: list[TopicAssignment] = field(default_factory=list)  # what was scored, zero-filled included
    missing_topics: str = "zero"
    unsupported: int = 0  # nuggets without supporting documents, when the citation assigner scored them
    nuggets_used: str = ""  # which nuggets were scored against (`nuggets_used`): the output's first line


    def notes(self) -> dict[str, dict[str, Any]]:
        """Per run, what the JSON output lists beside the scores."""
        runs = dict.fromkeys(self.frame.index.get_level_values("run"))
        return {run: {"rules": self.rules, "incomplete_topics": [q for r, q, _ in self.incomplete if r == run],
                      "topics_without_vital_nuggets": list(self.no_vital),
                      "topics_with_an_empty_nugget_list": list(self.no_nuggets),
                      "missing_topics": self.missing.get(run, []),
                      "topics_without_nuggets": self.unjudged.get(run, [])} for run in runs}

    @property
    def failed(self) -> bool:
        """Whether some (run, topic) could not be scored: an assignment failed under the default rules."""
        return bool(self.incomplete) and self.rules != "nuggetizer"

    def messages(self) -> list[str]:
        """A sentence for each thing left out of or added to the scores, and why (the command prints them)."""
        nuggetizer = self.rules == "nuggetizer"
        out = []
        if self.unsupported:
            out.append(f"{self.unsupported} nugget(s) have no supporting documents: the citation assigner can give "
                       "them at most partial_support (by their wording)")
        if self.no_vital:
            what = "scored 0 on V_strict and V" if nuggetizer else "left out of V_strict and V"
            out.append(f"{len(self.no_vital)} topic(s) have no vital nuggets, {what}: {some(self.no_vital)}")
        if self.no_nuggets:
            what = "scored 0" if nuggetizer else "no score"
            out.append(f"{len(self.no_nuggets)} topic(s) have no nuggets, {what}: {some(self.no_nuggets)}")
        for run, qids in self.missing.items():
            if qids:
                what = "scored 0" if self.missing_topics == "zero" else "left out"
                out.append(f"{run}: {len(qids)} topic(s) with nuggets not answered, {what}: {some(qids)}")
        for run, qids in self.unjudged.items():
            if qids:
                out.append(f"{run}: {len(qids)} answered topic(s) have no nuggets, not scored: {some(qids)}")
        for run, qid, error in self.incomplete:
            what = "its failed labels scored 0 (nuggetizer rules)" if nuggetizer else "not scored"
            out.append(f"{run}: topic {qid} is incomplete and {what}: {error}")
        if self.failed:
            out.append(f"{len(self.incomplete)} (run, topic) assignment(s) failed; run again to retry them")
        return out


def score_assignments(
    assignments: Iterable[TopicAssignment],
    *,
    nuggets: Mapping[str, Any] | None = None,
    missing_topics: str = "zero",
    rules: str = "trecbench",
) -> AnswerScores:
    """Score (run, topic) assignments; see the module docstring for the rules.

    nuggets: {qid: TopicNuggets}; when given, its topics are the ones scored, every assignment of one of
        them must list exactly its nuggets with their importance (else InputError, every mismatch
        listed), and assignments for other topics are listed as unjudged. Without it, the topics are
        those the assignments cover, and a topic a run did not answer takes its nuggets from another
        run's assignment.
    missing_topics: "zero" (a run's unanswered topic scores 0) or "skip" (left out).
    rules: "trecbench" or "nuggetizer".
    """
    if missing_topics not in ("zero", "skip"):
        raise ValueError(f"missing_topics must be 'zero' or 'skip', not {missing_topics!r}")
    if rules not in RULES:
        raise ValueError(f"rules must be one of {', '.join(RULES)}, not {rules!r}")
    by_run, known = _by_run(assignments)
    if nuggets is not None:
        check_assignments(by_run, nuggets)
        topics = list(nuggets)
        known = {q: tuple(NuggetAssignment(n.id, n.text, n.importance, NOT) for n in nuggets[q].nuggets)
                 for q in topics}
    else:
        topics = list(dict.fromkeys(q for run in by_run.values() for q in run))
    runs = [_score_run(run, given, topics, known, missing_topics, rules) for run, given in by_run.items()]
    return AnswerScores(
        scores_frame([row for r in runs for row in r.rows], MEASURES), rules,
        incomplete=[x for r in runs for x in r.incomplete], no_vital=_without_vital(topics, known, rules),
        no_nuggets=[q for q in topics if not known.get(q)], missing={r.run: r.missing for r in runs},
        unjudged={r.run: r.unjudged for r in runs}, assignments=[t for r in runs for t in r.assignments],
        missing_topics=missing_topics)


class _RunScores(NamedTuple):
    """One run's share of `AnswerScores`."""

    run: str
    unjudged: list[str]
    missing: list[str]
    assignments: list[TopicAssignment]  # what was scored, zero-filled included
    incomplete: list[tuple[str, str, str]]
    rows: list[tuple[str, str, Mapping[str, float]]]


def _by_run(assignments: Iterable[TopicAssignment]) -> tuple[dict[str, dict[str, TopicAssignment]],
                                                               dict[str, tuple[NuggetAssignment, ...]]]:
    """Each run's first assignment of each topic, and each topic's nuggets from its first assignment."""
    by_run: dict[str, dict[str, TopicAssignment]] = {}
    known: dict[str, tuple[NuggetAssignment, ...]] = {}
    for given_one in assignments:
        by_run.setdefault(given_one.run_id, {}).setdefault(given_one.qid, given_one)
        if given_one.assignments:
            known.setdefault(given_one.qid, given_one.assignments)
    return by_run, known


def _without_vital(topics: list[str], known: Mapping[str, tuple[NuggetAssignment, ...]], rules: str) -> list[str]:
    """The topics without a vital nugget (nuggetizer reads the importance as written)."""
    vital = "vital" if rules == "trecbench" else None
    return [q for q in topics if not any(
        (a.importance if vital else a.written_importance) == "vital" for a in known.get(q, ()))]


def _score_run(run: str, given: Mapping[str, TopicAssignment], topics: list[str],
               known: Mapping[str, tuple[NuggetAssignment, ...]], missing_topics: str, rules: str) -> _RunScores:
    """One run's rows on the scored topics: an unanswered topic zero-filled (or skipped), a failed one
    listed (and, by trecbench's rules, not scored)."""
    score = topic_scores if rules == "trecbench" else nuggetizer_topic_scores
    scored = _RunScores(run, [q for q in given if q not in topics],
                        [q for q in topics if q not in given or not given[q].answered], [], [], [])
    for qid in topics:
        t = given.get(qid)
        if t is None or not t.answered:
            if missing_topics == "skip":
                continue
            t = TopicAssignment(run, qid, tuple(a._replace(label=NOT, reason="no answer", given_label=None)
                                                for a in known.get(qid, ())), answered=False)
        scored.assignments.append(t)
        if not t.complete:
            scored.incomplete.append((run, qid, t.error or "assignment failed"))
        if rules == "trecbench" and not t.complete:
            continue
        scored.rows.append((run, qid, {} if not t.assignments and rules == "trecbench" else score(t.assignments)))
    return scored


def check_assignments(by_run: Mapping[str, Mapping[str, TopicAssignment]], nuggets: Mapping[str, Any]) -> None:
    """Every assignment of a topic in `nuggets` lists exactly its nuggets (by text) with their importance.

    Raises InputError naming each mismatch where the assignment was read.
    """
    from collections import Counter

    problems: list[Problem] = []
    for run, given in by_run.items():
        for qid, t in given.items():
            if qid not in nuggets or not t.answered:
                continue
            where, line = t.source or ("assignments", 0)
            what = f"run {run!r}, topic {qid!r}"
            expected = {_words(n.text): n.importance for n in nuggets[qid].nuggets}
            want = Counter(_words(n.text) for n in nuggets[qid].nuggets)
            have = Counter(_words(a.text) for a in t.assignments)
            for text in want - have:
                problems.append(Problem(where, line, f"{what}: nugget {text!r} of the nuggets file is not assigned"))
            for text in have - want:
                problems.append(Problem(where, line, f"{what}: nugget {text!r} is not in the nuggets file"))
            for a in t.assignments:
                importance = expected.get(_words(a.text))
                if importance is not None and importance != a.importance:
                    problems.append(Problem(where, line, f"{what}: nugget {_words(a.text)!r} is {a.importance} here "
                                                         f"but {importance} in the nuggets file"))
    if problems:
        raise InputError.of(problems)


def _words(text: str) -> str:
    return " ".join(text.split())


def evaluate_answers(
    nuggets: Any,
    answers: Any,
    *,
    assigner: Any = "citation",
    missing_topics: str = "zero",
    rules: str = "trecbench",
    **options: Any,
) -> tuple[AnswerScores, list[TopicAssignment]]:
    """Assign nuggets to answers and score them.

    nuggets: a nuggets file path, or TopicNuggets records.
    answers: answer file path(s), or Answer records.
    assigner: a name (`citation`, `string`, `llm`) built with `options`, or an assigner object.
    missing_topics, rules: as in `score_assignments`.

    Returns (scores, assignments): every assignment scored, unanswered topics' zero-filled ones
    included; saved with `write_assignments` and scored again, they give the same numbers.

    Example:
        >>> scores, _ = evaluate_answers("nuggets.jsonl", ["run1.jsonl"], assigner="citation")
        >>> scores.frame.loc[("run1", "all"), "V_strict"]
    """
    from trecbench.answers import Answer, answers_by_run, read_answers
    from trecbench.evaluation.answers.assign import get_assigner
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
    scores = score_assignments(assignments + extra, nuggets=by_topic, missing_topics=missing_topics, rules=rules)
    return scores, scores.assignments


def nuggets_used(topics: Iterable[Any], where: str) -> str:
    """Which nuggets answers are scored against, in words the CLI and the report both print: where they come
    from, how many over how many topics, and how many of them are approved and how many still drafts."""
    nuggets = [n for t in topics for n in t.nuggets]
    approved = sum(n.status == "approved" for n in nuggets)
    drafts = len(nuggets) - approved
    kinds = f"{approved} approved" + (f", {drafts} draft{'s' * (drafts != 1)} (not approved yet)" if drafts else "")
    return f"nuggets: {len(nuggets)} from {where} over {len({t.qid for t in topics if t.nuggets})} topics: {kinds}"


def score_answers(
    answer_files: Iterable[Any] = (),
    *,
    nuggets: Any = None,
    workspace: WorkspaceLike | None = None,
    assignments: Iterable[Any] = (),
    assigner: Any = "citation",
    duplicates: str = "same",
    missing_topics: str = "zero",
    rules: str = "trecbench",
    **options: Any,
) -> AnswerScores:
    """Score answers as `trecbench eval answers` does: assign nuggets to `answer_files`, or score
    `assignments` (files of assignments made elsewhere) as they are.

    nuggets: a nuggets file; without it, the nuggets of `workspace` (`workspace_nuggets`).
    workspace: with the citation assigner and duplicates="same", its pool's duplicate groups count as one
        document (`duplicate_groups`); "distinct" counts every docid on its own.
    assigner, options: as in `evaluate_answers`; missing_topics, rules: as in `score_assignments`.
    """
    from trecbench.evaluation.answers.assign import read_assignment_files

    topics = None
    used = ""
    if nuggets is not None:
        from trecbench.nuggets.io import read_nuggets

        topics = {t.qid: t for t in read_nuggets(nuggets)}
        used = nuggets_used(topics.values(), str(nuggets))
    elif workspace is not None:
        from trecbench.nuggets.store import workspace_nuggets

        topics = {t.qid: t for t in workspace_nuggets(workspace)}
        used = nuggets_used(topics.values(), "the workspace")
    assignments = list(assignments)
    if assignments:
        scored = score_assignments(read_assignment_files(assignments), nuggets=topics, missing_topics=missing_topics,
                                   rules=rules)
        scored.nuggets_used = used if topics is not None else "nuggets: those of the assignment files"
        return scored
    if topics is None:
        raise ValueError("answers are assigned against nuggets: give nuggets or a workspace")
    unsupported = 0
    if assigner == "citation":
        unsupported = sum(not n.support for t in topics.values() for n in t.nuggets)
        if workspace is not None and duplicates == "same":
            from trecbench.evaluation.evidence.duplicates import duplicate_groups

            options["duplicates"] = duplicate_groups(workspace)
    scores, _ = evaluate_answers(list(topics.values()), list(answer_files), assigner=assigner,
                                 missing_topics=missing_topics, rules=rules, **options)
    scores.unsupported = unsupported
    scores.nuggets_used = used
    return scores
