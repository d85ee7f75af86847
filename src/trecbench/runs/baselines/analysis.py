"""English text analysis that reproduces Anserini's default analyzer (Lucene), so bm25s ranks as Lucene does.

Anserini indexes and searches with `DefaultEnglishAnalyzer`: Lucene's StandardTokenizer (Unicode word
boundaries), the possessive `'s` dropped, lowercasing, Lucene's 33 English stopwords, and the Porter
stemmer. `analyze` does the same in Python:

1. Words are runs of letters, digits and `_`. A `.`, `'` (or `’`) or `:` between two letters, and a
   `.`, `,`, `;` or `'` between two digits, stay inside the word, as UAX #29 word boundaries keep them:
   `U.S.` -> `u.s`, `v2.1`, `10,000`, `don't` and `snake_case` are one word each; `e-mail`, `09:00`
   and `#release-train` are two. Each Han ideograph and each Hiragana character is a word of its own.
2. A trailing `'s` is removed (`company's` -> `company`), then the word is lowercased.
3. Lucene's English stopwords (`bm25s.stopwords.STOPWORDS_EN` is the same list of 33) are dropped.
4. Words longer than two characters are stemmed with the original Porter algorithm (PyStemmer's
   `porter`, the algorithm of Lucene's PorterStemFilter); like Lucene's, words of one or two characters
   are left as they are (`us` stays `us`).

On the sample corpus and topics the terms are identical to Lucene's for every passage (a test checks it
against pyserini's own analyzer when pyserini is installed). Known differences: emoji, which Lucene
keeps as terms and this drops, and number-like symbols (`½`, `²`), which this keeps and Lucene drops.
The output depends only on the text and PyStemmer's Porter stemmer, so it is deterministic.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable

# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, which Anserini's default analyzer uses.
LUCENE_ENGLISH_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there "
    "these they this to was will with".split()
)
# Bumped whenever `analyze` changes, so saved bm25s indexes made with other terms are rebuilt.
ANALYZER = "lucene-english-porter/1"

_LETTER = r"[^\W\d_]"
_IDEOGRAPH = r"[\u3040-\u309f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"  # Hiragana, CJK ideographs
_WORD = re.compile(
    rf"{_IDEOGRAPH}"
    rf"|(?:(?!{_IDEOGRAPH})\w)+"
    rf"(?:(?:(?<={_LETTER})[.'’:](?={_LETTER})|(?<=\d)[.,;'’](?=\d))(?:(?!{_IDEOGRAPH})\w)+)*"
)
_POSSESSIVE = re.compile(r"['’][sS]$")


def words(text: str) -> list[str]:
    """The lowercased words of `text` with possessives removed, before stopwords and stemming."""
    out = []
    for word in _WORD.findall(text):
        word = _POSSESSIVE.sub("", word)
        if word:
            # Java lowercases İ (U+0130) to a plain i; Python adds a combining dot.
            out.append(word.replace("İ", "i").lower())
    return out


def analyze(text: str) -> list[str]:
    """The index terms of `text`: words, stopwords dropped, longer words Porter-stemmed (see the module doc)."""
    kept = [w for w in words(text) if w not in LUCENE_ENGLISH_STOPWORDS]
    return _stem_all(kept)


def _stem_all(kept: list[str]) -> list[str]:
    stem = _stemmer()
    return [w if len(w) <= 2 else stem(w) for w in kept]


@lru_cache(maxsize=None)
def _stemmer() -> Callable[[str], str]:
    import Stemmer  # PyStemmer

    # A per-word cache makes stemming a corpus cheap: most words repeat.
    return lru_cache(maxsize=200_000)(Stemmer.Stemmer("porter").stemWord)
