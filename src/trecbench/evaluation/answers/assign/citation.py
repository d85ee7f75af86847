"""Citation assigner (offline): a nugget is supported when the answer cites what supports it and says it.

For each nugget and answer:

- the citation test passes when the answer's cited documents (all sentences together) contain one of
  the nugget's support alternatives in full (every document of a joint group);
- the text test passes when an answer sentence contains at least `threshold` of the nugget's content
  words (lower case, stopwords dropped).

`support` when a sentence passes the text test and itself cites a document of a satisfied
alternative; `partial_support` when only one test passes (or both, but in unrelated sentences);
`not_support` otherwise. A nugget without supporting documents can get at most `partial_support`
(by its text alone): the assigner has nothing to check its citations against. With duplicate groups
(`duplicates`), citing a member of a group cites them all, as the qrels give them one grade.
"""
from __future__ import annotations

from trecbench.evaluation.answers.assign import NOT, PARTIAL, SUPPORT, NuggetAssignment, TopicAssignment
from trecbench.evaluation.evidence.duplicates import NONE, DuplicateGroups
from trecbench.evaluation.textmatch import content_words


class CitationAssigner:
    """Citations against nugget support, plus lexical overlap of a citing sentence (offline, deterministic)."""

    name = "citation"

    def __init__(self, threshold: float = 0.6, duplicates: DuplicateGroups | None = None):
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], not {threshold}")
        self.threshold = threshold
        self.duplicates = duplicates or NONE

    def assign(self, pairs) -> list[TopicAssignment]:
        return [self.assign_one(answer, topic) for answer, topic in pairs]

    def assign_one(self, answer, topic) -> TopicAssignment:
        same = self.duplicates.all_same
        sentences = [(set(content_words(s.text)), set(same(topic.qid, s.citations))) for s in answer.sentences]
        cited = set(same(topic.qid, answer.cited))
        out = []
        for nugget in topic.nuggets:
            out.append(self._label(nugget, sentences, cited, tuple(same(topic.qid, g) for g in nugget.support)))
        return TopicAssignment(answer.run_id, topic.qid, tuple(out))

    def _label(self, nugget, sentences, cited, support) -> NuggetAssignment:
        want = set(content_words(nugget.text))
        groups = [g for g in support if all(d in cited for d in g)]
        group_docs = {d for g in groups for d in g}
        overlaps = [len(want & words) / len(want) if want else 0.0 for words, _ in sentences]
        citing_at = [i for i, (_, cites) in enumerate(sentences)
                     if overlaps[i] >= self.threshold and cites & group_docs]
        citing = bool(citing_at)
        best_at = citing_at[0] if citing else max(range(len(overlaps)), key=overlaps.__getitem__, default=-1)
        best = overlaps[best_at] if best_at >= 0 else 0.0
        text_ok = best >= self.threshold
        why = []
        if groups:
            why.append("cites " + " + ".join(groups[0]))
        elif support:
            why.append("no support alternative fully cited")
        else:
            why.append("has no supporting documents")
        if best_at >= 0:
            why.append(f"sentence {best_at} has {best:.2f} of its words" + (" and cites them" if citing else ""))
        if groups and text_ok and citing:
            label = SUPPORT
        elif groups or text_ok:
            label = PARTIAL
        else:
            label = NOT
        return NuggetAssignment(nugget.id, nugget.text, nugget.importance, label, "; ".join(why))
