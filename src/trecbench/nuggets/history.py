"""Undo in the nugget store: one version back at a time, a merge or a split taken back as one gesture.

Every undo writes a new version whose state is a snapshot of an earlier one (nothing is overwritten);
undoing an undo goes further back. `NuggetStore.undo` is the entry point.
"""
from __future__ import annotations

import json
import sqlite3

from trecbench.nuggets.changes import effective, log, nugget_state, place, renumber, versions
from trecbench.nuggets.records import StoredNugget, check_author
from trecbench.store import nuggets as queries
from trecbench.store.workspace import Workspace, now


def undo(ws: Workspace, nugget_id: str, *, author: str) -> StoredNugget:
    """Restore the state before the nugget's last (not yet undone) action, as a new version.

    Returns the nugget's new state; undoing its creation deletes it (then the deleted state is
    returned). Undoing a merge or split undoes it for every nugget it made or removed. ValueError when
    there is nothing left to undo or a merge/split cannot be undone because a nugget changed since.
    """
    check_author(author)
    with ws.transaction() as c:
        own = versions(c, nugget_id)
        if not own:
            raise KeyError(nugget_id)
        number = effective(own)
        if number == 0:
            raise ValueError(f"nothing to undo for nugget {nugget_id}")
        undone = own[number - 1]
        # made nuggets go first, then removed ones come back in the reverse order of their removal,
        # each at the place it was removed from
        for nid, version_number in gesture(c, nugget_id, undone):
            restore(c, nid, own if nid == nugget_id else versions(c, nid), version_number, author)
        return nugget_state(c, nugget_id)


def restore(c: sqlite3.Connection, nid: str, versions: list, undone: int, author: str) -> None:
    """Write a new version of `nid` whose state is that before version `undone` (none: deleted).

    Position: a version that moved the nugget is undone by moving it back; a deleted nugget comes
    back where it was removed from; otherwise it stays where it is now (neighbours may have moved).
    """
    target = undone - 1
    if target >= 1:
        snap = dict(versions[target - 1][2])
    else:
        snap = {**versions[0][2], "deleted": True}
    current = nugget_state(c, nid)
    qid, version = current.qid, current.version + 1
    moved_from = versions[undone - 1][3].get("from_position")
    snap["position"] = moved_from if moved_from is not None else current.position
    when = now()
    queries.write_nugget(c, nid, text=snap["text"], importance=snap["importance"], status=snap["status"],
                         origin=snap["origin"], support_json=json.dumps(snap["support"], ensure_ascii=False),
                         extra_json=json.dumps(snap.get("extra", {}), ensure_ascii=False),
                         deleted=bool(snap["deleted"]), version=version, author=author, when=when)
    if snap["deleted"]:
        renumber(c, qid)
    else:
        place(c, qid, nid, snap["position"])
    # an undo back to an undo's state stands for the version that undo restored: always a real action
    restores = int(versions[target - 1][3].get("restores", target)) if target >= 1 else 0
    log(c, nid, version, "undo", author, when, {"restores": restores, "undid": undone})


def gesture(c: sqlite3.Connection, nugget_id: str, undone: tuple) -> list[tuple[str, int]]:
    """The (nugget, version) pairs one undo takes back: this one alone, or every nugget of a merge/split."""
    version, action, _, detail = undone
    if action in ("merge", "merged-into"):
        what, made = "merge", nugget_id if action == "merge" else detail["into"]
        head = effective_version(c, made)
        if head is None or head[1] != "merge":
            raise ValueError(f"cannot undo the merge: nugget {made} changed since; undo its later changes first")
        members: list[tuple[str, str, dict]] = [(made, "merge", {})]
        members += [(s, "merged-into", {"into": made}) for s in reversed(head[3]["from"])]
    elif action in ("split-into", "split-from"):
        what, original = "split", nugget_id if action == "split-into" else detail["from"]
        head = effective_version(c, original)
        if head is None or head[1] != "split-into":
            raise ValueError(f"cannot undo the split: nugget {original} changed since; "
                             "undo its later changes first")
        members = [(p, "split-from", {"from": original}) for p in head[3]["into"]] + [(original, "split-into", {})]
    else:
        return [(nugget_id, version)]
    out = []
    for nid, expected, link in members:
        v = effective_version(c, nid)
        if v is None or v[1] != expected or any(v[3].get(k) != x for k, x in link.items()):
            raise ValueError(f"cannot undo the {what}: nugget {nid} changed since; undo its later changes first")
        out.append((nid, v[0]))
    return out


def effective_version(c: sqlite3.Connection, nid: str) -> tuple | None:
    """(version, action, snapshot, detail) of the version whose state the nugget is in, None: before it existed."""
    own = versions(c, nid)
    number = effective(own) if own else 0
    return own[number - 1] if number >= 1 else None
