"""Query terms marked in document text, safely: the text is escaped piece by piece, only our <mark> is markup."""
from __future__ import annotations

import re
from typing import Iterable

from markupsafe import Markup, escape

from trecbench.evaluation.textmatch import STOPWORDS


def query_terms(text: str) -> list[str]:
    """The words of a query worth marking: lower-cased, without stopwords and one-letter words, in order."""
    seen: dict[str, None] = {}
    for word in re.findall(r"\w+", text.lower()):
        if len(word) > 1 and word not in STOPWORDS:
            seen.setdefault(word, None)
    return list(seen)


def highlight(text: str, terms: Iterable[str]) -> Markup:
    """`text` escaped, with whole-word matches of `terms` (case-insensitive, plural -s/-es too) in <mark>."""
    terms = sorted(set(terms), key=len, reverse=True)  # longest first, so "data" does not cut "database"
    if not terms:
        return escape(text)
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, terms)) + r")(?:e?s)?\b", re.IGNORECASE)
    pieces: list[Markup] = []
    position = 0
    for match in pattern.finditer(text):
        pieces.append(escape(text[position:match.start()]))
        pieces.append(Markup("<mark>{}</mark>").format(match.group()))  # format() escapes its argument
        position = match.end()
    pieces.append(escape(text[position:]))
    return Markup("").join(pieces)
