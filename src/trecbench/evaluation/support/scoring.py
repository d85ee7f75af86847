"""Support scores of RAG answers: one grade per sentence-citation pair, then weighted support precision and recall.

The measures follow Thakur et al., "Support Evaluation for the TREC 2024 RAG Track: Comparing Human versus
LLM Judges" (SIGIR 2025, arXiv 2504.15205): each (sentence, cited passage) pair is graded full (weight 1),
partial (0.5) or none (0); `contradicts` (BioGen 2025) weighs 0 too. For one run's answer to one topic:

- SupportP, weighted support precision: the mean weight of the judged pairs;
- SupportR, weighted support recall: the mean over sentences of each one's support, the weight of its
  best-supported citation (a sentence citing nothing: 0);
- Unsupported: the share of sentences of support 0; Contradicts: the share of judged pairs graded
  contradicts; Judged: the share of pairs judged.

A run's value is the mean over its topics (macro); the `_micro` columns pool its pairs or sentences. A pair
not judged is never scored 0: it is left out of SupportP, and a sentence with such a citation and no
citation judged full is left out of SupportR and Unsupported (`sentence_support`); both are counted.
docs/support.md states every choice the paper leaves open.

The grade scored for a pair, when several judges graded it (`chosen_grades`, the rule every part uses),
is as for relevance (`trecbench.qrels.select`): a person's most recent judgment, else an imported one,
else a model's (most recent = the newest row); or, when `judge` names one judge, that judge's most recent
judgment of each pair it graded. Failed judgments (no grade) never count. When the registered sentences
are given, a judgment made on another text of the sentence (its `text_hash` differs: the answer file
changed since) is left out, so a grade is never carried to a sentence it was not made on.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Mapping, NamedTuple, Sequence

from trecbench.answers.support import CONTRADICTS, FULL, WEIGHTS
from trecbench.qrels.select import KIND_ORDER, judge_reference
from trecbench.store.support import SupportKey, SupportRow, SupportSentence

if TYPE_CHECKING:
    import pandas as pd

    from trecbench.store.workspace import WorkspaceLike


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


# ---- the measures ----

SUPPORT_P, SUPPORT_R, UNSUPPORTED, CONTRADICTS_SHARE, JUDGED = "SupportP", "SupportR", "Unsupported", "Contradicts", \
    "Judged"
MICRO = "_micro"  # the suffix of a measure pooled over all of a run's pairs or sentences


@dataclass(frozen=True)
class AnswerSupport:
    """One run's answer to one topic, scored: the sums the measures are ratios of (so runs can be pooled)."""

    run_id: str
    qid: str
    sentences: int
    pairs: int  # sentence-citation pairs
    judged_pairs: int
    pair_weight: float  # the sum of the judged pairs' weights
    contradicting: int  # judged pairs graded `contradicts`
    scored_sentences: int  # sentences whose support is known (see `sentence_support`)
    sentence_weight: float  # the sum of the scored sentences' support
    unsupported: int  # scored sentences of support 0

    def values(self, contradicts: bool) -> dict[str, float]:
        """{measure: value} of this answer (NaN where a ratio has nothing to count)."""
        out = {SUPPORT_P: _ratio(self.pair_weight, self.judged_pairs),
               SUPPORT_R: _ratio(self.sentence_weight, self.scored_sentences),
               UNSUPPORTED: _ratio(self.unsupported, self.scored_sentences)}
        if contradicts:
            out[CONTRADICTS_SHARE] = _ratio(self.contradicting, self.judged_pairs)
        out[JUDGED] = _ratio(self.judged_pairs, self.pairs)
        return out


def _ratio(part: float, whole: int) -> float:
    return part / whole if whole else math.nan


def sentence_support(citations: Sequence[str], grades: Mapping[str, str]) -> float | None:
    """The support of a sentence: the weight of its best-supported citation; 0 when it cites nothing. None
    (not known) when a citation is not judged and no judged one is full support (the unjudged one could
    raise it)."""
    weights = [WEIGHTS[grades[d]] for d in citations if d in grades]
    best = max(weights, default=0.0)
    if len(weights) < len(citations) and best < WEIGHTS[FULL]:
        return None
    return best


def answer_support(sentences: Sequence[SupportSentence], grades: Mapping[SupportKey, str]) -> AnswerSupport:
    """Score one answer's sentences (all of one run and topic) with the pairs' chosen grades."""
    first = sentences[0]
    pairs = judged = contradicting = scored = unsupported = 0
    pair_weight = sentence_weight = 0.0
    for s in sentences:
        mine = {d: grades[(s.run_id, s.qid, s.sentence, d)] for d in s.citations
                if (s.run_id, s.qid, s.sentence, d) in grades}
        pairs += len(s.citations)
        judged += len(mine)
        pair_weight += sum(WEIGHTS[g] for g in mine.values())
        contradicting += sum(g == CONTRADICTS for g in mine.values())
        support = sentence_support(s.citations, mine)
        if support is not None:
            scored += 1
            sentence_weight += support
            unsupported += support == 0
    return AnswerSupport(first.run_id, first.qid, len(sentences), pairs, judged, pair_weight, contradicting, scored,
                         sentence_weight, unsupported)


@dataclass(frozen=True)
class SupportScores:
    """Support scores of every registered answer: the per-topic table (`frame`; each run's `all` row is the
    mean over its topics, macro; the `_micro` columns' `all` row pools the run's pairs or sentences), the
    answers' sums, and how the grades were chosen."""

    frame: pd.DataFrame
    answers: tuple[AnswerSupport, ...]
    policy: str  # "a person's grade first" or "judge NAME"
    contradicts: bool  # whether the scale in use has `contradicts` (its share is then a column)

    @property
    def measures(self) -> list[str]:
        """The macro measures of the answers' support, the ones compared between runs (not `Judged`, which
        says how much was judged)."""
        return [m for m in self.frame.columns if not m.endswith(MICRO) and m != JUDGED]

    def totals(self, run: str) -> AnswerSupport:
        """The run's sums over all its answers (qid `all`)."""
        return pooled(run, [a for a in self.answers if a.run_id == run])

    def notes(self) -> dict[str, dict[str, object]]:
        """{run: counts} for the JSON output: what was judged and what was left out."""
        out = {}
        for run in dict.fromkeys(a.run_id for a in self.answers):
            t = self.totals(run)
            out[run] = {"sentences": t.sentences, "pairs": t.pairs, "judged_pairs": t.judged_pairs,
                        "unjudged_pairs": t.pairs - t.judged_pairs, "scored_sentences": t.scored_sentences,
                        "unscored_sentences": t.sentences - t.scored_sentences, "grades": self.policy}
        return out

    def messages(self) -> list[str]:
        """One line per run with pairs not judged: how many, and what was done with them."""
        out = []
        for run, n in self.notes().items():
            unjudged, unscored = n["unjudged_pairs"], n["unscored_sentences"]
            if unjudged:
                out.append(f"{run}: {unjudged} of {n['pairs']} sentence-citation pairs not judged, left out of "
                           f"{SUPPORT_P}; {unscored} of {n['sentences']} sentences left out of {SUPPORT_R} and "
                           f"{UNSUPPORTED} (a citation not judged and none judged full)")
        return out


def pooled(run: str, answers: Sequence[AnswerSupport]) -> AnswerSupport:
    """The sums of a run's answers as one (qid `all`): what its micro measures are ratios of."""
    return AnswerSupport(run, "all", *(sum(getattr(a, f) for a in answers) for f in (
        "sentences", "pairs", "judged_pairs", "pair_weight", "contradicting", "scored_sentences", "sentence_weight",
        "unsupported")))


def score_support(sentences: Iterable[SupportSentence], grades: Mapping[SupportKey, str], *,
                  contradicts: bool | None = None, policy: str = "") -> SupportScores:
    """Weighted support precision and recall, the unsupported and contradicting shares and the judged share
    of every answer (a run and topic with registered sentences), runs and topics in sorted order.

    grades: {pair: grade} (`chosen_grades`); pairs a sentence does not cite are ignored. contradicts: show the
    share of `contradicts` citations (None: when any grade of the answers' pairs is `contradicts`).
    """
    by_answer: dict[tuple[str, str], list[SupportSentence]] = {}
    for s in sentences:
        by_answer.setdefault((s.run_id, s.qid), []).append(s)
    answers = tuple(answer_support(by_answer[k], grades) for k in sorted(by_answer))
    if contradicts is None:
        contradicts = any(a.contradicting for a in answers)
    frame = _frame(answers, contradicts)
    return SupportScores(frame, answers, policy, contradicts)


def _frame(answers: Sequence[AnswerSupport], contradicts: bool) -> pd.DataFrame:
    from trecbench.evaluation.topic_scores import ALL, scores_frame

    micro = [SUPPORT_P, SUPPORT_R, UNSUPPORTED] + ([CONTRADICTS_SHARE] if contradicts else [])
    names = list(answers[0].values(contradicts)) if answers else micro + [JUDGED]
    rows = []
    for a in answers:
        values = a.values(contradicts)
        rows.append((a.run_id, a.qid, {**values, **{m + MICRO: values[m] for m in micro}}))
    frame = scores_frame(rows, names + [m + MICRO for m in micro])
    totals: dict[str, list[AnswerSupport]] = {}
    for a in answers:
        totals.setdefault(a.run_id, []).append(a)
    for run, mine in totals.items():  # a micro measure pools the run's sums: not the mean of its topics
        whole = pooled(run, mine).values(contradicts)
        for m in micro:
            frame.loc[(run, ALL), m + MICRO] = whole[m]
    return frame


def evaluate_support(ws: WorkspaceLike, *, judge: str | None = None, runs: Sequence[str] | None = None,
                     contradicts: bool | None = None) -> SupportScores:
    """Score the support of the answers registered in a workspace (`trecbench support add`) with its support
    judgments, one grade per pair by `chosen_grades` (a person's first, or `judge`'s). runs: only these
    (default: every registered run). Raises ValueError when `judge` graded no pair, or a run has no
    registered sentences."""
    from trecbench.store import as_workspace

    ws = as_workspace(ws)
    sentences = ws.support_sentences()
    if runs:
        missing = [r for r in runs if not any(s.run_id == r for s in sentences)]
        if missing:
            raise ValueError(f"no registered sentences of run {', '.join(map(repr, missing))} "
                             "(register them with `trecbench support add`)")
        sentences = [s for s in sentences if s.run_id in set(runs)]
    grades = chosen_grades(ws.support_rows(), judge, sentences)
    policy = f"judge {judge}" if judge else "a person's grade first, then an import's, then a model's"
    return score_support(sentences, grades, contradicts=contradicts, policy=policy)
