"""Permissions that changed between corpus versions: the evidence a topic's user may no longer see.

A permissions file says which documents each topic's asker may see (`eval evidence --permissions`, read by
`trecbench.evaluation.evidence.files.read_permissions`). When documents move, are re-chunked or change owner,
the file is rewritten too; comparing the two files on the workspace's evidence (its nuggets' supporting
documents, as the current corpus version has them) lists each item as the permission-aware scoring would
treat it: a source that was visible and is hidden now no longer counts (`apply_permissions`), and an item
whose every source is hidden is no longer required of that topic.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from trecbench.store.workspace import WorkspaceLike


class PermissionChange(NamedTuple):
    """One evidence item of a topic whose visible sources differ between the old and the new permissions."""

    qid: str
    item: str  # the nugget's id
    hidden: tuple[str, ...]  # sources visible under the old permissions and hidden under the new
    shown: tuple[str, ...]  # sources hidden under the old permissions and visible under the new
    required_before: bool  # some alternative was visible under the old permissions
    required_now: bool  # some alternative is visible under the new ones


def permission_changes(ws: WorkspaceLike, old: str | os.PathLike[str], new: str | os.PathLike[str], *,
                       default: str = "allow") -> list[PermissionChange]:
    """Each evidence item of the workspace whose visible sources differ between permissions files `old` and
    `new` (`default`: what a topic without an entry may see, as `read_permissions` takes it), by topic and
    item. InputError for a file that cannot be read."""
    from trecbench.evaluation.evidence.files import evidence_from_nuggets, read_permissions
    from trecbench.evaluation.evidence.recall import apply_permissions
    from trecbench.nuggets.store import workspace_nuggets

    items = [i for i in evidence_from_nuggets(workspace_nuggets(ws)) if i.any_of]
    before, after = read_permissions(os.fspath(old), default=default), read_permissions(os.fspath(new), default=default)
    kept_before = {(i.qid, i.id): i for i in apply_permissions(items, before)[0]}
    kept_after = {(i.qid, i.id): i for i in apply_permissions(items, after)[0]}
    out = []
    for item in sorted(items, key=lambda i: (i.qid, i.id)):
        visible_before = {d for d in item.sources if before.visible(item.qid, d)}
        visible_after = {d for d in item.sources if after.visible(item.qid, d)}
        if visible_before == visible_after:
            continue
        out.append(PermissionChange(item.qid, item.id, tuple(sorted(visible_before - visible_after)),
                                    tuple(sorted(visible_after - visible_before)), (item.qid, item.id) in kept_before,
                                    (item.qid, item.id) in kept_after))
    return out


def permission_lines(changes: list[PermissionChange]) -> list[str]:
    """The comparison as `corpus update --permissions` prints it: a line per item, then the counts."""
    lines = []
    for c in changes:
        what = [f"no longer visible: {' '.join(c.hidden)}"] if c.hidden else []
        what += [f"now visible: {' '.join(c.shown)}"] if c.shown else []
        if c.required_before and not c.required_now:
            what.append("no source left: no longer required of this topic")
        elif c.required_now and not c.required_before:
            what.append("required of this topic again")
        lines.append(f"permissions\t{c.qid}\t{c.item}\t{'; '.join(what)}")
    lost = sum(c.required_before and not c.required_now for c in changes)
    lines.append(f"permissions: {len(changes)} evidence item(s) see other sources; {lost} no longer required, "
                 f"{sum(bool(c.hidden) for c in changes)} lose a source")
    return lines
