"""The nugget store's records (links, stored nuggets, versions, import reports) and the checks a value passes
before it is stored.

Editing (`nuggets.store`), undo (`nuggets.history`) and importing (`nuggets.imports`) all read and write
these, so they live here and not in any one of the three.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from trecbench.nuggets.model import IMPORTANCE, Nugget, SourceSpan, SpanLink

__all__ = ["Link", "Alternatives", "StoredNugget", "Version", "ImportReport", "LinkProblem", "stored_nugget",
           "snapshot", "support_json", "check_author", "clean_text", "check_importance", "check_choice",
           "same_text"]


@dataclass(frozen=True)
class Link:
    """One document of a support group, with the sha256 of its text when the link was made (None: unknown).

    A span link names characters `start`-`end` of the passage's text as the evidence (a sentence, a table
    row), with where they are in the passage's source document (`source`, when the passage has a source
    span) and the sha256 of the span's text (`span_hash`); a whole-passage link has none of these.
    """

    docid: str
    doc_hash: str | None
    start: int | None = None
    end: int | None = None
    source: SourceSpan | None = None
    span_hash: str | None = None

    @property
    def key(self) -> tuple[str, int | None, int | None]:
        """What tells two links of a nugget apart: the docid and, for a span link, its characters."""
        return (self.docid, self.start, self.end)

    @property
    def is_span(self) -> bool:
        return self.start is not None

    def as_support(self) -> str:
        """The link as the nugget model's supporting document: the docid, or a `SpanLink`."""
        if self.start is None or self.end is None:
            return self.docid
        return SpanLink(self.docid, self.start, self.end, self.source, self.span_hash)

    def as_json(self) -> dict[str, Any]:
        """The link as `support_json` stores it (the span's fields only for a span link)."""
        out: dict[str, Any] = {"docid": self.docid, "doc_hash": self.doc_hash}
        if self.start is not None:
            out.update(start=self.start, end=self.end, span_hash=self.span_hash)
            if self.source is not None:
                out.update(source_id=self.source.source_id, start_char=self.source.start, end_char=self.source.end)
        return out

    @classmethod
    def from_json(cls, x: dict[str, Any]) -> "Link":
        """The link `as_json` stored (a link stored before spans existed is a whole-passage link)."""
        source = SourceSpan(x["source_id"], x["start_char"], x["end_char"]) if x.get("source_id") is not None else None
        return cls(x["docid"], x.get("doc_hash"), x.get("start"), x.get("end"), source, x.get("span_hash"))


Alternatives = tuple[tuple[Link, ...], ...]


@dataclass(frozen=True)
class StoredNugget:
    """The current state of a nugget in the store."""

    id: str
    qid: str
    text: str
    importance: str
    status: str
    origin: str
    position: int
    version: int
    support: Alternatives  # alternatives, each a joint group
    updated_by: str
    updated_at: str
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)  # other fields of its file

    def as_nugget(self) -> Nugget:
        """The model's Nugget (support as docids)."""
        return Nugget(self.id, self.qid, self.text, self.importance,
                      tuple(tuple(link.as_support() for link in group) for group in self.support),
                      self.status, self.origin, dict(self.extra))


@dataclass(frozen=True)
class Version:
    """One action on a nugget: what, who, when, and the nugget's whole state after it (`snapshot`).

    `detail` says more where an action involves other nuggets or versions: `{"into": id}` on a nugget
    merged away, `{"from": [ids]}` on the merged one, `{"restores": n}` on an undo (the version whose
    state it restored; 0 = before the nugget existed), `{"removed_by": "import"}` and so on.
    """

    nugget_id: str
    version: int
    action: str
    author: str
    created_at: str
    snapshot: dict
    detail: dict = field(default_factory=dict, compare=False, hash=False)


@dataclass
class ImportReport:
    """What an import changed (or would change, with dry_run): counts and one line per change."""

    added: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def changes(self) -> int:
        return self.added + self.changed + self.removed


class LinkProblem(NamedTuple):
    """An evidence link whose document text changed since it was linked, or that the corpus no longer has."""

    qid: str
    nugget_id: str
    docid: str
    problem: str  # "changed" | "missing"


# ---- rows and JSON ------------------------------------------------------------------------------------------

def stored_nugget(row: tuple) -> StoredNugget:
    """The record of a row of `trecbench.store.nuggets` (its columns `NUGGET_COLUMNS`)."""
    (nid, qid, text, importance, status, origin, position, version, support_text, updated_by, updated_at,
     extra_json, _deleted) = row
    support = tuple(tuple(Link.from_json(x) for x in group) for group in json.loads(support_text))
    return StoredNugget(nid, qid, text, importance, status, origin, position, version, support, updated_by,
                        updated_at, json.loads(extra_json))


def snapshot(row: tuple) -> dict:
    """The whole state a version records of a nugget's row, deleted or not."""
    n = stored_nugget(row)
    return {"id": n.id, "qid": n.qid, "text": n.text, "importance": n.importance, "status": n.status,
            "origin": n.origin, "position": n.position, "support": json.loads(support_json(n.support)),
            "extra": n.extra, "deleted": bool(row[-1])}


def support_json(support: Alternatives) -> str:
    """Support as the store keeps it: a list of groups, each a list of {docid, doc_hash} (a span link adds
    start, end, span_hash and, when known, source_id, start_char, end_char)."""
    return json.dumps([[x.as_json() for x in group] for group in support], ensure_ascii=False)


# ---- checks of what is stored -------------------------------------------------------------------------------

def check_author(author: str) -> None:
    """Refuse a change without an author (ValueError)."""
    if not isinstance(author, str) or not author.strip():
        raise ValueError("every change needs an author")


def clean_text(text: str) -> str:
    """A nugget's text with its spacing made single; ValueError when nothing is left."""
    cleaned = " ".join(str(text or "").split())
    if not cleaned:
        raise ValueError("a nugget needs a non-empty text")
    return cleaned


def check_importance(value: str) -> str:
    """The importance, lower-cased; ValueError when it is not vital or okay."""
    return check_choice(value, IMPORTANCE, "importance")


def check_choice(value: str, allowed: tuple[str, ...], what: str) -> str:
    """`value` stripped and lower-cased; ValueError naming `what` when it is not one of `allowed`."""
    v = str(value).strip().lower()
    if v not in allowed:
        raise ValueError(f"{what} {value!r} is not one of {', '.join(allowed)}")
    return v


def same_text(text: str) -> str:
    """The text as two nuggets are compared: spacing and case aside."""
    return " ".join(text.split()).casefold()
