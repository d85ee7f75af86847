"""A bench workspace: `trecbench.toml` (settings) and `bench.sqlite` (judgments, nuggets, pools, model cache).

The store is the source of truth; TREC files are exports and imports of it. `Workspace` opens the folder
and gives each thread its connection and its transactions; everything the workspace keeps is read and
written through the store module that keeps it, which holds its queries (the SQL of the package is here):
topics.py (the topics stored at init), judgments.py (judges and judgments), pools.py (pools and their
candidates), assessors.py (assessors, tokens, sessions, leases), drafts.py (nugget drafting runs),
settings.py (trecbench.toml and the `meta` values), nuggets.py and model_calls.py (nuggets, model calls).
"""
from __future__ import annotations

import os
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Union

from trecbench.errors import InputError

from .assessors import SESSION_SECONDS, AssessorStore
from .base import now, text_hash
from .drafts import DraftRun, DraftStore
from .judgments import Judge, JudgeStats, Judgment, JudgmentRow, JudgmentStore, _judgment_sql
from .pools import PoolStore, PoolSummary, StoredPool, load_pool, save_pool
from .settings import MetaStore, Settings
from .support import SupportStore
from .topics import TopicStore

# What was defined here before the store was split by what it keeps: `from trecbench.store.workspace
# import ...` of these names keeps working (`_judgment_sql`: the query plans tests/web/test_web_speed.py pins).
__all__ = ["CONFIG", "DATABASE", "SESSION_SECONDS", "DraftRun", "Judge", "JudgeStats", "Judgment", "JudgmentRow",
           "PoolSummary", "Settings", "StoredPool", "Workspace", "WorkspaceLike", "_judgment_sql", "as_workspace",
           "load_pool", "now", "save_pool", "text_hash"]

CONFIG = "trecbench.toml"
DATABASE = "bench.sqlite"


class Workspace(TopicStore, SupportStore, JudgmentStore, PoolStore, AssessorStore, DraftStore, MetaStore):
    """Open with `Workspace(path)`; create with `Workspace.init(path, corpus=..., topics=...)`.

    Every commit survives the process being killed. `durable=True` (the web app's) also makes it survive
    a power cut or an operating-system crash, at the price of a disk flush per commit (milliseconds).
    """

    def __init__(self, path: str | os.PathLike, *, durable: bool = False):
        self.path = Path(path)
        self.durable = durable
        # This object's threads take turns at writing here rather than in SQLite, whose busy handler
        # sleeps in growing steps while another connection commits (a web app's tail latency).
        self._writing = threading.Lock()
        if not (self.path / CONFIG).is_file() or not (self.path / DATABASE).is_file():
            raise InputError(str(self.path), 0, f"not a trecbench workspace (no {CONFIG} / {DATABASE}); "
                                                "create one with `trecbench init`")
        self.settings = Settings.read(self.path / CONFIG)
        self._local = threading.local()
        # A folder that cannot be written (read-only media, an archive) is opened read-only: what reads works,
        # what writes fails with SQLite's "readonly database" (said in one line by the CLI).
        self.read_only = not _writable(self.path)
        self._immutable = _open_checked(self.path / DATABASE, read_only=self.read_only)

    # ---- creation and connections ----

    @classmethod
    def init(cls, path: str | os.PathLike, *, corpus: str | None = None, topics: str | None = None,
             name: str | None = None, sources: str | None = None) -> "Workspace":
        """Create the workspace folder, its settings and its database; topics are copied into the store. A
        corpus file is registered as corpus version v1 (`trecbench.versions`), its passages' source spans
        checked against `sources` (the sources file; without one, against each other)."""
        from trecbench.topics import read_topics

        root = Path(path)
        if (root / DATABASE).exists():
            raise InputError(str(root), 0, "a workspace already exists here")
        loaded = read_topics(topics) if topics else []
        spans = None
        if corpus:
            from trecbench.corpus import open_corpus

            open_corpus(corpus)  # fail now, not at the first judgment, if the corpus cannot be read
            if not corpus.startswith("irds:"):  # a dataset is registered on first use: reading it all takes long
                from trecbench.versions.passages import checked_spans

                spans = checked_spans(corpus, sources)
        root.mkdir(parents=True, exist_ok=True)
        (root / "runs").mkdir(exist_ok=True)
        settings = Settings(name or root.resolve().name, _portable(corpus, root), _portable(topics, root))
        (root / CONFIG).write_text(settings.to_toml(), encoding="utf-8")
        from .schema import create

        create(root / DATABASE)
        ws = cls(root)
        with ws.transaction():
            ws.add_topics(loaded)
            ws.set_meta("created_at", now())
        if corpus and spans is not None:
            from trecbench.versions.passages import register_version

            register_version(ws, corpus, spans, sources=_portable(sources, root), stored=settings.corpus)
        return ws

    def set_corpus(self, source: str) -> None:
        """Make `source` the workspace's corpus in trecbench.toml (what a corpus update does last; the file is
        replaced whole, so a kill leaves the old settings or the new)."""
        from trecbench.files.output import write_output

        self.settings.corpus = _portable(source, self.path)
        write_output(self.path / CONFIG, self.settings.to_toml())

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (autocommit; WAL; waits up to 30 s for another writer); read-only when the
        workspace folder cannot be written."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = _connect(self.path / DATABASE, read_only=self.read_only, immutable=self._immutable)
            if not self.read_only:
                conn.execute("PRAGMA journal_mode=WAL")
                # NORMAL: a kill loses nothing; FULL: neither does a power cut (a flush per commit)
                conn.execute("PRAGMA synchronous=" + ("FULL" if self.durable else "NORMAL"))
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
        return conn

    class _Tx:
        """A write transaction; inside another one of the same thread it is a savepoint of it, so that a
        caller can check a state and change it through methods that open their own transactions."""

        def __init__(self, conn: sqlite3.Connection, writing: threading.Lock):
            self.conn, self.writing = conn, writing
            self.nested = False

        def __enter__(self) -> sqlite3.Connection:
            self.nested = self.conn.in_transaction
            if self.nested:
                self.conn.execute("SAVEPOINT nested")
                return self.conn
            self.writing.acquire()
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except BaseException:
                self.writing.release()
                raise
            return self.conn

        def __exit__(self, exc_type, exc, tb) -> None:
            if self.nested:
                if exc_type:
                    self.conn.execute("ROLLBACK TO nested")
                self.conn.execute("RELEASE nested")
                return
            try:
                self.conn.execute("ROLLBACK" if exc_type else "COMMIT")
            finally:
                self.writing.release()

    def transaction(self) -> "_Tx":
        return Workspace._Tx(self.connection(), self._writing)

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every read inside it sees the database as it was at its first read, whatever
        other connections commit meanwhile."""
        conn = self.connection()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # ---- settings-derived inputs ----

    def resolve(self, source: str | None) -> str | None:
        if not source or source.startswith("irds:") or os.path.isabs(source):
            return source
        return str((self.path / source).resolve())

    @property
    def cache_path(self) -> Path:
        """The model-call cache of this workspace (its database): what every model command uses."""
        return self.path / DATABASE

    @property
    def corpus_source(self) -> str | None:
        return self.resolve(self.settings.corpus)

    def corpus(self):
        from trecbench.corpus import open_corpus

        if not self.corpus_source:
            raise InputError(str(self.path / CONFIG), 0, "no corpus configured ([corpus] source)")
        return open_corpus(self.corpus_source)


WorkspaceLike = Union["Workspace", str, "os.PathLike[str]"]  # what every function that takes a workspace accepts


def as_workspace(ws: WorkspaceLike) -> Workspace:
    """`ws` itself if it is a Workspace, else the workspace in that folder (InputError if it holds none)."""
    return ws if isinstance(ws, Workspace) else Workspace(ws)


def _open_checked(path: Path, *, read_only: bool = False) -> bool:
    """Check the database (and migrate an older schema, after a backup) on a connection of its own, before
    any connection changes a setting of the file; BrokenDatabase when it cannot be used as it is.

    Returns whether the connections must open it immutable: a read-only folder where SQLite cannot make the
    shared-memory file (bench.sqlite-shm) a read-only WAL connection needs, so nobody is writing it."""
    from .schema import check_and_migrate, check_file, refuse_unsaved_wal

    check_file(path)
    immutable = read_only and not _opens_read_only(path)
    if immutable:
        refuse_unsaved_wal(path)  # an immutable connection does not read the WAL: its changes would be missed
    conn = _connect(path, read_only=read_only, immutable=immutable)
    try:
        check_and_migrate(conn, path, read_only=read_only)
    finally:
        conn.close()
    return immutable


def _connect(path: Path, *, read_only: bool = False, immutable: bool = False) -> sqlite3.Connection:
    """A connection to the database: read-write, read-only (`mode=ro`), or read-only of a file nobody writes
    (`immutable=1`: SQLite then takes no lock and needs no -shm file)."""
    if not read_only:
        return sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=True)
    query = "mode=ro&immutable=1" if immutable else "mode=ro"
    return sqlite3.connect(f"{path.resolve().as_uri()}?{query}", uri=True, timeout=30, isolation_level=None,
                           check_same_thread=True)


def _opens_read_only(path: Path) -> bool:
    """Whether SQLite reads the database read-only in place (its -shm file exists, or the file is not WAL)."""
    conn = _connect(path, read_only=True)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:  # cannot open the -shm file; a damaged file is a DatabaseError, told later
        return False
    finally:
        conn.close()
    return True


def _writable(folder: Path) -> bool:
    """Whether this process can write the workspace folder and its database (SQLite makes files beside it)."""
    return os.access(folder, os.W_OK | os.X_OK) and os.access(folder / DATABASE, os.W_OK)


def _portable(source: str | None, root: Path) -> str | None:
    """Sources are stored relative to the workspace when they live beside it, so the folder can move."""
    if not source or source.startswith("irds:"):
        return source
    p = Path(source).resolve()
    home = root.resolve().parent
    if p == home or home in p.parents:
        return os.path.relpath(p, root.resolve())
    return str(p)
