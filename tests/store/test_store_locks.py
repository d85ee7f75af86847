"""Opening a workspace while other processes use its database: the checks before SQLite opens the file
never release the locks SQLite holds for this process's connections to it (on POSIX, closing any
descriptor of a file drops them all), and never mistake a database being checkpointed for a damaged one."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from trecbench.store import Judge, Judgment, Workspace
from web_support import make_bench


def run_python(code: str, *args: object) -> str:
    r = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def count_elsewhere(db: Path) -> int:
    """The judgments another process sees; its connection closes, which checkpoints and deletes the WAL
    when SQLite finds no other process using the database."""
    return int(run_python("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
                          "print(c.execute('SELECT COUNT(*) FROM judgments').fetchone()[0]); c.close()", db))


KILLED_WRITER = """
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA wal_autocheckpoint=0")
c.execute("INSERT INTO judges (id, kind, name, created_at) VALUES (1, 'human', 'bob', 'then')")
c.executemany("INSERT INTO judgments (qid, docid, grade, status, judge_id, created_at) VALUES ('1', ?, 1, 'ok', 1, 'then')",
              [(f"d{i}",) for i in range(300)])
os._exit(0)
"""


def test_opening_a_workspace_again_keeps_the_first_ones_writes_visible_to_other_processes(tmp_path):
    bench = make_bench(tmp_path)
    db = bench / "bench.sqlite"
    ws = Workspace(bench)
    alice = Judge("human", "alice")
    ws.record(Judgment("1", "d1", 2, alice))  # ws's connection is open and holds SQLite's lock on the file
    assert Workspace(bench).path == bench  # a second handle in the same process, as library code makes
    assert count_elsewhere(db) == 1
    assert db.with_name("bench.sqlite-wal").exists()  # still in use by ws: the other process left its WAL
    ws.record(Judgment("1", "d2", 1, alice))
    assert count_elsewhere(db) == 2  # not written into a WAL the other process deleted
    ws.close()
    assert count_elsewhere(db) == 2


def test_a_database_in_the_middle_of_a_checkpoint_opens(tmp_path):
    """A checkpoint copies the WAL's pages into the file in page order: page 1, with the grown page count,
    is there before the file has grown. The database is whole (its WAL still holds every page)."""
    bench = make_bench(tmp_path)
    db = bench / "bench.sqlite"
    # another process commits 300 judgments and ends without a checkpoint, as a killed one does
    run_python(KILLED_WRITER, db)
    wal = db.with_name("bench.sqlite-wal").read_bytes()
    page_size = int.from_bytes(wal[8:12], "big")
    frames = [wal[o: o + 24 + page_size] for o in range(32, len(wal) - 24 - page_size + 1, 24 + page_size)]
    page_one = [f[24:] for f in frames if int.from_bytes(f[:4], "big") == 1][-1]
    assert int.from_bytes(page_one[28:32], "big") * page_size > db.stat().st_size  # the database grew
    with open(db, "r+b") as f:  # the checkpoint's first write
        f.write(page_one)
    assert len(Workspace(bench).judgment_rows()) == 300


def test_commits_survive_a_kill_everywhere_and_a_power_cut_in_the_web_app(tmp_path):
    from trecbench.web.app import create_app

    bench = make_bench(tmp_path)
    synchronous = "PRAGMA synchronous"
    assert Workspace(bench).connection().execute(synchronous).fetchone()[0] == 1  # NORMAL: WAL, safe from kills
    assert Workspace(bench, durable=True).connection().execute(synchronous).fetchone()[0] == 2  # FULL: flushed
    ws = Workspace(bench)
    create_app(ws, require_token=False)
    assert ws.durable and ws.connection().execute(synchronous).fetchone()[0] == 2  # people's grades are flushed
