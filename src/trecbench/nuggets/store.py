"""The nuggets of a workspace as people edit them: current state plus every version, with author and time.

`NuggetStore(ws)` is the one way nuggets in `bench.sqlite` change. Each mutating call is one SQLite
transaction that writes the nugget's new state (table `nuggets`) and a `nugget_versions` row holding the
action, the author, the time and a full snapshot of the state after it, so history is exact and `undo`
restores a snapshot (as a new version: nothing is ever overwritten).

Order: `position` is the 0-based place of a live nugget in its topic. Inserting or deleting a nugget
shifts its neighbours without making versions of them (their content did not change); an explicit
`reorder` records a version of every nugget it moved.

Undo walks back one version at a time: undoing an undo goes further back, not forward. Undoing a
nugget's first version deletes it; undoing a delete brings it back. A merge or a split is undone as one
gesture: undoing the merged nugget (or any of its sources) deletes it and restores the sources, provided
none of them changed since.

Evidence links: a nugget's support is a tuple of alternatives (any one suffices), each a joint group of
`Link`s (every document of the group is needed). A link keeps the sha256 of the document's text when
it was made (`trecbench.store.text_hash`), so `check` can list links whose document changed or vanished.

This module edits; undo lives in `nuggets.history`, importing a file (matching and its diff) in
`nuggets.imports`, the relevant documents of a topic in `nuggets.relevant`. What the three share has
its own home, which none of them imports back: the records and checks (`nuggets.records`), the
versioned writes every change is made of (`nuggets.changes`), the links' text hashes
(`nuggets.links`); their SQL is `trecbench.store.nuggets`'.
"""
from __future__ import annotations

import json
import sqlite3
from typing import Any, Iterable, Sequence

from trecbench.nuggets import history, imports
from trecbench.nuggets.changes import delete, insert, live_nugget, new_id, update, write
from trecbench.nuggets.links import DocumentLinks
from trecbench.nuggets.model import ORIGIN, STATUS, Nugget, TopicNuggets
from trecbench.nuggets.records import (Alternatives, ImportReport, Link, LinkProblem, StoredNugget, Version,
                                       check_author, check_choice, check_importance, clean_text, same_text, stored_nugget)
from trecbench.store import nuggets as queries
from trecbench.store.workspace import DraftRun, Workspace, WorkspaceLike, as_workspace, text_hash

__all__ = ["Link", "StoredNugget", "Version", "ImportReport", "LinkProblem", "DraftRun", "NuggetStore",
           "workspace_nuggets"]


class NuggetStore:
    """Nuggets of one workspace: read, edit (versioned), import, export, check links.

    Safe to share between threads: each thread uses its own SQLite connection (`Workspace.connection`),
    and every change is one `BEGIN IMMEDIATE` transaction that reads the state it changes.
    """

    def __init__(self, ws: Workspace):
        self.ws = ws
        self._linker = DocumentLinks(ws)

    # ---- reading ---------------------------------------------------------------------------------

    def topic(self, qid: str) -> list[StoredNugget]:
        """The live nuggets of a topic, by position."""
        return [stored_nugget(r) for r in queries.live_rows(self.ws.connection(), qid)]

    def topics(self) -> dict[str, list[StoredNugget]]:
        """Every topic with live nuggets: {qid: nuggets by position}, topics in qid order."""
        out: dict[str, list[StoredNugget]] = {}
        for r in queries.live_rows(self.ws.connection()):
            n = stored_nugget(r)
            out.setdefault(n.qid, []).append(n)
        return out

    def get(self, nugget_id: str) -> StoredNugget:
        """The live nugget with this id; KeyError if there is none or it was deleted."""
        return live_nugget(self.ws.connection(), nugget_id)

    def history(self, nugget_id: str) -> list[Version]:
        """Every action on the nugget, oldest first (deleted nuggets too); KeyError if it never existed."""
        rows = queries.version_rows(self.ws.connection(), nugget_id)
        if not rows:
            raise KeyError(nugget_id)
        return [Version(a, v, act, who, when, json.loads(snap), json.loads(det))
                for a, v, act, who, when, snap, det in rows]

    def query(self, qid: str) -> str | None:
        """The topic's text: the workspace's topic, else the query an imported nuggets file gave."""
        topic = self.ws.topics().get(qid)
        if topic is not None:
            return topic.text
        return queries.topic_query(self.ws.connection(), qid)

    def draft_runs(self, qid: str | None = None) -> list[DraftRun]:
        """The drafting runs recorded per topic (a page can flag a topic whose draft is incomplete)."""
        return self.ws.draft_runs(qid=qid)

    # ---- editing -----------------------------------------------------------------------------------

    def add(self, qid: str, text: str, importance: str = "okay", *, author: str, origin: str = "human",
            position: int | None = None, support: Iterable[Iterable[str | Link]] = (),
            status: str = "draft", extra: dict | None = None) -> StoredNugget:
        """A new nugget at `position` (default: last; 0 is first), in status draft unless told otherwise.

        `support` is a list of alternatives, each a list of docids needed together (or `Link`s); each new
        link hashes the document's current text (None when the workspace has no corpus or lacks it).
        """
        check_author(author)
        state: dict[str, Any] = {"qid": str(qid), "text": clean_text(text), "importance": check_importance(importance),
                 "status": check_choice(status, STATUS, "status"), "origin": check_choice(origin, ORIGIN, "origin"),
                 "extra": dict(extra or {})}
        self._linker.corpus()  # opened (and indexed) before the write lock is taken
        with self.ws.transaction() as c:
            state["support"] = self._linker.links(support)
            nid = new_id(c, state["qid"])
            live = queries.live_ids(c, state["qid"])
            index = len(live) if position is None else max(0, min(int(position), len(live)))
            insert(c, nid, state, index, author, "add", {})
            return live_nugget(c, nid)

    def edit(self, nugget_id: str, *, author: str, text: str | None = None,
             importance: str | None = None) -> StoredNugget:
        """Change the text and/or importance; a call that changes nothing writes no version."""
        check_author(author)
        changes: dict[str, Any] = {}
        if text is not None:
            changes["text"] = clean_text(text)
        if importance is not None:
            changes["importance"] = check_importance(importance)
        with self.ws.transaction() as c:
            return update(c, nugget_id, changes, author, "edit", {})

    def approve(self, nugget_id: str, *, author: str) -> StoredNugget:
        """Mark the nugget approved (a person has checked it)."""
        check_author(author)
        with self.ws.transaction() as c:
            return update(c, nugget_id, {"status": "approved"}, author, "approve", {})

    def approve_all(self, qid: str | None = None, *, author: str) -> list[StoredNugget]:
        """Approve every draft nugget of topic `qid` (of every topic when None) in one transaction, each as a
        version of its own in the history (action "approve", undone one by one like any approval); returns
        the nuggets approved, in topic and position order."""
        check_author(author)
        drafts = [n for nuggets in ([self.topic(qid)] if qid is not None else self.topics().values())
                  for n in nuggets if n.status != "approved"]
        with self.ws.transaction() as c:
            return [update(c, n.id, {"status": "approved"}, author, "approve", {}) for n in drafts]

    def delete(self, nugget_id: str, *, author: str) -> None:
        """Delete the nugget (its history stays; `undo` brings it back)."""
        check_author(author)
        with self.ws.transaction() as c:
            delete(c, nugget_id, author, "delete", {})

    def merge(self, nugget_ids: list[str], *, author: str, text: str | None = None) -> StoredNugget:
        """One nugget in place of several of the same topic, at the first one's position.

        Its text is `text` (default: the texts joined by "; "), it is vital if any of them was, and its
        support is the union of their alternatives. The originals are deleted, their history saying
        which nugget they were merged into.
        """
        check_author(author)
        ids = list(dict.fromkeys(nugget_ids))
        if len(ids) < 2:
            raise ValueError("merge needs at least two different nuggets")
        with self.ws.transaction() as c:
            parts = [live_nugget(c, i) for i in ids]
            qids = {p.qid for p in parts}
            if len(qids) > 1:
                raise ValueError(f"cannot merge nuggets of different topics ({', '.join(sorted(qids))})")
            first = parts[0]
            support: list[tuple[Link, ...]] = []
            for p in parts:
                for group in p.support:
                    if {x.key for x in group} not in [{x.key for x in g} for g in support]:
                        support.append(group)
            state = {"qid": first.qid, "text": clean_text(text) if text is not None else "; ".join(p.text for p in parts),
                     "importance": "vital" if any(p.importance == "vital" for p in parts) else "okay",
                     "status": "draft", "origin": "human", "support": tuple(support), "extra": dict(first.extra)}
            # the first one's slot once the merged nuggets are gone
            index = first.position - sum(p.position < first.position for p in parts)
            nid = new_id(c, first.qid)
            for p in parts:
                delete(c, p.id, author, "merged-into", {"into": nid})
            insert(c, nid, state, index, author, "merge", {"from": ids})
            return live_nugget(c, nid)

    def split(self, nugget_id: str, texts: list[str], *, author: str) -> list[StoredNugget]:
        """Several nuggets in place of one, at its position, each keeping its importance and support."""
        check_author(author)
        cleaned = [clean_text(t) for t in texts]
        if len(cleaned) < 2:
            raise ValueError("split needs at least two texts")
        with self.ws.transaction() as c:
            old = live_nugget(c, nugget_id)
            new_ids: list[str] = []
            for _ in cleaned:
                new_ids.append(new_id(c, old.qid, taken=new_ids))
            delete(c, old.id, author, "split-into", {"into": new_ids})
            for k, (nid, text) in enumerate(zip(new_ids, cleaned)):
                state = {"qid": old.qid, "text": text, "importance": old.importance, "status": "draft",
                         "origin": "human", "support": old.support, "extra": dict(old.extra)}
                insert(c, nid, state, old.position + k, author, "split-from", {"from": old.id})
            return [live_nugget(c, nid) for nid in new_ids]

    def reorder(self, qid: str, nugget_ids_in_order: list[str], *, author: str) -> None:
        """Put the topic's live nuggets in this order (all of them, each once); moved ones get a version."""
        check_author(author)
        order = list(nugget_ids_in_order)
        with self.ws.transaction() as c:
            live = queries.live_ids(c, qid)
            if len(set(order)) != len(order) or set(order) != set(live):
                missing = sorted(set(live) - set(order))
                extra = sorted(set(order) - set(live))
                why = []
                if missing:
                    why.append("missing " + ", ".join(missing))
                if extra:
                    why.append("not live nuggets of the topic: " + ", ".join(extra))
                if len(set(order)) != len(order):
                    why.append("an id is given twice")
                raise ValueError(f"reorder of topic {qid!r} must list each of its nuggets once ({'; '.join(why)})")
            before = {nid: live_nugget(c, nid) for nid in order}
            queries.set_positions(c, order)
            for index, nid in enumerate(order):
                if before[nid].position != index:
                    write(c, before[nid], {}, author, "reorder", {"from_position": before[nid].position,
                                                                        "to_position": index})

    def link(self, nugget_id: str, docids: list[str], *, author: str,
             spans: Sequence[tuple[int, int] | None] | None = None, alternative: int | None = None) -> StoredNugget:
        """Add one alternative: a joint group of all `docids` (one docid: a single-document alternative); with
        `alternative` (0-based), add them to that alternative instead (joint sources: all are needed).

        `spans`, beside `docids`, makes a link a span of its passage: (start, end) characters of its text
        (None: the whole passage). Each link records the hash of the document's current text, a span link the
        hash of the span's text and its place in the source document too (`DocumentLinks.span_link`).
        Linking a group the nugget already has refreshes its hashes (how a person confirms a link
        `trecbench check` reported as changed). Raises ValueError if the workspace's corpus lacks a document,
        for a span outside its text and when `spans` is not as long as `docids`; IndexError for an
        alternative the nugget does not have.
        """
        check_author(author)
        wanted = _wanted(docids, spans)
        group = tuple(self._linker.span_link(d, m[0], m[1], strict=True) if m is not None
                      else Link(d, self._linker.hash_of(d, strict=True)) for d, m in wanted)
        with self.ws.transaction() as c:
            current = live_nugget(c, nugget_id)
            support = _placed(current, group, alternative)
            detail: dict[str, Any] = {"docids": [d for d, _ in wanted]}
            if any(m is not None for _, m in wanted):
                detail["spans"] = [list(m) if m is not None else None for _, m in wanted]
            if alternative is not None:
                detail["alternative"] = alternative
            return update(c, nugget_id, {"support": support}, author, "link", detail)

    def alternative_of(self, nugget_id: str, docid: str) -> int:
        """The number (0-based) of the nugget's first support alternative that links `docid`; ValueError if none."""
        for i, group in enumerate(self.get(nugget_id).support):
            if any(x.docid == docid for x in group):
                return i
        raise ValueError(f"nugget {nugget_id} has no support alternative with {docid!r}")

    def unlink(self, nugget_id: str, alternative: int, *, author: str) -> StoredNugget:
        """Remove support alternative number `alternative` (0-based); IndexError if there is none."""
        check_author(author)
        with self.ws.transaction() as c:
            current = live_nugget(c, nugget_id)
            if not 0 <= alternative < len(current.support):
                raise IndexError(f"nugget {nugget_id} has {len(current.support)} support alternative(s), "
                                 f"no number {alternative}")
            support = current.support[:alternative] + current.support[alternative + 1:]
            removed = [x.docid for x in current.support[alternative]]
            return update(c, nugget_id, {"support": support}, author, "unlink", {"docids": removed})

    def relink(self, nugget_id: str, support: Alternatives, *, author: str, detail: dict) -> StoredNugget:
        """Replace the nugget's support with `support` (Links as given, hashes included) as one new version of
        action "corpus-update", `detail` saying why: how a corpus update moves links to the new passages
        (the nugget's history keeps the links as they were)."""
        check_author(author)
        with self.ws.transaction() as c:
            live_nugget(c, nugget_id)
            return update(c, nugget_id, {"support": tuple(support)}, author, "corpus-update", detail)

    def undo(self, nugget_id: str, *, author: str) -> StoredNugget:
        """Restore the state before the nugget's last (not yet undone) action, as a new version (see
        `trecbench.nuggets.history.undo`)."""
        return history.undo(self.ws, nugget_id, author=author)

    # ---- import and export ---------------------------------------------------------------------------

    def import_topics(self, topics: list[TopicNuggets], *, author: str, dry_run: bool = False) -> ImportReport:
        """Make each topic in `topics` hold exactly the file's nuggets (see `trecbench.nuggets.imports`)."""
        return imports.import_topics(self.ws, self._linker, topics, author=author, dry_run=dry_run)

    def export(self, *, approved_only: bool = False) -> list[TopicNuggets]:
        """Every topic's live nuggets as the nugget model (what `write_nuggets` writes), in qid order."""
        known = self.ws.topics()
        stored_queries = queries.topic_queries(self.ws.connection())
        out = []
        for qid, nuggets in self.topics().items():
            chosen = [n.as_nugget() for n in nuggets if not approved_only or n.status == "approved"]
            if not chosen:
                continue
            query = known[qid].text if qid in known else stored_queries.get(qid)
            out.append(TopicNuggets(qid, tuple(chosen), query))
        return out

    def check(self, corpus) -> list[LinkProblem]:
        """Links whose document text no longer has the hash it had when linked, or that the corpus lacks.

        Links made without a hash (no corpus at the time) are reported only when the document is missing.
        """
        problems = []
        for qid, nuggets in self.topics().items():
            for n in nuggets:
                seen: set[str] = set()
                for group in n.support:
                    for link in group:
                        if link.docid in seen:
                            continue
                        seen.add(link.docid)
                        doc = corpus.get(link.docid)
                        if doc is None:
                            problems.append(LinkProblem(qid, n.id, link.docid, "missing"))
                        elif link.doc_hash is not None and link.doc_hash != text_hash(doc.text):
                            problems.append(LinkProblem(qid, n.id, link.docid, "changed"))
        return problems

    # ---- drafts (used by the drafters) -----------------------------------------------------------------

    def replace_drafts(self, qid: str, drafts: Sequence[Nugget], *, author: str,
                       keep: int | None = None) -> list[StoredNugget]:
        """Record a drafter's nuggets for a topic in one transaction, replacing the topic's machine drafts.

        People's work wins (see `curated`): every live nugget nobody touched since a drafter wrote it (by
        this drafter or another) is replaced; a nugget a person edited, approved, moved, merged or split
        stays, and a draft whose text is one a person deleted, edited away, merged or split, or one the
        topic still has, is not added again. New vital drafts go after the topic's last vital nugget,
        okay ones at the end, so vital nuggets come first; with `keep`, drafts are added only while the
        topic holds fewer than `keep` nuggets. Each new nugget gets a version of action "draft".
        """
        check_author(author)
        self._linker.corpus()
        with self.ws.transaction() as c:
            machine, texts = self._curation(c, qid)
            for nid in machine:
                delete(c, nid, author, "delete", {"replaced_by": "redraft"})
            live = [live_nugget(c, i) for i in queries.live_ids(c, qid)]
            texts |= {same_text(n.text) for n in live}
            room = None if keep is None else max(0, keep - len(live))
            vital_end = max((n.position + 1 for n in live if n.importance == "vital"), default=0)
            made: list[str] = []
            for d in drafts:
                if room is not None and len(made) >= room:
                    break
                text = clean_text(d.text)
                if same_text(text) in texts:
                    continue
                texts.add(same_text(text))
                importance = check_importance(d.importance)
                state = {"qid": qid, "text": text, "importance": importance,
                         "status": check_choice(d.status, STATUS, "status"), "origin": check_choice(d.origin, ORIGIN, "origin"),
                         "support": self._linker.links(d.support), "extra": dict(d.extra)}
                nid = new_id(c, qid)
                index = vital_end if importance == "vital" else len(queries.live_ids(c, qid))
                insert(c, nid, state, index, author, "draft", {})
                vital_end += importance == "vital"
                made.append(nid)
            return [live_nugget(c, nid) for nid in made]

    def _curation(self, c: sqlite3.Connection, qid: str) -> tuple[list[str], set[str]]:
        """(live nuggets no person touched since a drafter wrote them, texts of every nugget a person touched).

        A drafter's only versions are its "draft" and its "delete" of a replaced draft; any other version
        (edit, approve, move, delete, merge, split, import, undo) is a person's.
        """
        rows = queries.curation_rows(c, qid)
        versions: dict[str, list[tuple[str, dict, dict]]] = {}
        state: dict[str, tuple[int, str]] = {}
        for nid, deleted, status, action, snapshot, detail in rows:
            versions.setdefault(nid, []).append((action, json.loads(snapshot), json.loads(detail)))
            state[nid] = (deleted, status)
        machine, texts = [], set()
        for nid, steps in versions.items():
            by_person = [a for a, _, d in steps if a != "draft" and d.get("replaced_by") != "redraft"]
            if not by_person:
                if not state[nid][0] and state[nid][1] == "draft" and steps[0][0] == "draft":
                    machine.append(nid)
                continue
            texts |= {same_text(snap["text"]) for _, snap, _ in steps if snap.get("text")}
        return machine, texts


def _wanted(docids: list[str], spans: Sequence[tuple[int, int] | None] | None) -> list[tuple[str, Any]]:
    """(docid, span or None) of each document to link, blanks left out and each once; ValueError when there
    is none or `spans` is not as long as `docids`."""
    given = [str(d).strip() for d in docids]
    marks = list(spans) if spans is not None else [None] * len(given)
    if len(marks) != len(given):
        raise ValueError(f"{len(marks)} span(s) given for {len(given)} document(s)")
    wanted = list({(d, m): (d, m) for d, m in zip(given, marks) if d}.values())
    if not wanted:
        raise ValueError("link needs at least one docid")
    return wanted


def _placed(current: StoredNugget, group: tuple[Link, ...], alternative: int | None) -> Alternatives:
    """The nugget's support with `group` added: joined to alternative number `alternative`, else as a new
    alternative (replacing one with the same links: their hashes refreshed). IndexError for an alternative
    the nugget does not have."""
    support = list(current.support)
    if alternative is not None:
        if not 0 <= alternative < len(support):
            raise IndexError(f"nugget {current.id} has {len(support)} support alternative(s), no number {alternative}")
        keys = {x.key for x in group}
        support[alternative] = tuple(x for x in support[alternative] if x.key not in keys) + group
        return tuple(support)
    same = [i for i, g in enumerate(support) if {x.key for x in g} == {x.key for x in group}]
    if same:
        support[same[0]] = group
    else:
        support.append(group)
    return tuple(support)


def workspace_nuggets(ws: WorkspaceLike, *, approved_only: bool = False) -> list[TopicNuggets]:
    """The workspace's nuggets (a `Workspace` or its path), topics with at least one, in qid order: what
    answers and evidence are scored against."""
    return NuggetStore(as_workspace(ws)).export(approved_only=approved_only)
