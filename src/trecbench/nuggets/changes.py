"""The steps every change of a nugget is made of: write its new state and log the version, inside the caller's
transaction, so editing, undo and importing change nuggets one way.

Each function takes the transaction's connection; the SQL is `trecbench.store.nuggets`'.
"""
from __future__ import annotations

import json
import re
import sqlite3
from typing import Iterable

from trecbench.nuggets.records import StoredNugget, snapshot, stored_nugget, support_json
from trecbench.store import nuggets as queries
from trecbench.store.workspace import now

__all__ = ["live_nugget", "nugget_state", "versions", "insert", "write", "update", "delete", "log", "place",
           "renumber", "new_id", "effective"]

_ID_COUNTER = re.compile(r"-n(\d+)$")


def live_nugget(c: sqlite3.Connection, nugget_id: str) -> StoredNugget:
    """The live nugget with this id; KeyError if there is none or it was deleted."""
    row = queries.nugget_row(c, nugget_id)
    if row is None or row[-1]:
        raise KeyError(nugget_id)
    return stored_nugget(row)


def nugget_state(c: sqlite3.Connection, nugget_id: str) -> StoredNugget:
    """The nugget's state, deleted or not; KeyError if it never existed."""
    row = queries.nugget_row(c, nugget_id)
    if row is None:
        raise KeyError(nugget_id)
    return stored_nugget(row)


def versions(c: sqlite3.Connection, nugget_id: str) -> list[tuple[int, str, dict, dict]]:
    """(version, action, snapshot, detail) oldest first."""
    return [(v, a, json.loads(s), json.loads(d)) for _, v, a, _, _, s, d in queries.version_rows(c, nugget_id)]


def effective(versions: list) -> int:
    """The version whose state the nugget is in now: an undo stands for the version it restored."""
    number, _, _, detail = versions[-1]
    return int(detail["restores"]) if "restores" in detail else number


def insert(c: sqlite3.Connection, nid: str, state: dict, index: int, author: str, action: str, detail: dict) -> None:
    """A new nugget `nid` of `state` (qid, text, importance, status, origin, support, extra) at place `index`."""
    when = now()
    queries.insert_nugget(c, nid, state["qid"], state["text"], state["importance"], state["status"], state["origin"],
                          support_json(state["support"]), json.dumps(state["extra"], ensure_ascii=False), author,
                          when)
    place(c, state["qid"], nid, index)
    log(c, nid, 1, action, author, when, detail)


def write(c: sqlite3.Connection, current: StoredNugget, changes: dict, author: str, action: str,
          detail: dict) -> StoredNugget:
    """Apply changes to a live nugget and log the version (no check that anything changed)."""
    when = now()
    version = current.version + 1
    values = {"text": current.text, "importance": current.importance, "status": current.status,
              "origin": current.origin, "support": current.support, "extra": current.extra, **changes}
    queries.write_nugget(c, current.id, text=values["text"], importance=values["importance"], status=values["status"],
                         origin=values["origin"], support_json=support_json(values["support"]),
                         extra_json=json.dumps(values["extra"], ensure_ascii=False), deleted=False, version=version,
                         author=author, when=when)
    if "position" in changes:
        place(c, current.qid, current.id, changes["position"])
        detail = {**detail, "from_position": current.position}
    log(c, current.id, version, action, author, when, detail)
    return live_nugget(c, current.id)


def update(c: sqlite3.Connection, nugget_id: str, changes: dict, author: str, action: str,
           detail: dict) -> StoredNugget:
    """`write` the changes unless the live nugget already has them (then no version is written)."""
    current = live_nugget(c, nugget_id)
    if all(getattr(current, k) == v for k, v in changes.items()):
        return current
    return write(c, current, changes, author, action, detail)


def delete(c: sqlite3.Connection, nugget_id: str, author: str, action: str, detail: dict) -> None:
    """Delete a live nugget (its neighbours close the gap) and log the version."""
    current = live_nugget(c, nugget_id)
    when = now()
    version = current.version + 1
    queries.mark_deleted(c, nugget_id, version, author, when)
    renumber(c, current.qid)
    log(c, nugget_id, version, action, author, when, detail)


def log(c: sqlite3.Connection, nid: str, version: int, action: str, author: str, when: str, detail: dict) -> None:
    """Record version `version` of the nugget with a snapshot of its state now."""
    row = queries.nugget_row(c, nid)
    assert row is not None  # logged right after the nugget's row was written
    queries.insert_version(c, nid, version, action, author, when, json.dumps(snapshot(row), ensure_ascii=False),
                           json.dumps(detail, ensure_ascii=False))


def place(c: sqlite3.Connection, qid: str, nid: str, index: int) -> None:
    """Move live nugget `nid` to `index` among its topic's live nuggets and renumber them 0..n-1."""
    others = [i for i in queries.live_ids(c, qid) if i != nid]
    index = max(0, min(int(index), len(others)))
    queries.set_positions(c, others[:index] + [nid] + others[index:])


def renumber(c: sqlite3.Connection, qid: str) -> None:
    """Number the topic's live nuggets 0..n-1 in their order (after one left)."""
    queries.set_positions(c, queries.live_ids(c, qid))


def new_id(c: sqlite3.Connection, qid: str, taken: Iterable[str] = ()) -> str:
    """`<qid>-n<k>` with k one more than any counter the topic used; unique in the workspace."""
    prefix = f"{qid}-n"
    taken = set(taken)
    top = 0
    for nid in [*queries.topic_nugget_ids(c, qid), *taken]:
        m = _ID_COUNTER.search(nid)
        if nid.startswith(prefix) and m:
            top = max(top, int(m.group(1)))
    k = top + 1
    while queries.nugget_exists(c, f"{prefix}{k}") or f"{prefix}{k}" in taken:
        k += 1
    return f"{prefix}{k}"
