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
# The same words in ASCII text, where \w, letters and digits are ASCII and no ideograph occurs; it
# needs no lookahead per character, so most English text is split several times faster.
_ASCII_WORD = re.compile(r"\w+(?:(?:(?<=[A-Za-z])[.':](?=[A-Za-z])|(?<=[0-9])[.,;'](?=[0-9]))\w+)*", re.ASCII)
_POSSESSIVES = ("'s", "'S", "’s", "’S")


def _raw_words(text: str) -> list[str]:
    return _ASCII_WORD.findall(text) if text.isascii() else _WORD.findall(text)


def _word(raw: str) -> str:
    """One raw word, possessive removed and lowercased ("" if nothing is left)."""
    word = raw[:-2] if raw[-2:] in _POSSESSIVES else raw
    # Java lowercases İ (U+0130) to a plain i; Python adds a combining dot.
    return word.replace("İ", "i").lower() if word else ""


def words(text: str) -> list[str]:
    """The lowercased words of `text` with possessives removed, before stopwords and stemming."""
    return [w for w in map(_word, _raw_words(text)) if w]


def _term(raw: str) -> str:
    """The index term of one raw word: "" for a stopword (or nothing), else the word, stemmed if longer than two."""
    word = _word(raw)
    if not word or word in LUCENE_ENGLISH_STOPWORDS:
        return ""
    return word if len(word) <= 2 else _stemmer()(word)


# A raw word's term depends on nothing else, and most words repeat: each is analysed once.
_cached_term = lru_cache(maxsize=1 << 20)(_term)


def analyze(text: str) -> list[str]:
    """The index terms of `text`: words, stopwords dropped, longer words Porter-stemmed (see the module doc)."""
    return [t for t in map(_cached_term, _raw_words(text)) if t]


class TermIds(dict):
    """Raw word -> id of its term in `vocab` (ids in order of first appearance), -1 for a stopword.

    Indexing a corpus maps each distinct raw word once; `ids(text)` equals
    `[vocab.setdefault(t, len(vocab)) for t in analyze(text)]`.
    """

    def __init__(self) -> None:
        super().__init__()
        self.vocab: dict[str, int] = {}

    def __missing__(self, raw: str) -> int:
        term = _term(raw)
        found = self.vocab.setdefault(term, len(self.vocab)) if term else -1
        self[raw] = found
        return found

    def ids(self, text: str) -> list[int]:
        return [i for i in map(self.__getitem__, _raw_words(text)) if i >= 0]


@lru_cache(maxsize=None)
def _stemmer() -> Callable[[str], str]:
    import Stemmer  # PyStemmer

    return Stemmer.Stemmer("porter").stemWord
