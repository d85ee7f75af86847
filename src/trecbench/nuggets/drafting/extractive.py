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
from typing import Iterable

from trecbench.evaluation.textmatch import STOPWORDS
from trecbench.nuggets.drafting.common import DraftReport, plan_drafting, read_documents
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
    from rapidfuzz import fuzz, process

    query = set(terms(question))
    sentences: list[Sentence] = []
    for d, (_, text) in enumerate(docs):
        for i, s in enumerate(split_sentences(text)):
            if MIN_WORDS <= len(_WORD.findall(s)) <= MAX_WORDS:
                sentences.append(Sentence(d, i, s))
    if not sentences or not query:
        return []
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
    keep = [k for k in range(n) if cov[k] > 0]
    if not keep:
        return []
    keep.sort(key=lambda k: (-cov[k], sentences[k].docid, sentences[k].index))
    keep = keep[:MAX_CANDIDATES]
    top = max(cov[k] for k in keep)
    normalised = [_normalise(sentences[k].text) for k in keep]
    similar = process.cdist(normalised, normalised, scorer=fuzz.ratio, score_cutoff=settings.threshold,
                            dtype="uint8", workers=1)
    n_docs = len(docs)
    support: list[list[int]] = []  # per candidate: the documents holding it or a near-duplicate, in doc order
    scores = []
    for a, k in enumerate(keep):
        holders = sorted({sentences[keep[b]].docid for b in similar[a].nonzero()[0]} | {sentences[k].docid})
        support.append(holders)
        repeat = (len(holders) - 1) / (n_docs - 1) if n_docs > 1 else 0.0
        scores.append(cov[k] / top + REPEAT_WEIGHT * repeat)
    ranked = sorted(range(len(keep)), key=lambda a: (-scores[a], sentences[keep[a]].docid, sentences[keep[a]].index))
    chosen: list[int] = []
    for a in ranked:
        if any(similar[a][c] for c in chosen):
            continue  # a near-duplicate of a nugget already taken: merged into it
        chosen.append(a)
        if len(chosen) == settings.keep:
            break
    vital = math.ceil(len(chosen) / 3)
    nuggets = []
    for rank, a in enumerate(chosen):
        text = sentences[keep[a]].text
        groups = tuple((docs[d][0],) for d in support[a])
        nuggets.append(Nugget("", "", text, "vital" if rank < vital else "okay", groups, "draft", "extractive",
                              {"extractive_score": round(scores[a], 4)}))
    return nuggets


def draft_extractive(ws: Workspace, settings: ExtractiveSettings = ExtractiveSettings(), *,
                     only: Iterable[str] = (), redraft: bool = False, corpus=None, on_progress=None) -> DraftReport:
    """Draft every topic still to draft and record the nuggets in the store; returns what happened."""
    relevant, todo, report, topics, corpus, store = plan_drafting(ws, DRAFTER, settings.min_grade, only, redraft,
                                                                  corpus)
    params = {"min_grade": settings.min_grade, "keep": settings.keep, "threshold": settings.threshold}
    for qid in todo:
        ws.start_draft(qid, DRAFTER, params)
        docs, missing = read_documents(corpus, [d for d, _ in relevant[qid]], titles=False)  # a title is no fact
        report.missing.extend((qid, d) for d in missing)
        topic = topics.get(qid)
        question = topic.text if topic is not None else ""
        if topic is not None and topic.narrative:
            question += "\n" + topic.narrative
        problems = []
        if topic is None:
            problems.append("not a topic of the workspace: no query text to rank sentences by")
        if not docs:
            problems.append("none of its relevant documents is in the corpus")
        nuggets = [Nugget(n.id, qid, n.text, n.importance, n.support, n.status, n.origin, n.extra)
                   for n in draft_topic(question, docs, settings)]
        report.finish(ws, store, qid, DRAFTER, nuggets, problems, author=AUTHOR, keep=settings.keep)
        if on_progress:
            on_progress(report, qid)
    return report


def _normalise(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))
