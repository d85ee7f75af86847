"""Drafting nuggets without a model: sentences of the relevant documents, ranked, near-duplicates merged.

Deterministic: the same judgments and corpus give the same nuggets. For each topic:

1. The judged-relevant documents' texts (grade >= `min_grade`; titles left out) are split into sentences;
   sentences of 4 to 60 words are candidates.
2. *Coverage* of the topic: BM25 of the sentence for the topic's terms (its text and narrative, lower-
   cased, stop words removed, a plural `s` dropped), with the topic's candidate sentences as the collection:
   `cov(s) = sum over topic terms t of idf(t) * f(t,s) * (k1 + 1) / (f(t,s) + k1 * (1 - b + b * |s| / avg|s|))`,
   `idf(t) = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5))`, k1 = 1.2, b = 0.75. Sentences with no topic term
   are dropped.
3. *Repetition*: `docs(s)`, the relevant documents holding s or a near-duplicate of it (rapidfuzz
   `fuzz.ratio` of the normalised sentences >= `threshold`, 85 by default).
4. `score(s) = cov(s) / max cov + (docs(s) - 1) / (D - 1)` with D the topic's relevant documents
   (the second term is 0 when D = 1). Ties go to the better-graded document, then docid, then the earlier
   sentence.
5. Down the ranking, a sentence that is a near-duplicate of one already taken is merged into it (its
   document joins the support); the first `keep` distinct sentences are the nuggets, each supported by
   every document in `docs(s)`, each document a single-document alternative.
6. Importance: the top third (rounded up) are vital, the rest okay.

The nuggets are drafts with origin "extractive", author "extractive".
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable

from trecbench.evaluation.textmatch import STOPWORDS
from trecbench.nuggets.drafting.common import NO_DOCUMENTS, DraftReport, plan_drafting
from trecbench.nuggets.model import Nugget
from trecbench.nuggets.relevant import DRAFT_MIN_GRADE
from trecbench.store.workspace import Workspace

DRAFTER = "extractive"
AUTHOR = "extractive"
K1, B = 1.2, 0.75
REPEAT_WEIGHT = 1.0
MIN_WORDS, MAX_WORDS = 4, 60
MAX_CANDIDATES = 3000  # the best-covering sentences compared pairwise per topic (bounds time and memory)

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|\n\s*\n|\n(?=\s*[-*\u2022])")
_WORD = re.compile(r"\w+(?:['\u2019]\w+)*")


@dataclass(frozen=True)
class ExtractiveSettings:
    min_grade: int = DRAFT_MIN_GRADE
    keep: int = 20
    threshold: float = 85.0  # rapidfuzz ratio (0-100) from which two sentences are near-duplicates

    def __post_init__(self) -> None:
        if self.keep < 1 or not 0 < self.threshold <= 100:
            raise ValueError("keep must be at least 1 and threshold in (0, 100]")


@dataclass(frozen=True)
class Sentence:
    docid: int  # index of the document in the topic's relevant list
    index: int  # position of the sentence in its document
    text: str


def split_sentences(text: str) -> list[str]:
    """Sentences of a text: split after . ! ? before a capital or digit, at blank lines and list bullets."""
    parts = _SENTENCE_END.split(text)
    return [" ".join(p.split()).lstrip("-*\u2022 ") for p in parts if p and p.strip()]


def terms(text: str) -> list[str]:
    """Lower-cased words without stop words, a plural `s` dropped (`rollbacks` -> `rollback`)."""
    out = []
    for w in _WORD.findall(text.lower()):
        w = w.replace("\u2019", "'")
        if w in STOPWORDS or len(w) < 2:
            continue
        if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
            w = w[:-1]
        out.append(w)
    return out


def draft_topic(question: str, docs: list[tuple[str, str]], settings: ExtractiveSettings = ExtractiveSettings()
                ) -> list[Nugget]:
    """The extractive nuggets of one topic from its relevant documents [(docid, text)], best first."""
    query = set(terms(question))
    sentences = candidate_sentences(docs)
    if not sentences or not query:
        return []
    cov = coverage(sentences, query)
    keep = best_covering(sentences, cov)
    if not keep:
        return []
    similar = near_duplicates([sentences[k].text for k in keep], settings.threshold)
    support, scores = repetition_scores(sentences, cov, keep, similar, len(docs))
    ranked = sorted(range(len(keep)), key=lambda a: (-scores[a], sentences[keep[a]].docid, sentences[keep[a]].index))
    chosen = distinct_best(ranked, similar, settings.keep)
    vital = math.ceil(len(chosen) / 3)
    return [Nugget("", "", sentences[keep[a]].text, "vital" if rank < vital else "okay",
                   tuple((docs[d][0],) for d in support[a]), "draft", "extractive",
                   {"extractive_score": round(scores[a], 4)})
            for rank, a in enumerate(chosen)]


def candidate_sentences(docs: list[tuple[str, str]]) -> list[Sentence]:
    """The documents' sentences of `MIN_WORDS` to `MAX_WORDS` words, document by document (step 1)."""
    sentences: list[Sentence] = []
    for d, (_, text) in enumerate(docs):
        for i, s in enumerate(split_sentences(text)):
            if MIN_WORDS <= len(_WORD.findall(s)) <= MAX_WORDS:
                sentences.append(Sentence(d, i, s))
    return sentences


def coverage(sentences: list[Sentence], query: set[str]) -> list[float]:
    """Each sentence's BM25 for the topic's terms, the sentences being the collection (step 2)."""
    bags = [Counter(terms(s.text)) for s in sentences]
    lengths = [sum(b.values()) for b in bags]
    avg = (sum(lengths) / len(lengths)) or 1.0
    n = len(sentences)
    df = Counter(t for b in bags for t in set(b) if t in query)
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in df}
    cov = []
    for bag, length in zip(bags, lengths):
        score = 0.0
        for t in query:
            f = bag.get(t, 0)
            if f:
                score += idf[t] * f * (K1 + 1) / (f + K1 * (1 - B + B * length / avg))
        cov.append(score)
    return cov


def best_covering(sentences: list[Sentence], cov: list[float]) -> list[int]:
    """Indexes of the sentences holding a topic term, best coverage first, at most `MAX_CANDIDATES`."""
    keep = [k for k in range(len(sentences)) if cov[k] > 0]
    keep.sort(key=lambda k: (-cov[k], sentences[k].docid, sentences[k].index))
    return keep[:MAX_CANDIDATES]


def near_duplicates(texts: list[str], threshold: float) -> Any:
    """The matrix of rapidfuzz ratios of the normalised texts, 0 below `threshold` (step 3)."""
    from rapidfuzz import fuzz, process

    normalised = [_normalise(t) for t in texts]
    return process.cdist(normalised, normalised, scorer=fuzz.ratio, score_cutoff=threshold, dtype="uint8", workers=1)


def repetition_scores(sentences: list[Sentence], cov: list[float], keep: list[int], similar: Any,
                      n_docs: int) -> tuple[list[list[int]], list[float]]:
    """Per candidate: the documents holding it or a near-duplicate (in document order), and its score (step 4)."""
    top = max(cov[k] for k in keep)
    support: list[list[int]] = []
    scores = []
    for a, k in enumerate(keep):
        holders = sorted({sentences[keep[b]].docid for b in similar[a].nonzero()[0]} | {sentences[k].docid})
        support.append(holders)
        repeat = (len(holders) - 1) / (n_docs - 1) if n_docs > 1 else 0.0
        scores.append(cov[k] / top + REPEAT_WEIGHT * repeat)
    return support, scores


def distinct_best(ranked: list[int], similar: Any, keep: int) -> list[int]:
    """The first `keep` candidates down the ranking that are no near-duplicate of one taken before (step 5)."""
    chosen: list[int] = []
    for a in ranked:
        if any(similar[a][c] for c in chosen):
            continue  # a near-duplicate of a nugget already taken: merged into it
        chosen.append(a)
        if len(chosen) == keep:
            break
    return chosen


def draft_extractive(ws: Workspace, settings: ExtractiveSettings = ExtractiveSettings(), *,
                     only: Iterable[str] = (), redraft: bool = False, corpus=None, on_progress=None) -> DraftReport:
    """Draft every topic still to draft and record the nuggets in the store; returns what happened."""
    plan = plan_drafting(ws, DRAFTER, settings.min_grade, only, redraft, corpus)
    params = {"min_grade": settings.min_grade, "keep": settings.keep, "threshold": settings.threshold}
    for qid in plan.todo:
        ws.start_draft(qid, DRAFTER, params)
        docs = plan.documents(qid, titles=False)  # a title is no fact
        topic = plan.topics.get(qid)
        question = topic.text if topic is not None else ""
        if topic is not None and topic.narrative:
            question += "\n" + topic.narrative
        problems = []
        if topic is None:
            problems.append("not a topic of the workspace: no query text to rank sentences by")
        if not docs:
            problems.append(NO_DOCUMENTS)
        nuggets = [Nugget(n.id, qid, n.text, n.importance, n.support, n.status, n.origin, n.extra)
                   for n in draft_topic(question, docs, settings)]
        plan.report.finish(ws, plan.store, qid, DRAFTER, nuggets, problems, author=AUTHOR, keep=settings.keep)
        if on_progress:
            on_progress(plan.report, qid)
    return plan.report


def _normalise(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))
