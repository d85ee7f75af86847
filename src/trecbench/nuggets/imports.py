"""Importing a nuggets file into the store: file nuggets matched to stored ones, and the diff that is reported.

A file nugget matches a live nugget of its topic with the same id and text, else the same text (case and
spacing aside), else the same id; `NuggetStore.import_topics` is the entry point.
"""
from __future__ import annotations

import json
import re
import sqlite3
from typing import Any, Sequence

from trecbench.nuggets.changes import delete, insert, live_nugget, log, new_id, place, write
from trecbench.nuggets.links import DocumentLinks
from trecbench.nuggets.model import Nugget, TopicNuggets, link_key, normalise_support, support_label
from trecbench.nuggets.records import ImportReport, StoredNugget, check_author, same_text, stored_nugget, support_json
from trecbench.store import nuggets as queries
from trecbench.store.workspace import Workspace, now

_ID_OK = re.compile(r"[^\s]{1,200}")


class _Rollback(Exception):
    """Raised inside a transaction to undo it (a dry run)."""


def import_topics(ws: Workspace, links: DocumentLinks, topics: list[TopicNuggets], *, author: str,
                  dry_run: bool = False) -> ImportReport:
    """Make each topic in `topics` hold exactly the file's nuggets; other topics are not touched.

    A file nugget matches a live nugget of its topic with the same id and text, else the same text
    (ignoring case and spacing), else the same id; unmatched file nuggets are added (reviving a
    deleted nugget of that id, or under the file's id when no nugget ever had it, else a new id);
    live nuggets nothing matched are deleted. Changes of text, importance, status, origin, support,
    other fields and order are versioned with action "import". With `dry_run` nothing is written.
    Links keep the hash they had when their docid was already linked; new ones hash the current text.
    """
    check_author(author)
    report = ImportReport()
    known_topics = ws.topics()
    links.corpus()  # opened (and indexed) before the write lock is taken
    try:
        with ws.transaction() as c:
            for topic in topics:
                if known_topics and topic.qid not in known_topics:
                    report.warnings.append(f"topic {topic.qid} is not a topic of the workspace")
                import_topic(c, links, topic, author, report)
            if dry_run:
                raise _Rollback()
    except _Rollback:
        pass
    return report


def import_topic(c: sqlite3.Connection, links: DocumentLinks, topic: TopicNuggets, author: str,
                 report: ImportReport) -> None:
    """Make one topic hold exactly the file's nuggets, in the file's order, and report each change."""
    live = [live_nugget(c, i) for i in queries.live_ids(c, topic.qid)]
    matched = match(live, topic.nuggets)
    moved_ids = out_of_order(matched)
    if topic.query is not None:
        queries.save_topic_query(c, topic.qid, topic.query)
    # removals first, so positions of what stays are the file's
    used = {n.id for n in matched.values()}
    for n in live:
        if n.id not in used:
            delete(c, n.id, author, "import", {"removed_by": "import"})
            report.removed += 1
            report.lines.append(f"- {n.id} [{n.importance}] {_short(n.text)}")
    for index, f in enumerate(topic.nuggets):
        stored = matched.get(index)
        if stored is None:
            import_new(c, links, f, index, author, report)
        else:
            import_matched(c, links, stored, f, index, stored.id in moved_ids, author, report)


# ---- matching file nuggets to stored ones -------------------------------------------------------------------

def match(live: list[StoredNugget], wanted: Sequence[Nugget]) -> dict[int, StoredNugget]:
    """{index in the file: the live nugget it matches}: same id and text, else same text, else same id."""
    matched: dict[int, StoredNugget] = {}
    used: set[str] = set()
    by_id = {n.id: n for n in live}
    _match_same_id_and_text(by_id, wanted, matched, used)
    _match_same_text(live, wanted, matched, used)
    _match_same_id(by_id, wanted, matched, used)
    return matched


def _match_same_id_and_text(by_id: dict[str, StoredNugget], wanted: Sequence[Nugget],
                            matched: dict[int, StoredNugget], used: set[str]) -> None:
    for i, f in enumerate(wanted):
        n = by_id.get(f.id)
        if n is not None and same_text(n.text) == same_text(f.text):
            matched[i] = n
            used.add(n.id)


def _match_same_text(live: list[StoredNugget], wanted: Sequence[Nugget], matched: dict[int, StoredNugget],
                     used: set[str]) -> None:
    for i, f in enumerate(wanted):
        if i in matched:
            continue
        n = next((x for x in live if x.id not in used and same_text(x.text) == same_text(f.text)), None)
        if n is not None:
            matched[i] = n
            used.add(n.id)


def _match_same_id(by_id: dict[str, StoredNugget], wanted: Sequence[Nugget], matched: dict[int, StoredNugget],
                   used: set[str]) -> None:
    for i, f in enumerate(wanted):
        n = by_id.get(f.id)
        if i not in matched and n is not None and n.id not in used:
            matched[i] = n
            used.add(n.id)


def out_of_order(matched: dict[int, StoredNugget]) -> set[str]:
    """Ids of the matched nuggets the import moves: those outside a longest run the file keeps in the store's order."""
    in_file_order = [matched[i] for i in sorted(matched)]
    moved = _moved([n.position for n in in_file_order])
    return {n.id for k, n in enumerate(in_file_order) if k in moved}


def _moved(positions: list[int]) -> set[int]:
    """Indexes (in file order) of matched nuggets outside a longest run kept in the store's order."""
    n = len(positions)
    if n < 2:
        return set()
    best = [1] * n
    prev = [-1] * n
    for i in range(n):
        for j in range(i):
            if positions[j] < positions[i] and best[j] + 1 > best[i]:
                best[i], prev[i] = best[j] + 1, j
    end = max(range(n), key=lambda i: (best[i], -i))
    keep = set()
    while end >= 0:
        keep.add(end)
        end = prev[end]
    return set(range(n)) - keep


# ---- writing the file's nuggets -----------------------------------------------------------------------------

def import_matched(c: sqlite3.Connection, links: DocumentLinks, n: StoredNugget, f: Nugget, index: int,
                   moved: bool, author: str, report: ImportReport) -> None:
    """Give the stored nugget `n` the file nugget's content (and place `index`), versioned when anything changed."""
    changes, what = differences(links, n, f)
    if moved:
        changes["position"] = index
        what.append("moved")
    current = live_nugget(c, n.id)
    if changes:
        write(c, current, changes, author, "import", {"file_id": f.id} if f.id != n.id else {})
        report.changed += 1
        shown = n.id if f.id == n.id else f"{n.id} (file id {f.id})"
        report.lines.append(f"~ {shown}: " + "; ".join(what))
    else:
        report.unchanged += 1
        if current.position != index:
            place(c, n.qid, n.id, index)


def differences(links: DocumentLinks, n: StoredNugget, f: Nugget) -> tuple[dict[str, Any], list[str]]:
    """(the changes that give stored nugget `n` file nugget `f`'s content, a phrase for each)."""
    changes: dict[str, Any] = {}
    what: list[str] = []
    if n.text != f.text:
        changes["text"] = f.text
        what.append(f"text {_short(n.text)!r} -> {_short(f.text)!r}")
    for key in ("importance", "status", "origin"):
        if getattr(n, key) != getattr(f, key):
            changes[key] = getattr(f, key)
            what.append(f"{key} {getattr(n, key)} -> {getattr(f, key)}")
    support = normalise_support(f.support)
    had = tuple(tuple(x.as_support() for x in group) for group in n.support)
    if [[link_key(d) for d in g] for g in had] != [[link_key(d) for d in g] for g in support]:
        changes["support"] = links.links(support, keep=n.support)
        what.append(f"support {_support_text(had)} -> {_support_text(support)}")
    if n.extra != f.extra:
        changes["extra"] = dict(f.extra)
        what.append("other fields " + ", ".join(sorted(set(n.extra) ^ set(f.extra) | {
            k for k in set(n.extra) & set(f.extra) if n.extra[k] != f.extra[k]})))
    return changes, what


def import_new(c: sqlite3.Connection, links: DocumentLinks, f: Nugget, index: int, author: str,
               report: ImportReport) -> None:
    """Add a file nugget nothing matched: reviving a deleted nugget of its id and topic, else as a new nugget."""
    row = queries.nugget_row(c, f.id)
    state: dict[str, Any] = {"qid": f.qid, "text": f.text, "importance": f.importance, "status": f.status,
                             "origin": f.origin, "extra": dict(f.extra)}
    if row is not None and row[1] == f.qid and row[-1]:
        _revive(c, links, stored_nugget(row), f, state, index, author)
        report.added += 1
        report.lines.append(f"+ {f.id} [{f.importance}] {_short(f.text)} (restored)")
        return
    state["support"] = links.links(normalise_support(f.support))
    nid = f.id if row is None and _ID_OK.fullmatch(f.id) else new_id(c, f.qid)
    insert(c, nid, state, index, author, "import", {} if nid == f.id else {"file_id": f.id})
    report.added += 1
    note = "" if nid == f.id else f" (file id {f.id} is taken: stored as {nid})"
    report.lines.append(f"+ {nid} [{f.importance}] {_short(f.text)}{note}")


def _revive(c: sqlite3.Connection, links: DocumentLinks, old: StoredNugget, f: Nugget, state: dict, index: int,
            author: str) -> None:
    """Bring the deleted nugget `old` back with the file's content, at place `index`."""
    state["support"] = links.links(normalise_support(f.support), keep=old.support)
    when = now()
    version = old.version + 1
    queries.write_nugget(c, f.id, text=state["text"], importance=state["importance"], status=state["status"],
                         origin=state["origin"], support_json=support_json(state["support"]),
                         extra_json=json.dumps(state["extra"], ensure_ascii=False), deleted=False, version=version,
                         author=author, when=when)
    place(c, f.qid, f.id, index)
    log(c, f.id, version, "import", author, when, {"revived": True})


def _support_text(support: tuple[tuple[str, ...], ...]) -> str:
    return "[" + " | ".join("+".join(support_label(d) for d in g) for g in support) + "]"


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
