"""A broken `bench.sqlite` is refused by every workspace command: one message, exit 2, nothing changed."""
from __future__ import annotations

from paths import ROOT

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from trecbench.errors import InputError
from trecbench.nuggets.store import NuggetStore
from trecbench.store import Judge, Judgment, Workspace
from trecbench.store.schema import MIGRATIONS
from web_support import make_bench


def _seeded(root: Path) -> Path:
    """A workspace with a pool, 300 judgments (long replies, so the file has many pages) and 77 nuggets."""
    bench = make_bench(root)
    ws = Workspace(bench)
    model = Judge("model", "m", model="m", prompt_id="p")
    ws.record_many(Judgment("1", f"d{i % 5 + 1}", i % 4, model, raw_reply="reply " * 60) for i in range(300))
    store = NuggetStore(ws)
    for i in range(77):
        store.add("1", f"nugget number {i} about solar panels", "vital" if i % 3 == 0 else "okay", author="alice")
    ws.close()
    return bench


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    return _seeded(tmp_path_factory.mktemp("pristine"))


def _copy_bench(pristine: Path, target: Path) -> Path:
    import shutil

    shutil.copytree(pristine.parent, target)
    return target / "bench"


def _page_size(db: Path) -> int:
    size = int.from_bytes(db.read_bytes()[16:18], "big")
    return 65536 if size == 1 else size


def _corrupt_header(db: Path) -> None:
    data = bytearray(db.read_bytes())
    data[16:100] = b"\xff" * 84
    db.write_bytes(bytes(data))


def _truncate(db: Path) -> None:
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2 + 17])


def _truncate_at_a_page(db: Path) -> None:
    data = db.read_bytes()
    page = _page_size(db)
    db.write_bytes(data[: (len(data) // page // 2) * page])


def _not_sqlite(db: Path) -> None:
    db.write_bytes(b"PK\x03\x04 this is a zip archive, not a database\n" * 100)


def _zero_bytes(db: Path) -> None:
    db.write_bytes(b"")


def _dropped_table(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE nuggets")
    conn.commit()
    conn.close()


def _dropped_cache_table(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE llm_calls")
    conn.commit()
    conn.close()


def _newer_schema(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 99")
    conn.close()


def _foreign_sqlite(db: Path) -> None:
    db.unlink()
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE songs (title TEXT)")
    conn.execute("PRAGMA user_version = 3")
    conn.commit()
    conn.close()


def _page_corruption(db: Path) -> None:
    """Overwrite the B-tree page header of the nuggets table's root page (the header itself stays intact)."""
    conn = sqlite3.connect(db)
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'nuggets'").fetchone()[0]
    conn.close()
    page = _page_size(db)
    data = bytearray(db.read_bytes())
    data[(root - 1) * page: (root - 1) * page + 12] = b"\x07" * 12
    db.write_bytes(bytes(data))


BREAKAGES = {
    "corrupt header": (_corrupt_header, "header"),
    "truncated": (_truncate, "cut short"),
    "truncated at a page boundary": (_truncate_at_a_page, "cut short"),
    "not SQLite": (_not_sqlite, "not an SQLite database"),
    "zero bytes": (_zero_bytes, "empty (0 bytes)"),
    "dropped table": (_dropped_table, "table 'nuggets' is missing"),
    "dropped model call log": (_dropped_cache_table, "table 'llm_calls' is missing"),
    "newer schema": (_newer_schema, "schema version 99 is newer"),
    "foreign SQLite file": (_foreign_sqlite, "not a trecbench workspace's"),
    "page corruption": (_page_corruption, "damaged (SQLite quick_check"),
}


def _inputs(root: Path) -> None:
    (root / "run.txt").write_text("1 Q0 d1 1 2.0 r\n1 Q0 d2 2 1.0 r\n")
    (root / "qrels.txt").write_text("1 0 d1 2\n")
    (root / "nuggets.jsonl").write_text(
        json.dumps({"qid": "1", "query": "q", "nuggets": [{"text": "x", "importance": "vital"}]}) + "\n")
    (root / "answers.jsonl").write_text(json.dumps(
        {"metadata": {"team_id": "t", "run_id": "r", "topic_id": "1", "narrative_id": "1"}, "references": [],
         "answer": []}) + "\n")


def _commands(root: Path, bench: Path) -> dict[str, list]:
    """Every command that opens a workspace, with inputs (made by `_inputs`) that are fine."""
    run, qrels, nuggets, answers = (root / n for n in ("run.txt", "qrels.txt", "nuggets.jsonl", "answers.jsonl"))
    w = ["-w", bench]
    return {
        "assessors add": ["assessors", "add", "carol", *w],
        "assessors list": ["assessors", "list", *w],
        "pool build": ["pool", "build", run, *w, "--name", "p2"],
        "pool list": ["pool", "list", *w],
        "pool delete": ["pool", "delete", "p1", *w],
        "judge llm": ["judge", "llm", *w, "--model", "openai/m", "--dry-run"],
        "serve": ["serve", *w],
        "nuggets draft": ["nuggets", "draft", *w, "--extractive"],
        "nuggets list": ["nuggets", "list", *w],
        "nuggets export": ["nuggets", "export", *w, "-o", root / "out.jsonl"],
        "nuggets import": ["nuggets", "import", nuggets, *w],
        "check": ["check", *w],
        "report": ["report", *w, "-o", root / "report.html", "--quiet"],
        "release": ["release", *w, "--version", "v1"],
        "qrels export": ["qrels", "export", *w, "-o", root / "qrels.out"],
        "qrels import": ["qrels", "import", qrels, *w, "--judge", "nist"],
        "eval evidence": ["eval", "evidence", *w, "--contexts", run],
        "eval answers": ["eval", "answers", *w, answers],
    }


COMMANDS = list(_commands(Path("/nonexistent"), Path("/nonexistent")))


def _snapshot(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())
            if p.is_file() and not p.name.endswith(("-wal", "-shm"))}


@pytest.fixture
def no_listening(monkeypatch):
    """`serve` must fail before it listens; should it not, the test fails instead of waiting forever."""
    import trecbench.web.app

    def refuse(*args, **kwargs):
        raise AssertionError("serve started on a broken workspace")

    monkeypatch.setattr(trecbench.web.app, "serve", refuse)


@pytest.mark.parametrize("breakage", list(BREAKAGES))
@pytest.mark.parametrize("command", COMMANDS)
def test_every_workspace_command_refuses_a_broken_database_and_changes_nothing(pristine, tmp_path, cli_run, command,
                                                                               breakage, no_listening):
    bench = _copy_bench(pristine, tmp_path / "copy")
    _inputs(tmp_path)
    args = _commands(tmp_path, bench)[command]
    damage, expected = BREAKAGES[breakage]
    damage(bench / "bench.sqlite")
    before = _snapshot(bench)
    r = cli_run(*args)
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert "Traceback" not in r.output
    message = r.stderr.strip().splitlines()
    assert len(message) == 1, r.stderr
    assert message[0].startswith(f"{bench / 'bench.sqlite'}: "), message
    assert expected in message[0] and message[0].endswith("nothing was changed"), message
    assert _snapshot(bench) == before
    assert not (tmp_path / "report.html").exists() and not (bench / "releases").exists()


def test_page_corruption_is_reported_not_read_as_no_nuggets(pristine, tmp_path):
    bench = _copy_bench(pristine, tmp_path / "copy")
    assert len(NuggetStore(Workspace(bench)).export()[0].nuggets) == 77
    _page_corruption(bench / "bench.sqlite")
    with pytest.raises(InputError, match="damaged"):
        Workspace(bench)


def test_an_older_schema_is_backed_up_then_migrated(tmp_path, cli_run):
    """A schema-3 database (as trecbench wrote it before schema 4) is copied to bench.sqlite.v3.bak first."""
    bench = make_bench(tmp_path)
    db = bench / "bench.sqlite"
    db.unlink()
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    from trecbench.store.schema import _statements

    for number, sql in enumerate(MIGRATIONS[:3], start=1):
        for statement in _statements(sql):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {number}")
    conn.execute("INSERT INTO meta (key, value) VALUES ('created_at', 'then')")
    conn.execute("INSERT INTO assessors (name, token_hash, created_at) VALUES ('alice', 'h', 'then')")
    conn.close()
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    r = subprocess.run([sys.executable, "-m", "trecbench.cli", "assessors", "list", "-w", str(bench)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "alice\n"
    assert r.stderr == (f"{db}: schema 3 upgraded to {len(MIGRATIONS)}; the database as it was is kept in "
                        "bench.sqlite.v3.bak\n")
    backup = bench / "bench.sqlite.v3.bak"
    assert backup.is_file()
    old = sqlite3.connect(backup)
    assert old.execute("PRAGMA user_version").fetchone()[0] == 3
    assert old.execute("SELECT name FROM assessors").fetchall() == [("alice",)]
    old.close()
    new = sqlite3.connect(db)
    assert new.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    tables = {r[0] for r in new.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "provenance" not in tables and "runs" not in tables and "llm_calls" in tables
    new.close()
    r = cli_run("assessors", "list", "-w", bench)  # opening a current schema takes no second backup
    assert r.exit_code == 0 and sorted(p.name for p in bench.glob("*.bak")) == ["bench.sqlite.v3.bak"]


def schema_of(db: Path) -> tuple:
    """What makes two databases the same schema: sqlite_master, the header's pragmas, the journal mode."""
    conn = sqlite3.connect(db)
    try:
        return (sorted(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")),
                *(conn.execute(f"PRAGMA {p}").fetchone()[0] for p in
                  ("user_version", "application_id", "journal_mode", "page_size", "encoding", "auto_vacuum")))
    finally:
        conn.close()


def test_a_new_workspaces_database_is_the_one_its_migrations_make_in_place(tmp_path, cli_run):
    """`init` copies an empty database migrated in memory: the same as running every migration on the file."""
    from trecbench.store.schema import APPLICATION_ID, _migrate

    bench = tmp_path / "bench"
    assert cli_run("init", bench).exit_code == 0
    migrated = tmp_path / "migrated.sqlite"
    conn = sqlite3.connect(migrated, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    _migrate(conn, migrated)
    conn.close()
    made = schema_of(bench / "bench.sqlite")
    assert made == schema_of(migrated)
    assert made[1:4] == (len(MIGRATIONS), APPLICATION_ID, "wal") and len(made[0]) > 20
    assert cli_run("assessors", "list", "-w", bench).exit_code == 0  # opens, checks and writes as before
    assert schema_of(bench / "bench.sqlite")[0] == made[0] and not list(bench.glob("*.bak"))


def test_init_writes_only_settings_that_are_read(tmp_path):
    ws = Workspace.init(tmp_path / "bench")
    text = (tmp_path / "bench" / "trecbench.toml").read_text()
    assert "[judge]" not in text and "[corpus]" in text and "[topics]" in text
    assert ws.settings.name == "bench"


def test_a_database_error_after_the_checks_is_one_line_not_a_traceback(tmp_path, cli_run, monkeypatch):
    bench = make_bench(tmp_path)

    def damaged(self):
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(Workspace, "assessors", damaged)
    r = cli_run("assessors", "list", "-w", bench)
    assert r.exit_code == 2
    assert r.stderr == ("trecbench: the workspace database failed (database disk image is malformed); a change it "
                        "was making, if any, was rolled back\n")
