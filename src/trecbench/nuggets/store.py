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
`nuggets.imports`, the relevant documents of a topic in `nuggets.relevant`.
"""
from __future__ import annotations

import json
import re
import sqlite3
import threading
from dataclasses import dataclass, field
from typing import Any, Iterable, NamedTuple, Sequence

from trecbench.nuggets.model import IMPORTANCE, ORIGIN, STATUS, Nugget, TopicNuggets
from trecbench.store.workspace import DraftRun, Workspace, now, text_hash

__all__ = ["Link", "StoredNugget", "Version", "ImportReport", "LinkProblem", "DraftRun", "NuggetStore",
           "workspace_nuggets"]


@dataclass(frozen=True)
class Link:
    """One document of a support group, with the sha256 of its text when the link was made (None: unknown)."""

    docid: str
    doc_hash: str | None


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
                      tuple(tuple(link.docid for link in group) for group in self.support),
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


_COLUMNS = ("id, qid, text, importance, status, origin, position, version, support_json, updated_by, updated_at, "
            "extra_json, deleted")
_ID_COUNTER = re.compile(r"-n(\d+)$")


class NuggetStore:
    """Nuggets of one workspace: read, edit (versioned), import, export, check links.

    Safe to share between threads: each thread uses its own SQLite connection (`Workspace.connection`),
    and every change is one `BEGIN IMMEDIATE` transaction that reads the state it changes.
    """

    def __init__(self, ws: Workspace):
        self.ws = ws
        self._corpus: Any = None
        self._corpus_opened = False
        self._corpus_lock = threading.Lock()

    # ---- reading ---------------------------------------------------------------------------------

    def topic(self, qid: str) -> list[StoredNugget]:
        """The live nuggets of a topic, by position."""
        rows = self.ws.connection().execute(
            f"SELECT {_COLUMNS} FROM nuggets WHERE qid = ? AND deleted = 0 ORDER BY position, id", (qid,))
        return [_stored(r) for r in rows]

    def topics(self) -> dict[str, list[StoredNugget]]:
        """Every topic with live nuggets: {qid: nuggets by position}, topics in qid order."""
        out: dict[str, list[StoredNugget]] = {}
        rows = self.ws.connection().execute(
            f"SELECT {_COLUMNS} FROM nuggets WHERE deleted = 0 ORDER BY qid, position, id")
        for r in rows:
            n = _stored(r)
            out.setdefault(n.qid, []).append(n)
        return out

    def get(self, nugget_id: str) -> StoredNugget:
        """The live nugget with this id; KeyError if there is none or it was deleted."""
        row = self.ws.connection().execute(f"SELECT {_COLUMNS} FROM nuggets WHERE id = ?", (nugget_id,)).fetchone()
        if row is None or row[-1]:
            raise KeyError(nugget_id)
        return _stored(row)

    def history(self, nugget_id: str) -> list[Version]:
        """Every action on the nugget, oldest first (deleted nuggets too); KeyError if it never existed."""
        rows = self.ws.connection().execute(
            "SELECT nugget_id, version, action, author, created_at, snapshot_json, detail_json FROM nugget_versions "
            "WHERE nugget_id = ? ORDER BY version", (nugget_id,)).fetchall()
        if not rows:
            raise KeyError(nugget_id)
        return [Version(a, v, act, who, when, json.loads(snap), json.loads(det))
                for a, v, act, who, when, snap, det in rows]

    def query(self, qid: str) -> str | None:
        """The topic's text: the workspace's topic, else the query an imported nuggets file gave."""
        topic = self.ws.topics().get(qid)
        if topic is not None:
            return topic.text
        row = self.ws.connection().execute("SELECT query FROM nugget_topics WHERE qid = ?", (qid,)).fetchone()
        return row[0] if row else None

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
        _check_author(author)
        state: dict[str, Any] = {"qid": str(qid), "text": _text(text), "importance": _importance(importance),
                 "status": _choice(status, STATUS, "status"), "origin": _choice(origin, ORIGIN, "origin"),
                 "extra": dict(extra or {})}
        self._corpus_or_none()  # opened (and indexed) before the write lock is taken
        with self.ws.transaction() as c:
            state["support"] = self._links(c, support)
            nid = _new_id(c, state["qid"])
            live = _live_ids(c, state["qid"])
            index = len(live) if position is None else max(0, min(int(position), len(live)))
            self._insert(c, nid, state, index, author, "add", {})
            return self._get(c, nid)

    def edit(self, nugget_id: str, *, author: str, text: str | None = None,
             importance: str | None = None) -> StoredNugget:
        """Change the text and/or importance; a call that changes nothing writes no version."""
        _check_author(author)
        changes: dict[str, Any] = {}
        if text is not None:
            changes["text"] = _text(text)
        if importance is not None:
            changes["importance"] = _importance(importance)
        with self.ws.transaction() as c:
            return self._update(c, nugget_id, changes, author, "edit", {})

    def approve(self, nugget_id: str, *, author: str) -> StoredNugget:
        """Mark the nugget approved (a person has checked it)."""
        _check_author(author)
        with self.ws.transaction() as c:
            return self._update(c, nugget_id, {"status": "approved"}, author, "approve", {})

    def delete(self, nugget_id: str, *, author: str) -> None:
        """Delete the nugget (its history stays; `undo` brings it back)."""
        _check_author(author)
        with self.ws.transaction() as c:
            self._delete(c, nugget_id, author, "delete", {})

    def merge(self, nugget_ids: list[str], *, author: str, text: str | None = None) -> StoredNugget:
        """One nugget in place of several of the same topic, at the first one's position.

        Its text is `text` (default: the texts joined by "; "), it is vital if any of them was, and its
        support is the union of their alternatives. The originals are deleted, their history saying
        which nugget they were merged into.
        """
        _check_author(author)
        ids = list(dict.fromkeys(nugget_ids))
        if len(ids) < 2:
            raise ValueError("merge needs at least two different nuggets")
        with self.ws.transaction() as c:
            parts = [self._get(c, i) for i in ids]
            qids = {p.qid for p in parts}
            if len(qids) > 1:
                raise ValueError(f"cannot merge nuggets of different topics ({', '.join(sorted(qids))})")
            first = parts[0]
            support: list[tuple[Link, ...]] = []
            for p in parts:
                for group in p.support:
                    if {x.docid for x in group} not in [{x.docid for x in g} for g in support]:
                        support.append(group)
            state = {"qid": first.qid, "text": _text(text) if text is not None else "; ".join(p.text for p in parts),
                     "importance": "vital" if any(p.importance == "vital" for p in parts) else "okay",
                     "status": "draft", "origin": "human", "support": tuple(support), "extra": dict(first.extra)}
            # the first one's slot once the merged nuggets are gone
            index = first.position - sum(p.position < first.position for p in parts)
            nid = _new_id(c, first.qid)
            for p in parts:
                self._delete(c, p.id, author, "merged-into", {"into": nid})
            self._insert(c, nid, state, index, author, "merge", {"from": ids})
            return self._get(c, nid)

    def split(self, nugget_id: str, texts: list[str], *, author: str) -> list[StoredNugget]:
        """Several nuggets in place of one, at its position, each keeping its importance and support."""
        _check_author(author)
        cleaned = [_text(t) for t in texts]
        if len(cleaned) < 2:
            raise ValueError("split needs at least two texts")
        with self.ws.transaction() as c:
            old = self._get(c, nugget_id)
            new_ids: list[str] = []
            for _ in cleaned:
                new_ids.append(_new_id(c, old.qid, taken=new_ids))
            self._delete(c, old.id, author, "split-into", {"into": new_ids})
            for k, (nid, text) in enumerate(zip(new_ids, cleaned)):
                state = {"qid": old.qid, "text": text, "importance": old.importance, "status": "draft",
                         "origin": "human", "support": old.support, "extra": dict(old.extra)}
                self._insert(c, nid, state, old.position + k, author, "split-from", {"from": old.id})
            return [self._get(c, nid) for nid in new_ids]

    def reorder(self, qid: str, nugget_ids_in_order: list[str], *, author: str) -> None:
        """Put the topic's live nuggets in this order (all of them, each once); moved ones get a version."""
        _check_author(author)
        order = list(nugget_ids_in_order)
        with self.ws.transaction() as c:
            live = _live_ids(c, qid)
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
            before = {nid: self._get(c, nid) for nid in order}
            _number(c, order)
            for index, nid in enumerate(order):
                if before[nid].position != index:
                    self._write(c, before[nid], {}, author, "reorder", {"from_position": before[nid].position,
                                                                        "to_position": index})

    def link(self, nugget_id: str, docids: list[str], *, author: str) -> StoredNugget:
        """Add one alternative: a joint group of all `docids` (one docid: a single-document alternative).

        Each link records the hash of the document's current text. Linking a group the nugget already has
        refreshes its hashes (how a person confirms a link `trecbench check` reported as changed).
        Raises ValueError if the workspace's corpus lacks a document.
        """
        _check_author(author)
        docs = list(dict.fromkeys(str(d).strip() for d in docids if str(d).strip()))
        if not docs:
            raise ValueError("link needs at least one docid")
        group = tuple(Link(d, self._hash_of(d, strict=True)) for d in docs)
        with self.ws.transaction() as c:
            current = self._get(c, nugget_id)
            support = list(current.support)
            same = [i for i, g in enumerate(support) if {x.docid for x in g} == set(docs)]
            if same:
                support[same[0]] = group
            else:
                support.append(group)
            return self._update(c, nugget_id, {"support": tuple(support)}, author, "link", {"docids": docs})

    def unlink(self, nugget_id: str, alternative: int, *, author: str) -> StoredNugget:
        """Remove support alternative number `alternative` (0-based); IndexError if there is none."""
        _check_author(author)
        with self.ws.transaction() as c:
            current = self._get(c, nugget_id)
            if not 0 <= alternative < len(current.support):
                raise IndexError(f"nugget {nugget_id} has {len(current.support)} support alternative(s), "
                                 f"no number {alternative}")
            support = current.support[:alternative] + current.support[alternative + 1:]
            removed = [x.docid for x in current.support[alternative]]
            return self._update(c, nugget_id, {"support": support}, author, "unlink", {"docids": removed})

    def undo(self, nugget_id: str, *, author: str) -> StoredNugget:
        """Restore the state before the nugget's last (not yet undone) action, as a new version (see
        `trecbench.nuggets.history.undo`)."""
        from trecbench.nuggets.history import undo

        return undo(self, nugget_id, author=author)

    # ---- import and export ---------------------------------------------------------------------------

    def import_topics(self, topics: list[TopicNuggets], *, author: str, dry_run: bool = False) -> ImportReport:
        """Make each topic in `topics` hold exactly the file's nuggets (see `trecbench.nuggets.imports`)."""
        from trecbench.nuggets.imports import import_topics

        return import_topics(self, topics, author=author, dry_run=dry_run)

    def export(self, *, approved_only: bool = False) -> list[TopicNuggets]:
        """Every topic's live nuggets as the nugget model (what `write_nuggets` writes), in qid order."""
        known = self.ws.topics()
        stored_queries = dict(self.ws.connection().execute("SELECT qid, query FROM nugget_topics").fetchall())
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
        _check_author(author)
        self._corpus_or_none()
        with self.ws.transaction() as c:
            machine, texts = self._curation(c, qid)
            for nid in machine:
                self._delete(c, nid, author, "delete", {"replaced_by": "redraft"})
            live = [self._get(c, i) for i in _live_ids(c, qid)]
            texts |= {_norm(n.text) for n in live}
            room = None if keep is None else max(0, keep - len(live))
            vital_end = max((n.position + 1 for n in live if n.importance == "vital"), default=0)
            made: list[str] = []
            for d in drafts:
                if room is not None and len(made) >= room:
                    break
                text = _text(d.text)
                if _norm(text) in texts:
                    continue
                texts.add(_norm(text))
                importance = _importance(d.importance)
                state = {"qid": qid, "text": text, "importance": importance,
                         "status": _choice(d.status, STATUS, "status"), "origin": _choice(d.origin, ORIGIN, "origin"),
                         "support": self._links(c, d.support), "extra": dict(d.extra)}
                nid = _new_id(c, qid)
                index = vital_end if importance == "vital" else len(_live_ids(c, qid))
                self._insert(c, nid, state, index, author, "draft", {})
                vital_end += importance == "vital"
                made.append(nid)
            return [self._get(c, nid) for nid in made]

    def _curation(self, c: sqlite3.Connection, qid: str) -> tuple[list[str], set[str]]:
        """(live nuggets no person touched since a drafter wrote them, texts of every nugget a person touched).

        A drafter's only versions are its "draft" and its "delete" of a replaced draft; any other version
        (edit, approve, move, delete, merge, split, import, undo) is a person's.
        """
        rows = c.execute("SELECT n.id, n.deleted, n.status, v.action, v.snapshot_json, v.detail_json FROM nuggets n "
                         "JOIN nugget_versions v ON v.nugget_id = n.id WHERE n.qid = ? ORDER BY n.id, v.version",
                         (qid,)).fetchall()
        versions: dict[str, list[tuple[str, dict, dict]]] = {}
        state: dict[str, tuple[int, str]] = {}
        for nid, deleted, status, action, snapshot, detail in rows:
            versions.setdefault(nid, []).append((action, json.loads(snapshot), json.loads(detail)))
            state[nid] = (deleted, status)
        machine, texts = [], set()
        for nid, history in versions.items():
            by_person = [a for a, _, d in history if a != "draft" and d.get("replaced_by") != "redraft"]
            if not by_person:
                if not state[nid][0] and state[nid][1] == "draft" and history[0][0] == "draft":
                    machine.append(nid)
                continue
            texts |= {_norm(snap["text"]) for _, snap, _ in history if snap.get("text")}
        return machine, texts

    # ---- internals -------------------------------------------------------------------------------------

    def _corpus_or_none(self):
        with self._corpus_lock:
            if not self._corpus_opened:
                self._corpus = self.ws.corpus() if self.ws.corpus_source else None
                self._corpus_opened = True
            return self._corpus

    def _hash_of(self, docid: str, *, strict: bool = False) -> str | None:
        corpus = self._corpus_or_none()
        if corpus is None:
            return None
        doc = corpus.get(docid)
        if doc is None:
            if strict:
                raise ValueError(f"the corpus has no document {docid!r}")
            return None
        return text_hash(doc.text)

    def _links(self, c: sqlite3.Connection, support: Iterable[Iterable[str | Link]],
               keep: Alternatives = ()) -> Alternatives:
        """Support as Link groups; a docid already linked in `keep` keeps its hash, others hash the text now."""
        known = {link.docid: link for group in keep for link in group}
        groups: list[tuple[Link, ...]] = []
        for group in support:
            links: list[Link] = []
            for item in group:
                link = item if isinstance(item, Link) else known.get(str(item)) or Link(str(item),
                                                                                        self._hash_of(str(item)))
                if link.docid not in [x.docid for x in links]:
                    links.append(link)
            if links and {x.docid for x in links} not in [{x.docid for x in g} for g in groups]:
                groups.append(tuple(links))
        return tuple(groups)

    def _get(self, c: sqlite3.Connection, nugget_id: str) -> StoredNugget:
        row = c.execute(f"SELECT {_COLUMNS} FROM nuggets WHERE id = ?", (nugget_id,)).fetchone()
        if row is None or row[-1]:
            raise KeyError(nugget_id)
        return _stored(row)

    def _row_state(self, c: sqlite3.Connection, nugget_id: str) -> StoredNugget:
        row = c.execute(f"SELECT {_COLUMNS} FROM nuggets WHERE id = ?", (nugget_id,)).fetchone()
        if row is None:
            raise KeyError(nugget_id)
        return _stored(row)

    def _versions(self, c: sqlite3.Connection, nugget_id: str) -> list[tuple[int, str, dict, dict]]:
        """(version, action, snapshot, detail) oldest first."""
        rows = c.execute("SELECT version, action, snapshot_json, detail_json FROM nugget_versions WHERE nugget_id = ? "
                         "ORDER BY version", (nugget_id,)).fetchall()
        return [(v, a, json.loads(s), json.loads(d)) for v, a, s, d in rows]

    def _insert(self, c: sqlite3.Connection, nid: str, state: dict, index: int, author: str, action: str,
                detail: dict) -> None:
        when = now()
        c.execute("INSERT INTO nuggets (id, qid, text, importance, status, origin, position, support_json, extra_json, "
                  "deleted, version, updated_by, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 1, ?, ?)",
                  (nid, state["qid"], state["text"], state["importance"], state["status"], state["origin"], -1,
                   _support_json(state["support"]), json.dumps(state["extra"], ensure_ascii=False), author, when))
        _place(c, state["qid"], nid, index)
        self._log(c, nid, 1, action, author, when, detail)

    def _write(self, c: sqlite3.Connection, current: StoredNugget, changes: dict, author: str, action: str,
               detail: dict) -> StoredNugget:
        """Apply changes to a live nugget and log the version (no check that anything changed)."""
        when = now()
        version = current.version + 1
        values = {"text": current.text, "importance": current.importance, "status": current.status,
                  "origin": current.origin, "support": current.support, "extra": current.extra, **changes}
        c.execute("UPDATE nuggets SET text = ?, importance = ?, status = ?, origin = ?, support_json = ?, "
                  "extra_json = ?, version = ?, updated_by = ?, updated_at = ? WHERE id = ?",
                  (values["text"], values["importance"], values["status"], values["origin"],
                   _support_json(values["support"]), json.dumps(values["extra"], ensure_ascii=False), version,
                   author, when, current.id))
        if "position" in changes:
            _place(c, current.qid, current.id, changes["position"])
            detail = {**detail, "from_position": current.position}
        self._log(c, current.id, version, action, author, when, detail)
        return self._get(c, current.id)

    def _update(self, c: sqlite3.Connection, nugget_id: str, changes: dict, author: str, action: str,
                detail: dict) -> StoredNugget:
        current = self._get(c, nugget_id)
        if all(getattr(current, k) == v for k, v in changes.items()):
            return current
        return self._write(c, current, changes, author, action, detail)

    def _delete(self, c: sqlite3.Connection, nugget_id: str, author: str, action: str, detail: dict) -> None:
        current = self._get(c, nugget_id)
        when = now()
        version = current.version + 1
        c.execute("UPDATE nuggets SET deleted = 1, version = ?, updated_by = ?, updated_at = ? WHERE id = ?",
                  (version, author, when, nugget_id))
        _renumber(c, current.qid)
        self._log(c, nugget_id, version, action, author, when, detail)

    def _log(self, c: sqlite3.Connection, nid: str, version: int, action: str, author: str, when: str,
             detail: dict) -> None:
        row = c.execute(f"SELECT {_COLUMNS} FROM nuggets WHERE id = ?", (nid,)).fetchone()
        c.execute("INSERT INTO nugget_versions (nugget_id, version, action, author, created_at, snapshot_json, "
                  "detail_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                  (nid, version, action, author, when, json.dumps(_snapshot(row), ensure_ascii=False),
                   json.dumps(detail, ensure_ascii=False)))



def workspace_nuggets(ws: Workspace | str, *, approved_only: bool = False) -> list[TopicNuggets]:
    """The workspace's nuggets (a `Workspace` or its path), topics with at least one, in qid order: what
    answers and evidence are scored against."""
    return NuggetStore(ws if isinstance(ws, Workspace) else Workspace(ws)).export(approved_only=approved_only)


# ---- helpers ------------------------------------------------------------------------------------------

def _stored(row: tuple) -> StoredNugget:
    (nid, qid, text, importance, status, origin, position, version, support_json, updated_by, updated_at,
     extra_json, _deleted) = row
    support = tuple(tuple(Link(x["docid"], x.get("doc_hash")) for x in group) for group in json.loads(support_json))
    return StoredNugget(nid, qid, text, importance, status, origin, position, version, support, updated_by,
                        updated_at, json.loads(extra_json))


def _snapshot(row: tuple) -> dict:
    n = _stored(row)
    return {"id": n.id, "qid": n.qid, "text": n.text, "importance": n.importance, "status": n.status,
            "origin": n.origin, "position": n.position, "support": json.loads(_support_json(n.support)),
            "extra": n.extra, "deleted": bool(row[-1])}


def _support_json(support: Alternatives) -> str:
    return json.dumps([[{"docid": x.docid, "doc_hash": x.doc_hash} for x in group] for group in support],
                      ensure_ascii=False)


def _docids(support: Alternatives) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(x.docid for x in group) for group in support)


def _support_text(support: tuple[tuple[str, ...], ...]) -> str:
    return "[" + " | ".join("+".join(g) for g in support) + "]"


def _effective(versions: list) -> int:
    """The version whose state the nugget is in now: an undo stands for the version it restored."""
    number, _, _, detail = versions[-1]
    return int(detail["restores"]) if "restores" in detail else number


def _live_ids(c: sqlite3.Connection, qid: str) -> list[str]:
    return [r[0] for r in c.execute("SELECT id FROM nuggets WHERE qid = ? AND deleted = 0 ORDER BY position, id", (qid,))]


def _place(c: sqlite3.Connection, qid: str, nid: str, index: int) -> None:
    """Move live nugget `nid` to `index` among its topic's live nuggets and renumber them 0..n-1."""
    others = [i for i in _live_ids(c, qid) if i != nid]
    index = max(0, min(int(index), len(others)))
    _number(c, others[:index] + [nid] + others[index:])


def _renumber(c: sqlite3.Connection, qid: str) -> None:
    _number(c, _live_ids(c, qid))


def _number(c: sqlite3.Connection, ids: list[str]) -> None:
    c.executemany("UPDATE nuggets SET position = ? WHERE id = ? AND position != ?",
                  [(k, i, k) for k, i in enumerate(ids)])


def _new_id(c: sqlite3.Connection, qid: str, taken: Iterable[str] = ()) -> str:
    """`<qid>-n<k>` with k one more than any counter the topic used; unique in the workspace."""
    prefix = f"{qid}-n"
    taken = set(taken)
    top = 0
    for (nid,) in c.execute("SELECT id FROM nuggets WHERE qid = ?", (qid,)):
        if nid.startswith(prefix):
            m = _ID_COUNTER.search(nid)
            if m:
                top = max(top, int(m.group(1)))
    for nid in taken:
        m = _ID_COUNTER.search(nid)
        if nid.startswith(prefix) and m:
            top = max(top, int(m.group(1)))
    k = top + 1
    while c.execute("SELECT 1 FROM nuggets WHERE id = ?", (f"{prefix}{k}",)).fetchone() or f"{prefix}{k}" in taken:
        k += 1
    return f"{prefix}{k}"


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


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _check_author(author: str) -> None:
    if not isinstance(author, str) or not author.strip():
        raise ValueError("every change needs an author")


def _text(text: str) -> str:
    cleaned = " ".join(str(text or "").split())
    if not cleaned:
        raise ValueError("a nugget needs a non-empty text")
    return cleaned


def _importance(value: str) -> str:
    return _choice(value, IMPORTANCE, "importance")


def _choice(value: str, allowed: tuple[str, ...], what: str) -> str:
    v = str(value).strip().lower()
    if v not in allowed:
        raise ValueError(f"{what} {value!r} is not one of {', '.join(allowed)}")
    return v
