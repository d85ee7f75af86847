"""Evidence files, nuggets as evidence, and permissions files: what `eval evidence` scores against.

Evidence is a list of items per topic, each needed by a good answer; an item is established by any one
of its alternatives, and an alternative is a joint group of documents all of which are needed
(`any_of: [["A"], ["B", "C"]]` reads "A, or B together with C").

Permissions map a topic to the documents (and named groups of documents) it may see; a topic without
an entry sees everything (default allow) or nothing (default deny).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Union

from trecbench.errors import InputError, Problem, checked
from trecbench.evaluation.evidence.jsonl import record_id, topic_records
from trecbench.nuggets.model import Support, link_key, normalise_support

PathLike = Union[str, Path]


@dataclass(frozen=True)
class EvidenceItem:
    """One piece of evidence a topic's answer needs, with the alternative document groups that give it."""

    qid: str
    id: str
    any_of: Support
    text: str | None = None
    importance: str | None = None

    @property
    def sources(self) -> tuple[str, ...]:
        """Every document of the alternatives once (a span link once per span: `nuggets.model.link_key`)."""
        return tuple({link_key(d): d for g in self.any_of for d in g}.values())


@dataclass(frozen=True)
class Permissions:
    """Which documents each topic may see: docids, and `group:NAME` entries expanded through `groups`."""

    allowed: dict[str, frozenset[str]]  # qid -> docids and group names ("group:NAME")
    groups: dict[str, frozenset[str]] = field(default_factory=dict)  # NAME -> docids
    default: str = "allow"  # a topic without an entry: "allow" (sees everything) or "deny" (sees nothing)

    def visible(self, qid: str, docid: str) -> bool:
        allowed = self.allowed.get(qid)
        if allowed is None:
            return self.default == "allow"
        if docid in allowed:
            return True
        return any(docid in self.groups.get(g[6:], ()) for g in allowed if g.startswith("group:"))


def read_evidence(path: PathLike) -> list[EvidenceItem]:
    """Evidence items from JSONL `{qid, evidence: [{id, text?, importance?, any_of: [[docid, ...], ...]}]}`.

    A nuggets file is read too (every nugget becomes an item; see `evidence_from_nuggets`).
    Raises InputError listing every problem.
    """
    where = str(path)
    items: list[EvidenceItem] = []
    problems: list[Problem] = []
    nugget_lines: list[dict] = []

    def nugget_line(record: dict) -> bool:
        if "evidence" not in record and "nuggets" in record:
            nugget_lines.append(record)
        return "evidence" not in record and "nuggets" in record

    for number, qid, record in topic_records(path, problems, skip=nugget_line):
        entries = record.get("evidence")
        if not isinstance(entries, list):
            problems.append(Problem(where, number, f"topic {qid!r}: 'evidence' must be a list"))
            continue
        seen: set[str] = set()
        for n, entry in enumerate(entries, start=1):
            what = f"topic {qid!r}, evidence {n}"
            if not isinstance(entry, dict):
                problems.append(Problem(where, number, f"{what}: expected an object"))
                continue
            eid = record_id(entry.get("id", f"E{n}"))
            any_of = entry.get("any_of")
            if eid is None:
                problems.append(Problem(where, number, f"{what}: 'id' must be a non-empty string"))
            elif eid in seen:
                problems.append(Problem(where, number, f"{what}: id {eid!r} is used twice"))
            elif not isinstance(any_of, list) or not any_of or not all(
                    isinstance(g, list) and g and all(isinstance(d, str) and d for d in g) for g in any_of):
                problems.append(Problem(where, number, f"{what}: 'any_of' must be a non-empty list of non-empty "
                                                       "lists of docids, e.g. [[\"d1\"], [\"d2\", \"d3\"]]"))
            else:
                seen.add(eid)
                text = entry.get("text") if isinstance(entry.get("text"), str) else None
                importance = entry.get("importance") if isinstance(entry.get("importance"), str) else None
                items.append(EvidenceItem(qid, eid, normalise_support(any_of), text, importance))
    if nugget_lines and not items and not problems:
        from trecbench.nuggets.io import read_nuggets

        return evidence_from_nuggets(read_nuggets(path))
    return checked(items, problems, where, "evidence items")


def evidence_from_nuggets(topics: Iterable[Any]) -> list[EvidenceItem]:
    """Every nugget as an evidence item; a nugget without supporting documents has `any_of` () and is
    not required (`evaluate_evidence` lists and counts it). A supporting document that is a span of its
    passage stays a `SpanLink`: on another chunking its own characters must be covered."""
    return [EvidenceItem(n.qid, n.id, n.support, n.text, n.importance) for t in topics for n in t.nuggets]


def read_permissions(path: PathLike, *, default: str = "allow") -> Permissions:
    """Permissions from JSONL: `{qid, allow: [docid | "group:NAME", ...]}` and `{group: NAME, docids: [...]}`.

    default: what a topic without an entry may see: "allow" (everything) or "deny" (nothing).
    """
    if default not in ("allow", "deny"):
        raise ValueError(f"default must be 'allow' or 'deny', not {default!r}")
    from trecbench.files.lines import iter_json_objects

    where = str(path)
    allowed: dict[str, frozenset[str]] = {}
    groups: dict[str, frozenset[str]] = {}
    problems: list[Problem] = []
    for number, record, error in iter_json_objects(path):
        if record is None:
            problems.append(Problem(where, number, error))
            continue
        if "group" in record:
            name, docs = record_id(record.get("group")), record.get("docids")
            if name is None or not isinstance(docs, list) or not all(isinstance(d, str) for d in docs):
                problems.append(Problem(where, number, "a group line is {\"group\": NAME, \"docids\": [...]}"))
            else:
                groups[name] = groups.get(name, frozenset()) | frozenset(docs)
            continue
        qid, allow = record_id(record.get("qid")), record.get("allow")
        if qid is None or not isinstance(allow, list) or not all(isinstance(d, str) for d in allow):
            problems.append(Problem(where, number, "a topic line is {\"qid\": QID, \"allow\": [docid or "
                                                   "\"group:NAME\", ...]}"))
            continue
        allowed[qid] = allowed.get(qid, frozenset()) | frozenset(allow)
    for qid, allow in allowed.items():
        for entry in sorted(allow):
            if entry.startswith("group:") and entry[6:] not in groups:
                problems.append(Problem(where, 0, f"topic {qid!r} allows unknown group {entry[6:]!r}"))
    if problems:
        raise InputError.of(problems)
    return Permissions(allowed, groups, default)


def fold(value: str) -> str:
    """An id with case and whitespace folded: what two ids that differ only in spelling share."""
    return " ".join(value.split()).casefold()


def permission_warnings(permissions: Permissions, topics: Iterable[str], docids: Iterable[str]) -> list[str]:
    """What a permissions map probably gets wrong for these topics and documents, one message each.

    Topics without an entry (unrestricted, or seeing nothing under default deny), and topic ids or
    docids of the map that match a known one only after case/whitespace folding (ids match exactly,
    so such an entry restricts nothing it was meant to).
    """
    topics = list(dict.fromkeys(topics))
    known_docs = set(docids)
    out = []
    folded_topics: dict[str, str] = {fold(q): q for q in topics}
    for qid in permissions.allowed:
        if qid not in topics and fold(qid) in folded_topics:
            out.append(f"permissions: entry {qid!r} matches topic {folded_topics[fold(qid)]!r} only after "
                       "case/whitespace folding; ids must match exactly")
    missing = [q for q in topics if q not in permissions.allowed]
    if missing:
        what = "they may see no document (default deny)" if permissions.default == "deny" else \
            "they are unrestricted (use default deny to refuse them)"
        out.append(f"permissions: {len(missing)} topic(s) have no entry, {what}: {' '.join(missing[:10])}"
                   + (" ..." if len(missing) > 10 else ""))
    folded_docs = {fold(d): d for d in known_docs}
    entries = set().union(*permissions.allowed.values(), *permissions.groups.values()) if permissions.allowed \
        or permissions.groups else set()
    for docid in sorted(entries):
        if docid.startswith("group:") or docid in known_docs:
            continue
        match = folded_docs.get(fold(docid))
        if match is not None:
            out.append(f"permissions: docid {docid!r} matches document {match!r} only after case/whitespace "
                       "folding; ids must match exactly")
    return out
