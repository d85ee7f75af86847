"""Where an old span's text is in a new version of its source: exactly (the occurrence nearest the old
offset), else approximately (rapidfuzz's best partial alignment, near the old offset first), and a word
diff of the old text against the text found there."""
from __future__ import annotations

import difflib
from typing import NamedTuple

__all__ = ["Found", "find_exact", "find_edited", "word_diff", "MIN_SCORE"]

MIN_SCORE = 60.0  # rapidfuzz partial_ratio below which edited text is taken as not found
CONTEXT = 6  # unchanged words shown either side of a change in a word diff


class Found(NamedTuple):
    """Characters start-end of the new source text, and how alike they are to the old text (100: the same)."""

    start: int
    end: int
    score: float


def find_exact(source: str, text: str, near: int) -> int | None:
    """The start of the occurrence of `text` in `source` nearest to offset `near` (ties: the earlier one),
    None when it does not occur."""
    after = source.find(text, max(0, near))
    before = source.rfind(text, 0, max(0, near) + len(text) - 1) if near > 0 else -1
    found = [i for i in (before, after) if i >= 0]
    return min(found, key=lambda i: (abs(i - near), i)) if found else None


def find_edited(source: str, text: str, near: int) -> Found | None:
    """Where edited `text` most likely went in `source`: the best partial alignment within a window around
    offset `near` (three times the text's length each side), else in the whole source; None when even
    the best scores below MIN_SCORE."""
    from rapidfuzz.fuzz import partial_ratio_alignment

    if not text or not source:
        return None
    reach = 3 * len(text) + 200
    lo, hi = max(0, near - reach), min(len(source), near + len(text) + reach)
    windows = [(lo, hi)] + ([(0, len(source))] if (lo, hi) != (0, len(source)) else [])
    for a, b in windows:
        found = partial_ratio_alignment(text, source[a:b])
        if found is not None and found.score >= MIN_SCORE:
            start, end = _snapped(source, text, a + found.dest_start, a + found.dest_end)
            return Found(start, end, float(found.score))
    return None


def _snapped(source: str, text: str, start: int, end: int) -> tuple[int, int]:
    """The aligned region with its ends moved to where the old text's first and last characters are found
    unchanged near them (an alignment is as long as the old text, so an edit that changed the length
    leaves it a few characters off): the longest of 40, 16 and 8 characters found, else the end is moved
    to the edge of the word it cuts."""
    slack = abs(len(text) - (end - start)) + 48
    for k in dict.fromkeys(min(n, len(text)) for n in (40, 16, 8)):
        head = find_exact(source[:end], text[:k], start)
        if head is not None and abs(head - start) <= slack:
            start = head
            break
    else:
        while 0 < start < end and source[start - 1].isalnum() and source[start].isalnum():
            start -= 1
    for k in dict.fromkeys(min(n, len(text)) for n in (40, 16, 8)):
        tail = find_exact(source, text[-k:], end - k)
        if tail is not None and abs(tail + k - end) <= slack and tail + k > start:
            end = tail + k
            break
    else:
        while start < end < len(source) and source[end - 1].isalnum() and source[end].isalnum():
            end += 1
    return start, end


def word_diff(old: str, new: str) -> str:
    """The words of `old` against those of `new`, wdiff style: `[-removed-]` `{+added+}`, runs of unchanged
    words longer than 2 * CONTEXT shortened to `...`."""
    a, b = old.split(), new.split()
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            same = a[i1:i2]
            if len(same) > 2 * CONTEXT:
                same = (same[:CONTEXT] if out else []) + ["..."] + (same[-CONTEXT:] if i2 < len(a) or j2 < len(b)
                                                                    else [])
            out += same
            continue
        if i2 > i1:
            out.append("[-" + " ".join(a[i1:i2]) + "-]")
        if j2 > j1:
            out.append("{+" + " ".join(b[j1:j2]) + "+}")
    return " ".join(out)
