"""Query terms marked in document text, safely: the text is escaped piece by piece, only our <mark> is markup."""
from __future__ import annotations

import re
from typing import Iterable

from markupsafe import Markup, escape

# Words too common to be worth marking.
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her
here hers him his how i if in into is it its itself just me more most my no nor not now of off on once only
or other our out over own same she should so some such than that the their them then there these they this
those through to too under until up very was we were what when where which while who whom why will with
would you your
""".split())


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
