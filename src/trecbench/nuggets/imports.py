"""Importing a nuggets file into the store: file nuggets matched to stored ones, and the diff that is reported.

A file nugget matches a live nugget of its topic with the same id and text, else the same text (case and
spacing aside), else the same id; `NuggetStore.import_topics` is the entry point.
"""
from __future__ import annotations

import json
import re
import sqlite3
from typing import TYPE_CHECKING, Any

from trecbench.nuggets.model import Nugget, TopicNuggets, normalise_support
from trecbench.nuggets.store import (_COLUMNS, ImportReport, _check_author, _docids, _live_ids, _moved, _new_id, _norm,
                                     _place, _short, _stored, _support_json, _support_text)
from trecbench.store.workspace import now

if TYPE_CHECKING:
    from trecbench.nuggets.store import NuggetStore, StoredNugget

_ID_OK = re.compile(r"[^\s]{1,200}")


class _Rollback(Exception):
    """Raised inside a transaction to undo it (a dry run)."""


def import_topics(store: NuggetStore, topics: list[TopicNuggets], *, author: str,
                  dry_run: bool = False) -> ImportReport:
    """Make each topic in `topics` hold exactly the file's nuggets; other topics are not touched.

    A file nugget matches a live nugget of its topic with the same id and text, else the same text
    (ignoring case and spacing), else the same id; unmatched file nuggets are added (reviving a
    deleted nugget of that id, or under the file's id when no nugget ever had it, else a new id);
    live nuggets nothing matched are deleted. Changes of text, importance, status, origin, support,
    other fields and order are versioned with action "import". With `dry_run` nothing is written.
    Links keep the hash they had when their docid was already linked; new ones hash the current text.
    """
    _check_author(author)
    report = ImportReport()
    known_topics = store.ws.topics()
    store._corpus_or_none()
    try:
        with store.ws.transaction() as c:
            for topic in topics:
                if known_topics and topic.qid not in known_topics:
                    report.warnings.append(f"topic {topic.qid} is not a topic of the workspace")
                import_topic(store, c, topic, author, report)
            if dry_run:
                raise _Rollback()
    except _Rollback:
        pass
    return report


def import_topic(store: NuggetStore, c: sqlite3.Connection, topic: TopicNuggets, author: str,
                 report: ImportReport) -> None:
    qid = topic.qid
    live = [store._get(c, i) for i in _live_ids(c, qid)]
    by_id = {n.id: n for n in live}
    matched: dict[int, StoredNugget] = {}
    used: set[str] = set()
    wanted = list(topic.nuggets)
    # 1: same id and same text; 2: same text; 3: same id
    for i, f in enumerate(wanted):
        n = by_id.get(f.id)
        if n is not None and _norm(n.text) == _norm(f.text):
            matched[i] = n
            used.add(n.id)
    for i, f in enumerate(wanted):
        if i in matched:
            continue
        n = next((x for x in live if x.id not in used and _norm(x.text) == _norm(f.text)), None)
        if n is not None:
            matched[i] = n
            used.add(n.id)
    for i, f in enumerate(wanted):
        n = by_id.get(f.id)
        if i not in matched and n is not None and n.id not in used:
            matched[i] = n
            used.add(n.id)
    moved = _moved([matched[i].position for i in sorted(matched)])
    moved_ids = {matched[i].id for k, i in enumerate(sorted(matched)) if k in moved}
    if topic.query is not None:
        c.execute("INSERT INTO nugget_topics (qid, query) VALUES (?, ?) ON CONFLICT (qid) DO UPDATE SET "
                  "query = excluded.query", (qid, topic.query))
    # removals first, so positions of what stays are the file's
    for n in live:
        if n.id not in used:
            store._delete(c, n.id, author, "import", {"removed_by": "import"})
            report.removed += 1
            report.lines.append(f"- {n.id} [{n.importance}] {_short(n.text)}")
    for index, f in enumerate(wanted):
        n = matched.get(index)
        support = normalise_support(f.support)
        if n is None:
            import_new(store, c, f, index, author, report)
            continue
        changes: dict[str, Any] = {}
        what: list[str] = []
        if n.text != f.text:
            changes["text"] = f.text
            what.append(f"text {_short(n.text)!r} -> {_short(f.text)!r}")
        for key in ("importance", "status", "origin"):
            if getattr(n, key) != getattr(f, key):
                changes[key] = getattr(f, key)
                what.append(f"{key} {getattr(n, key)} -> {getattr(f, key)}")
        if _docids(n.support) != support:
            changes["support"] = store._links(c, support, keep=n.support)
            what.append(f"support {_support_text(_docids(n.support))} -> {_support_text(support)}")
        if n.extra != f.extra:
            changes["extra"] = dict(f.extra)
            what.append("other fields " + ", ".join(sorted(set(n.extra) ^ set(f.extra) | {
                k for k in set(n.extra) & set(f.extra) if n.extra[k] != f.extra[k]})))
        if n.id in moved_ids:
            changes["position"] = index
            what.append("moved")
        current = store._get(c, n.id)
        if changes:
            store._write(c, current, changes, author, "import", {"file_id": f.id} if f.id != n.id else {})
            report.changed += 1
            shown = n.id if f.id == n.id else f"{n.id} (file id {f.id})"
            report.lines.append(f"~ {shown}: " + "; ".join(what))
        else:
            report.unchanged += 1
            if current.position != index:
                _place(c, qid, n.id, index)

def import_new(store: NuggetStore, c: sqlite3.Connection, f: Nugget, index: int, author: str,
               report: ImportReport) -> None:
    row = c.execute("SELECT qid, deleted FROM nuggets WHERE id = ?", (f.id,)).fetchone()
    state: dict[str, Any] = {"qid": f.qid, "text": f.text, "importance": f.importance, "status": f.status, "origin": f.origin,
             "extra": dict(f.extra)}
    if row is not None and row[0] == f.qid and row[1]:
        # a nugget of this id was deleted: bring it back with the file's content
        old = _stored(c.execute(f"SELECT {_COLUMNS} FROM nuggets WHERE id = ?", (f.id,)).fetchone())
        state["support"] = store._links(c, normalise_support(f.support), keep=old.support)
        when = now()
        version = old.version + 1
        c.execute("UPDATE nuggets SET text = ?, importance = ?, status = ?, origin = ?, support_json = ?, "
                  "extra_json = ?, deleted = 0, version = ?, updated_by = ?, updated_at = ? WHERE id = ?",
                  (state["text"], state["importance"], state["status"], state["origin"],
                   _support_json(state["support"]), json.dumps(state["extra"], ensure_ascii=False), version,
                   author, when, f.id))
        _place(c, f.qid, f.id, index)
        store._log(c, f.id, version, "import", author, when, {"revived": True})
        report.added += 1
        report.lines.append(f"+ {f.id} [{f.importance}] {_short(f.text)} (restored)")
        return
    state["support"] = store._links(c, normalise_support(f.support))
    nid = f.id if row is None and _ID_OK.fullmatch(f.id) else _new_id(c, f.qid)
    store._insert(c, nid, state, index, author, "import", {} if nid == f.id else {"file_id": f.id})
    report.added += 1
    note = "" if nid == f.id else f" (file id {f.id} is taken: stored as {nid})"
    report.lines.append(f"+ {nid} [{f.importance}] {_short(f.text)}{note}")
