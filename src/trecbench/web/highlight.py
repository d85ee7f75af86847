"""Query terms marked in document text, safely: the text is escaped piece by piece, only our <mark> is markup."""
from __future__ import annotations

import functools
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
    escaped = str(escape(text))
    pattern = _pattern(tuple(sorted(set(terms), key=len, reverse=True)))  # longest first: "data" not in "database"
    return Markup(pattern.sub(_mark, escaped) if pattern else escaped)


def _mark(match: re.Match) -> str:
    return "<mark>" + match.group() + "</mark>"


@functools.lru_cache(maxsize=256)
def _pattern(terms: tuple[str, ...]) -> re.Pattern | None:
    """Matched in the escaped text (one C call escapes it all): a match never starts right after "&" or
    "&#", so the names and numbers of the entities escaping made (&amp; &lt; &#39; ...) are never marked,
    and what is marked is already escaped."""
    if not terms:
        return None
    words = "|".join(re.escape(str(escape(t))) for t in terms)
    return re.compile(r"(?<!&)(?<!&#)\b(?:" + words + r")(?:e?s)?\b", re.IGNORECASE)
