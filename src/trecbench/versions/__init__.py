"""Corpus versions: a workspace keeps every version of its corpus (each passage's docid, source span and text
hash) and moves its judgments and nugget links to a new one by source span, accounting for each.

`corpus_versions` lists them, `update_corpus` makes a new one (`trecbench corpus update`), `corpus_changes`
lists what an update did not carry, with word diffs (`trecbench corpus changes`). docs/corpus-versions.md
says what is carried, what needs people and what the qrels hold.
"""
from .changes import QUEUED, CorpusChange, corpus_changes
from .locate import find_edited, find_exact, word_diff
from .register import CorpusVersion, VersionPassage, corpus_versions, ensure_versions, version_passages
from .update import KINDS, MAY_BE_CUT, OUTCOMES, REVIEW, CorpusUpdate, Outcome, update_corpus

__all__ = ["CorpusChange", "CorpusUpdate", "CorpusVersion", "KINDS", "MAY_BE_CUT", "OUTCOMES", "Outcome", "QUEUED",
           "REVIEW", "corpus_changes", "corpus_versions", "ensure_versions", "find_edited", "find_exact",
           "update_corpus", "version_passages", "VersionPassage", "word_diff"]
