"""Offline text matching shared by the string and citation assigners and string context recall.

Similarity is rapidfuzz's normalised Levenshtein similarity, `1 - distance / max(len(a), len(b))`,
the measure Ragas' NonLLMContextRecall uses. It compares whole strings, so a short text inside a
long one scores low (20 characters inside 200: 0.1); comparing against sentence windows fixes that.
It is blind to meaning: two sentences that differ by "not" score about 0.94.
"""
from __future__ import annotations

import re
from typing import Iterable, Sequence

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n\s*\n|\n(?=\s*[-*•])")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
# Words too common to tell two facts apart (lexical overlap ignores them).
STOPWORDS = frozenset("""
a an and are as at be been being but by can could did do does for from had has have how if in into is it
its itself may might more most of on or our so such than that the their them then there these they this
those to was were what when where which while who whom why will with would you your also not no
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


def word_recall(needle: str, haystack: str | Iterable[str]) -> float:
    """Share of the content words of `needle` that occur in `haystack` (1.0 when needle has none)."""
    want = set(content_words(needle))
    if not want:
        return 1.0
    have = set(content_words(haystack)) if isinstance(haystack, str) else set(haystack)
    return len(want & have) / len(want)
