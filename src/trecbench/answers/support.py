"""Support grades and the sentence-citation pairs of an answer: what support assessment judges.

The grades follow the TREC 2024 RAG Track's support evaluation (Thakur et al., "Support Evaluation for the
TREC 2024 RAG Track: Comparing Human versus LLM Judges", SIGIR 2025): a cited passage fully supports a
sentence, partially supports it, or does not support it. `contradicts` is the extra grade BioGen 2025 asks
for (the passage says the opposite); a scale without it is the paper's three grades. Weights are the
paper's: full 1, partial 0.5, none 0 (contradicts, like none, backs nothing: 0).

A sentence of a TREC RAG answer is one item of its `answer` list, with the citations that item lists
(2024: indices into `references`; 2025: indices or docids), as `trecbench.answers.trec` reads them.
"""
from __future__ import annotations

import hashlib
from typing import Iterable

from trecbench.store.support import SupportSentence

from .trec import Answer

FULL, PARTIAL, NONE, CONTRADICTS = "full", "partial", "none", "contradicts"
GRADES = (FULL, PARTIAL, NONE)  # the paper's scale
GRADES_WITH_CONTRADICTS = (FULL, PARTIAL, NONE, CONTRADICTS)
WEIGHTS = {FULL: 1.0, PARTIAL: 0.5, NONE: 0.0, CONTRADICTS: 0.0}


def sentence_hash(text: str) -> str:
    """The first 16 hex digits of the sha256 of a sentence's text, whitespace squashed."""
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()[:16]


def answer_sentences(answers: Iterable[Answer]) -> list[SupportSentence]:
    """Every sentence of the answers, in file order, with its citations (sentences citing nothing included:
    they count as unsupported)."""
    return [SupportSentence(a.run_id, a.qid, n, s.text, sentence_hash(s.text), tuple(s.citations))
            for a in answers for n, s in enumerate(a.sentences)]
