"""A workspace on read-only media or a full disk: reading commands work read-only, the rest say in one line what
is wrong and what to do (never "SQLite cannot read the database (disk I/O error)" for a database that is fine).

Real file systems: a read-only bind mount and a small tmpfs filled up (root; see tests/support/mounts.py).
"""
from __future__ import annotations

from paths import ROOT

import gc
import shutil
import sqlite3
from pathlib import Path

import pytest

from mounts import fill, read_only, small_tmpfs

SAMPLE = ROOT / "src" / "trecbench" / "sample"
RUN = SAMPLE / "runs" / "bm25.txt"


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    """A workspace over the sample (qrels and nuggets imported, a run in BENCH/runs/), its database at rest."""
    from cli_support import run_cli

    root = tmp_path_factory.mktemp("read-only")
    assert run_cli("init", root / "bench", "--topics", SAMPLE / "topics.tsv",
                   "--corpus", SAMPLE / "corpus.jsonl").exit_code == 0
    assert run_cli("qrels", "import", SAMPLE / "qrels.txt", "-w", root / "bench", "--judge", "nist").exit_code == 0
    assert run_cli("nuggets", "import", SAMPLE / "nuggets.jsonl", "-w", root / "bench").exit_code == 0
    shutil.copy(RUN, root / "bench" / "runs" / "bm25.txt")
    return root / "bench"


def copy_at_rest(bench: Path, target: Path) -> Path:
    """The workspace copied with its database whole in bench.sqlite (no -wal or -shm beside it)."""
    gc.collect()  # connections of the commands run in this process
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(bench / "trecbench.toml", target / "trecbench.toml")
    shutil.copytree(bench / "runs", target / "runs")
    source, copy = sqlite3.connect(bench / "bench.sqlite"), sqlite3.connect(target / "bench.sqlite")
    try:
        source.backup(copy)
    finally:
        source.close()
        copy.close()
    assert sorted(p.name for p in target.iterdir()) == ["bench.sqlite", "runs", "trecbench.toml"]
    return target


def reading(ws: Path, out: Path) -> dict[str, list]:
    return {
        "qrels export": ["qrels", "export", "-w", ws, "-o", out],
        "nuggets export": ["nuggets", "export", "-w", ws, "-o", out],
        "report": ["report", "-w", ws, "-o", out, "--quiet"],
        "eval retrieval": ["eval", "retrieval", "-w", ws, RUN, "-m", "AP", "-m", "nDCG@10"],
        "eval answers": ["eval", "answers", "-w", ws, SAMPLE / "answers" / "good.jsonl"],
    }


@pytest.mark.parametrize("name", ["qrels export", "nuggets export", "report", "eval retrieval", "eval answers"])
def test_reading_commands_work_on_a_read_only_workspace(bench, tmp_path, cli_run, name):
    plain = cli_run(*reading(bench, tmp_path / "plain.out")[name])
    assert plain.exit_code == 0, plain.output
    ws = copy_at_rest(bench, tmp_path / "archive")
    before = (ws / "bench.sqlite").read_bytes()
    with read_only(ws):
        r = cli_run(*reading(ws, tmp_path / "ro.out")[name])
        assert r.exit_code == 0, r.output
        assert "Traceback" not in r.output
    if name in ("eval retrieval", "eval answers"):
        assert r.stdout == plain.stdout
    elif name in ("qrels export", "nuggets export"):
        assert (tmp_path / "ro.out").read_bytes() == (tmp_path / "plain.out").read_bytes()
    else:
        assert (tmp_path / "ro.out").stat().st_size > 0
    assert (ws / "bench.sqlite").read_bytes() == before
    assert sorted(p.name for p in ws.iterdir()) == ["bench.sqlite", "runs", "trecbench.toml"]


def test_a_command_that_changes_a_read_only_workspace_says_so_in_one_line(bench, tmp_path, cli_run):
    ws = copy_at_rest(bench, tmp_path / "archive")
    before = (ws / "bench.sqlite").read_bytes()
    with read_only(ws):
        r = cli_run("qrels", "import", SAMPLE / "qrels.second-assessor.txt", "-w", ws, "--judge", "bob")
    assert r.exit_code == 2, r.output
    assert r.stderr == ("trecbench: the workspace is read-only (attempt to write a readonly database): this command "
                        "changes it; run it on a writable copy of the folder; nothing was changed\n")
    assert (ws / "bench.sqlite").read_bytes() == before


def test_a_read_only_workspace_whose_wal_holds_unsaved_changes_is_refused_with_the_reason(bench, tmp_path, cli_run):
    ws = copy_at_rest(bench, tmp_path / "archive")
    writer = sqlite3.connect(ws / "bench.sqlite", isolation_level=None)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("INSERT INTO meta (key, value) VALUES ('note', 'only in the WAL')")
    copy = tmp_path / "media"
    shutil.copytree(ws, copy)  # as if copied to read-only media while the change was still in the WAL
    writer.close()
    (copy / "bench.sqlite-shm").unlink()
    assert (copy / "bench.sqlite-wal").stat().st_size > 0
    with read_only(copy):
        r = cli_run("qrels", "export", "-w", copy, "-o", tmp_path / "q.txt")
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert r.stderr.startswith(f"{copy / 'bench.sqlite'}: the workspace is read-only and bench.sqlite-wal holds "
                               "changes not yet written into the database")
    assert r.stderr.strip().endswith("open it once where it can be written (or a writable copy of the folder); "
                                     "nothing was changed")


def test_a_workspace_on_a_full_disk_says_the_disk_is_full_and_what_to_do(bench, tmp_path, cli_run):
    with small_tmpfs(tmp_path / "disk", size="2m") as disk:
        ws = copy_at_rest(bench, disk / "bench")
        fill(disk, leave=16 * 1024)  # less than the 32 kB of SQLite's -shm file
        r = cli_run("qrels", "export", "-w", ws, "-o", tmp_path / "q.txt")
        assert r.exit_code == 2 and "Traceback" not in r.output, r.output
        line = r.stderr.strip()
        assert len(line.splitlines()) == 1
        assert line.startswith(f"{ws / 'bench.sqlite'}: the disk holding the workspace is full (")
        assert "SQLite needs 32 kB beside the database for bench.sqlite-shm; free some space on it and run the " \
               "command again; nothing was changed" in line
        assert "SQLite cannot read the database" not in line
        (disk / ".filler").unlink()
        assert cli_run("qrels", "export", "-w", ws, "-o", tmp_path / "q.txt").exit_code == 0


def test_a_write_on_a_full_disk_says_the_disk_is_full_and_keeps_what_was_there(bench, tmp_path, cli_run):
    from trecbench.store import Workspace

    with small_tmpfs(tmp_path / "disk", size="2m") as disk:
        ws = copy_at_rest(bench, disk / "bench")
        holder = Workspace(ws)  # an open connection (the web app, say): the -shm file is already there
        count = len(holder.judgments())
        fill(disk)
        r = cli_run("qrels", "import", SAMPLE / "qrels.second-assessor.txt", "-w", ws, "--judge", "bob")
        assert r.exit_code == 2 and "Traceback" not in r.output, r.output
        assert r.stderr == ("trecbench: the disk holding the workspace is full (database or disk is full): free some "
                            "space on it and run the command again; the change it was making was rolled back\n")
        (disk / ".filler").unlink()
        assert len(holder.judgments()) == count
        holder.close()
        gc.collect()
