"""Support grades and the sentence-citation pairs of an answer: what support assessment judges.

The grades follow the TREC 2024 RAG Track's support evaluation (Thakur et al., "Support Evaluation for the
TREC 2024 RAG Track: Comparing Human versus LLM Judges", SIGIR 2025): a cited passage fully supports a
sentence, partially supports it, or does not support it. `contradicts` is the extra grade BioGen 2025 asks
for (the passage says the opposite); a scale without it is the paper's three grades. Weights are the
paper's: full 1, partial 0.5, none 0 (contradicts, like none, backs nothing: 0). `DEFINITIONS` is what each
grade means, in our words: the one text people (the assessor page) and the model (its prompt) are given.

A sentence of a TREC RAG answer is one item of its `answer` list, with the citations that item lists
(2024: indices into `references`; 2025: indices or docids), as `trecbench.answers.trec` reads them.
`support_inventory` counts and lists what support assessment can and cannot judge in a set of answers
(answers without any citation, sentences citing nothing, citations to docids not in the corpus);
`register_answers` registers a set of answer files' sentences in a workspace and returns that inventory.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Container, Iterable, NamedTuple, Sequence

from trecbench.store.support import SupportSentence

from .trec import Answer, PathLike

if TYPE_CHECKING:
    from trecbench.store.workspace import WorkspaceLike

FULL, PARTIAL, NONE, CONTRADICTS = "full", "partial", "none", "contradicts"
GRADES = (FULL, PARTIAL, NONE)  # the paper's scale
GRADES_WITH_CONTRADICTS = (FULL, PARTIAL, NONE, CONTRADICTS)
WEIGHTS = {FULL: 1.0, PARTIAL: 0.5, NONE: 0.0, CONTRADICTS: 0.0}
# What each grade means: the one text of the scale, shown to people under the grade buttons of the assessor
# page (`web.support`) and given to the model in its prompt (`llm.support_prompt`), so both judge by the same
# words (the prompt's hash is in the model judge's name: a changed word here is a new judge).
DEFINITIONS = {
    FULL: "every claim the sentence makes is stated in the passage, or follows from it without outside knowledge.",
    PARTIAL: "the passage states some of what the sentence claims, or states it less precisely, but the sentence "
             "also claims something the passage does not give.",
    NONE: "the passage does not state what the sentence claims: it may be on the same subject, even use the same "
          "words, without backing the claim.",
    CONTRADICTS: "the passage states something that cannot be true together with what the sentence claims.",
}


def sentence_hash(text: str) -> str:
    """The first 16 hex digits of the sha256 of a sentence's text, whitespace squashed."""
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()[:16]


def answer_sentences(answers: Iterable[Answer]) -> list[SupportSentence]:
    """Every sentence of the answers, in file order, with its citations (sentences citing nothing included:
    they count as unsupported)."""
    return [SupportSentence(a.run_id, a.qid, n, s.text, sentence_hash(s.text), tuple(s.citations))
            for a in answers for n, s in enumerate(a.sentences)]


class CitedSentence(NamedTuple):
    """Where a sentence is: run, topic and its index in the answer."""

    run_id: str
    qid: str
    sentence: int


class UnknownCitation(NamedTuple):
    """A citation to a docid the workspace's corpus does not have."""

    run_id: str
    qid: str
    sentence: int
    docid: str


@dataclass(frozen=True)
class SupportInventory:
    """What a set of answers gives support assessment to judge, and what it cannot judge (listed, not dropped).

    `unknown_citations` is None when no corpus was there to look the docids up in.
    """

    answers: int
    sentences: int
    pairs: int  # sentence-citation pairs
    uncited_answers: tuple[tuple[str, str], ...]  # (run_id, qid) of answers without any citation
    uncited_sentences: tuple[CitedSentence, ...]  # sentences citing nothing (they count as unsupported)
    unknown_citations: tuple[UnknownCitation, ...] | None
    added: int = 0  # sentences newly registered in the workspace
    changed: int = 0  # registered sentences whose text or citations changed

    def lines(self) -> list[str]:
        """The inventory as `support add` prints it: the counts, then every listed item."""
        unknown = "not checked (no corpus)" if self.unknown_citations is None else str(len(self.unknown_citations))
        out = [f"{self.answers} answers, {self.sentences} sentences, {self.pairs} sentence-citation pairs",
               f"answers without any citation: {len(self.uncited_answers)}",
               f"sentences citing nothing: {len(self.uncited_sentences)}",
               f"citations to docids not in the corpus: {unknown}",
               f"registered: {self.added} new, {self.changed} changed"]
        out += [f"answer without any citation: run {r} topic {q}" for r, q in self.uncited_answers]
        out += [f"sentence citing nothing: run {s.run_id} topic {s.qid} sentence {s.sentence}"
                for s in self.uncited_sentences]
        out += [f"citation not in the corpus: run {u.run_id} topic {u.qid} sentence {u.sentence} docid {u.docid}"
                for u in self.unknown_citations or ()]
        return out


def support_inventory(answers: Sequence[Answer], corpus: Container[str] | None = None) -> SupportInventory:
    """Count and list the answers' sentences and sentence-citation pairs: answers without any citation,
    sentences citing nothing, and (when `corpus` is given: anything answering `docid in corpus`) citations
    to docids it does not have."""
    sentences = answer_sentences(answers)
    uncited = tuple((a.run_id, a.qid) for a in answers if not a.cited)
    unknown = None if corpus is None else tuple(
        UnknownCitation(s.run_id, s.qid, s.sentence, d) for s in sentences for d in s.citations if d not in corpus)
    return SupportInventory(len(answers), len(sentences), sum(len(s.citations) for s in sentences), uncited,
                            tuple(CitedSentence(s.run_id, s.qid, s.sentence) for s in sentences if not s.citations),
                            unknown)


def register_answers(ws: WorkspaceLike, paths: Iterable[PathLike]) -> SupportInventory:
    """Read TREC RAG answer files, register every sentence in the workspace for support judging, and return
    the inventory (docids looked up in the workspace's corpus when it has one). Raises InputError for a file
    that cannot be read (nothing is registered then)."""
    from trecbench.errors import InputError
    from trecbench.store import as_workspace

    from .trec import read_answers

    ws = as_workspace(ws)
    answers = [a for path in paths for a in read_answers(path)]
    try:
        corpus = ws.corpus() if ws.corpus_source else None
    except (InputError, OSError):
        corpus = None
    inventory = support_inventory(answers, corpus)
    added, changed = ws.register_sentences(answer_sentences(answers))
    return replace(inventory, added=added, changed=changed)
