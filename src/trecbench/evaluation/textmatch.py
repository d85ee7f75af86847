"""Offline text matching shared by the string and citation assigners and string context recall.

Similarity is rapidfuzz's normalised Levenshtein similarity, `1 - distance / max(len(a), len(b))`,
the measure Ragas' NonLLMContextRecall uses. It compares whole strings, so a short text inside a
long one scores low (20 characters inside 200: 0.1); comparing against sentence windows fixes that.
It is blind to meaning: two sentences that differ by "not" score about 0.94.
"""
from __future__ import annotations

import re
from typing import Sequence

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n\s*\n|\n(?=\s*[-*•])")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
# The one stopword list: English function words and the phrasing of questions ("explain", "please"), too
# common to tell two facts apart (lexical overlap), to rank sentences by (extractive drafting) or to mark
# in a document (the web app's highlighting).
STOPWORDS = frozenset("""
a about above after again against all also am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
else ever few for from further get gets got had hadn't has hasn't have haven't having he her here hers herself
him himself his how however i if in into is isn't it it's its itself just let's like may me might more most
much must mustn't my myself need no nor not now of off on once only or other ought our ours ourselves out over
own same shall she should shouldn't so some such than that that's the their theirs them themselves then there
these they this those through to too under until up upon us very was wasn't we were weren't what when where
which while who whom whose why will with within without won't would wouldn't you your yours yourself
yourselves want wants know tell explain understand interested looking seeking information please could
particularly especially including regarding concerning
""".split())


def similarity(a: str, b: str) -> float:
    """Normalised Levenshtein similarity in [0, 1] (1: identical; two empty strings: 1)."""
    from rapidfuzz.distance import Levenshtein

    return float(Levenshtein.normalized_similarity(a, b))


def split_sentences(text: str) -> list[str]:
    """Sentences of a text: split after . ! ? followed by space, and at blank lines and list items."""
    parts = [p.strip() for p in _SENTENCE_END.split(text)]
    return [p for p in parts if p]


def sentence_windows(text: str, size: int = 2) -> list[str]:
    """Every run of 1 to `size` consecutive sentences of `text`, joined by a space."""
    sentences = split_sentences(text)
    windows = []
    for width in range(1, max(size, 1) + 1):
        for start in range(0, len(sentences) - width + 1):
            windows.append(" ".join(sentences[start:start + width]))
    return windows or ([text] if text.strip() else [])


def best_match(text: str, candidates: Sequence[str]) -> tuple[float, int]:
    """(highest similarity of `text` to any candidate, index of that candidate); (0.0, -1) if none."""
    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    if not candidates:
        return 0.0, -1
    found = process.extractOne(text, list(candidates), scorer=Levenshtein.normalized_similarity)
    return float(found[1]), int(found[2])


def normalise(text: str) -> str:
    """Lower case, words only, single spaces: what a lexical comparison should not care about."""
    return " ".join(_WORD.findall(text.lower()))


def content_words(text: str) -> list[str]:
    """The words of a text that carry content (lower case, stopwords dropped)."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]
