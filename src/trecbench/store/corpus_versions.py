"""The corpus versions' SQL: each version and its passages (docid, source span, text hash), the kept texts of
the passages the benchmark refers to, what an update did, and the judgments' view of versions.

Each statement is a function on a connection the caller holds (writes run inside the caller's transaction).
A text hash is the sha256 of the text as 32 bytes (`bytes.fromhex(trecbench.store.text_hash(text))`): a
version of a million passages costs a row of ~80 bytes each. The records and the rules of an update are
`trecbench.versions`'.
"""
from __future__ import annotations

from abc import abstractmethod
import hashlib
import sqlite3
import threading
from typing import Any, Iterable, Iterator, NamedTuple

from .base import Connected, now, row_id

__all__ = ["CorpusVersionStore", "VersionRow", "PassageRow", "current_version_id", "version_rows", "insert_version",
           "finish_version", "insert_passages", "version_hashes", "passage_rows", "has_docids", "keep_texts", "kept_texts",
           "unkept_passages", "live_judgments", "stale_judgment_rows", "referenced_docids", "copy_judgments",
           "insert_changes", "change_rows"]

CHUNK = 500  # docids per `IN (...)` query (SQLite allows 999 parameters in older builds)


class VersionRow(NamedTuple):
    """A corpus version as stored (`summary_json`: the update's counts that made it; '{}' for the first)."""

    id: int
    name: str
    created_at: str
    corpus: str
    sources: str | None
    passages: int
    spans: int
    parent: int | None
    summary_json: str


class PassageRow(NamedTuple):
    """A passage of a version: its docid, source span (None, None, None without one) and text hash."""

    docid: str
    source_id: str | None
    start: int | None
    end: int | None
    text_hash: bytes


def current_version_id(conn: sqlite3.Connection) -> int | None:
    """The id of the workspace's current (newest) corpus version, None before one is registered: one lookup
    on the table's primary key, what recording a batch of judgments costs."""
    return conn.execute("SELECT MAX(id) FROM corpus_versions").fetchone()[0]


def version_rows(conn: sqlite3.Connection) -> list[VersionRow]:
    """Every corpus version, oldest first."""
    return [VersionRow(*r) for r in conn.execute(
        "SELECT id, name, created_at, corpus, sources, passages, spans, parent, summary_json FROM corpus_versions "
        "ORDER BY id")]


def insert_version(conn: sqlite3.Connection, name: str, corpus: str, sources: str | None,
                   parent: int | None) -> int:
    """A new version row (its passages follow; `finish_version` counts them); returns its id."""
    return row_id(conn.execute("INSERT INTO corpus_versions (name, created_at, corpus, sources, parent) "
                               "VALUES (?, ?, ?, ?, ?)", (name, now(), corpus, sources, parent)))


def finish_version(conn: sqlite3.Connection, version: int, passages: int, spans: int, summary_json: str) -> None:
    """Record how many passages (and with a span) the version holds and the counts of the update that made it."""
    conn.execute("UPDATE corpus_versions SET passages = ?, spans = ?, summary_json = ? WHERE id = ?",
                 (passages, spans, summary_json, version))


def insert_passages(conn: sqlite3.Connection, version: int, rows: Iterable[PassageRow]) -> None:
    """Add passages to a version (one executemany: the caller streams its corpus in chunks)."""
    conn.executemany("INSERT INTO corpus_passages (version, docid, source_id, start_char, end_char, text_hash) "
                     "VALUES (?, ?, ?, ?, ?, ?)", ((version, *r) for r in rows))


def version_hashes(conn: sqlite3.Connection, version: int) -> Iterator[tuple[str, bytes]]:
    """(docid, text hash) of every passage of a version, in docid order (streamed: a fingerprint's input)."""
    yield from conn.execute("SELECT docid, text_hash FROM corpus_passages WHERE version = ? ORDER BY docid", (version,))


def _chunks(items: list[str]) -> Iterator[list[str]]:
    for i in range(0, len(items), CHUNK):
        yield items[i:i + CHUNK]


def passage_rows(conn: sqlite3.Connection, version: int, docids: Iterable[str]) -> dict[str, PassageRow]:
    """{docid: passage} of the version's passages among `docids` (absent docids are left out)."""
    out: dict[str, PassageRow] = {}
    for chunk in _chunks(sorted(set(docids))):
        marks = ", ".join("?" * len(chunk))
        for r in conn.execute(f"SELECT docid, source_id, start_char, end_char, text_hash FROM corpus_passages "
                              f"WHERE version = ? AND docid IN ({marks})", (version, *chunk)):
            out[r[0]] = PassageRow(*r)
    return out


def has_docids(conn: sqlite3.Connection, version: int, docids: Iterable[str]) -> set[str]:
    """The docids among `docids` that the version has."""
    found: set[str] = set()
    for chunk in _chunks(sorted(set(docids))):
        marks = ", ".join("?" * len(chunk))
        found.update(r[0] for r in conn.execute(
            f"SELECT docid FROM corpus_passages WHERE version = ? AND docid IN ({marks})", (version, *chunk)))
    return found


def keep_texts(conn: sqlite3.Connection, texts: Iterable[tuple[bytes, str]]) -> None:
    """Keep (hash, text) pairs; a text kept already is kept once."""
    conn.executemany("INSERT OR IGNORE INTO corpus_texts (hash, text) VALUES (?, ?)", texts)


def kept_texts(conn: sqlite3.Connection, hashes: Iterable[bytes]) -> dict[bytes, str]:
    """{hash: text} of the kept texts among `hashes`."""
    out: dict[bytes, str] = {}
    wanted = sorted(set(h for h in hashes if h is not None))
    for i in range(0, len(wanted), CHUNK):
        chunk = wanted[i:i + CHUNK]
        marks = ", ".join("?" * len(chunk))
        out.update(conn.execute(f"SELECT hash, text FROM corpus_texts WHERE hash IN ({marks})", chunk).fetchall())
    return out


# A judgment's own passage: the one of the version it was made on (before versions existed: the first).
_OWN = ("LEFT JOIN corpus_passages own ON own.version = COALESCE(j.corpus_version, :first) AND own.docid = j.docid "
        "LEFT JOIN corpus_passages cur ON cur.version = :current AND cur.docid = j.docid ")


def unkept_passages(conn: sqlite3.Connection, version: int, docids: Iterable[str]) -> list[tuple[str, bytes]]:
    """(docid, text hash) of the version's passages among `docids` whose text is not kept yet."""
    out: list[tuple[str, bytes]] = []
    for chunk in _chunks(sorted(set(docids))):
        marks = ", ".join("?" * len(chunk))
        out += conn.execute(f"SELECT p.docid, p.text_hash FROM corpus_passages p WHERE p.version = ? AND p.docid IN "
                            f"({marks}) AND NOT EXISTS (SELECT 1 FROM corpus_texts t WHERE t.hash = p.text_hash)",
                            (version, *chunk)).fetchall()
    return out


class CorpusVersionStore(Connected):
    """Keeping the texts of judged passages (part of `Workspace`, used by the judgments' record path)."""

    _texts_lock = threading.Lock()

    @abstractmethod
    def corpus(self) -> Any:
        """The workspace's corpus (`Workspace.corpus`)."""

    @property
    @abstractmethod
    def corpus_source(self) -> str | None:
        """Where the workspace's corpus is (`Workspace.corpus_source`)."""

    def keep_judged_texts(self, conn: sqlite3.Connection, version: int | None, docids: Iterable[str]) -> None:
        """Keep, by hash, the texts of the judged passages of `version` not kept yet (inside the caller's
        transaction), read from the workspace's corpus file: so a corpus update still knows the text judged
        when the file is overwritten in place. A text that no longer has its version's hash, a corpus that
        cannot be read or an ir_datasets one (its documents do not change) keeps nothing."""
        if version is None:
            return
        todo = unkept_passages(conn, version, docids)
        corpus = self._text_corpus() if todo else None
        if corpus is None:
            return
        texts = []
        for docid, h in todo:
            text = corpus.text(docid)
            if text is not None and hashlib.sha256(text.encode("utf-8")).digest() == h:
                texts.append((h, text))
        keep_texts(conn, texts)

    def _text_corpus(self) -> Any:
        """The corpus texts are kept from, opened once per workspace object; None when there is none to read."""
        from trecbench.errors import InputError

        with self._texts_lock:
            source = self.corpus_source
            opened = getattr(self, "_kept_from", None)
            if opened is None or opened[0] != source:
                try:
                    corpus = self.corpus() if source and not source.startswith("irds:") else None
                except (InputError, OSError):
                    corpus = None
                opened = (source, corpus)
                self._kept_from = opened
            return opened[1]


def live_judgments(conn: sqlite3.Connection, current: int, first: int) -> list[tuple]:
    """(id, qid, docid, grade, source_id, start, end, text_hash) of each successful judgment that holds in
    version `current`: its docid is a passage of it, with the text the judgment was made on (id order)."""
    return conn.execute(
        "SELECT j.id, j.qid, j.docid, j.grade, cur.source_id, cur.start_char, cur.end_char, cur.text_hash FROM judgments j "
        + _OWN + "WHERE j.status = 'ok' AND cur.docid IS NOT NULL AND (own.docid IS NULL OR "
        "own.text_hash = cur.text_hash) ORDER BY j.id", {"current": current, "first": first}).fetchall()


def stale_judgment_rows(conn: sqlite3.Connection, current: int, first: int,
                        qid: str | None = None) -> list[tuple[int, str, str]]:
    """(id, qid, docid) of each successful judgment that does not hold in version `current` (its docid is
    not a passage of it, or the passage's text is not the one judged): what the workspace's qrels leave out."""
    sql = ("SELECT j.id, j.qid, j.docid FROM judgments j " + _OWN + "WHERE j.status = 'ok' AND (cur.docid IS NULL "
           "OR (own.docid IS NOT NULL AND own.text_hash != cur.text_hash))")
    args: dict = {"current": current, "first": first}
    if qid is not None:
        sql += " AND j.qid = :qid"
        args["qid"] = qid
    return conn.execute(sql, args).fetchall()


def referenced_docids(conn: sqlite3.Connection) -> list[str]:
    """Every docid a judgment is about (the passages whose texts a version keeps)."""
    return [r[0] for r in conn.execute("SELECT DISTINCT docid FROM judgments")]


def copy_judgments(conn: sqlite3.Connection, copies: Iterable[tuple[int, str, int, str | None]]) -> None:
    """Record copies (judgment id, new docid, version, flag) of stored judgments: the same grade, judge, reply
    and rationale on another passage, saying which judgment they copy (`copied_from`) and when they were made."""
    when = now()
    conn.executemany(
        "INSERT INTO judgments (qid, docid, grade, status, judge_id, raw_reply, rationale, error, propagated_from, "
        "doc_hash, created_at, corpus_version, copied_from, flag) SELECT qid, ?, grade, status, judge_id, raw_reply, "
        "rationale, error, propagated_from, NULL, ?, ?, id, ? FROM judgments WHERE id = ?",
        ((docid, when, version, flag, source) for source, docid, version, flag in copies))


def insert_changes(conn: sqlite3.Connection, rows: Iterable[tuple]) -> None:
    """Record what an update did with each item it did not carry: (version, kind, outcome, qid, ref, docid,
    old_hash, new_docids_json, source_id, start, end, new_hash, note)."""
    conn.executemany("INSERT INTO corpus_changes (version, kind, outcome, qid, ref, docid, old_hash, new_docids, "
                     "source_id, start_char, end_char, new_hash, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     rows)


def change_rows(conn: sqlite3.Connection, version: int) -> list[tuple]:
    """(kind, outcome, qid, ref, docid, old_hash, new_docids_json, source_id, start, end, new_hash, note) of
    what the update to `version` did not carry, in the order it was recorded."""
    return conn.execute("SELECT kind, outcome, qid, ref, docid, old_hash, new_docids, source_id, start_char, "
                        "end_char, new_hash, note FROM corpus_changes WHERE version = ? ORDER BY id",
                        (version,)).fetchall()
