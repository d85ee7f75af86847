"""What an output path names is kept: a FIFO or a device is written into, a symbolic link stays a link, and a
full disk, a read-only file system or a path under a file is one line naming the path, exit 2, the old file kept.

Everything runs through the CLI on real files: FIFOs with a reader thread, character devices made with mknod
(as root; /dev/full itself otherwise), a 64 kB tmpfs filled up and a read-only bind mount (root: see mounts.py).
"""
from __future__ import annotations

from paths import ROOT

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mounts import fill, read_only, small_tmpfs

SAMPLE = ROOT / "src" / "trecbench" / "sample"
RUN = SAMPLE / "runs" / "bm25.txt"


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    """A workspace over the sample's topics, with the sample's qrels (as judge nist) and nuggets imported."""
    from cli_support import run_cli

    root = tmp_path_factory.mktemp("outputs")
    assert run_cli("init", root / "bench", "--topics", SAMPLE / "topics.tsv",
                   "--corpus", SAMPLE / "corpus.jsonl").exit_code == 0
    assert run_cli("qrels", "import", SAMPLE / "qrels.txt", "-w", root / "bench", "--judge", "nist").exit_code == 0
    assert run_cli("nuggets", "import", SAMPLE / "nuggets.jsonl", "-w", root / "bench").exit_code == 0
    return root / "bench"


def commands(bench: Path) -> dict[str, list]:
    """Every kind of command with an output, by name; `-o` follows."""
    return {
        "qrels export": ["qrels", "export", "-w", bench],
        "runs sort": ["runs", "sort", RUN],
        "nuggets export": ["nuggets", "export", "-w", bench],
        "pool": ["pool", RUN, SAMPLE / "runs" / "tfidf.txt", "--depth", "5"],
        "eval retrieval": ["eval", "retrieval", "--qrels", SAMPLE / "qrels.txt", RUN, "-m", "AP"],
        "report": ["report", "-w", bench, "--quiet"],
    }


def expected(bench: Path, name: str, tmp_path: Path, cli_run) -> bytes:
    """What `name` writes to a regular file."""
    plain = tmp_path / f"plain-{name.replace(' ', '-')}"
    r = cli_run(*commands(bench)[name], "-o", plain)
    assert r.exit_code == 0, r.output
    return plain.read_bytes()


def one_line_exit_2(r, path: Path | str, cause: str) -> None:
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    lines = r.stderr.strip().splitlines()
    assert lines[-1] == f"{path}: cannot write the file: {cause}", r.stderr


def read_in_a_thread(fifo: Path) -> tuple[threading.Thread, list[bytes]]:
    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as f:
            got.append(f.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader, got


@pytest.mark.parametrize("name", ["qrels export", "runs sort", "pool", "report"])
def test_a_fifo_is_written_into_and_stays_a_fifo(bench, tmp_path, cli_run, name, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225599")  # the report's time: both renders in the same minute
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    reader, got = read_in_a_thread(fifo)
    r = cli_run(*commands(bench)[name], "-o", fifo)
    reader.join(timeout=60)
    assert r.exit_code == 0, r.output
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert got == [expected(bench, name, tmp_path, cli_run)]
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("plain-")) == ["out.fifo"]


def device(tmp_path: Path, name: str, major: int, minor: int) -> Path:
    """A character device node `major:minor` made in tmp_path (root), else the system's own /dev/NAME."""
    node = tmp_path / name
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
        with open(node, "wb"):  # a file system mounted nodev refuses to open devices
            pass
    except OSError:
        node.unlink(missing_ok=True)
        return Path("/dev") / name
    return node


def test_a_null_device_is_written_into_and_stays_a_device(bench, tmp_path, cli_run):
    null = device(tmp_path, "null", 1, 3)
    r = cli_run(*commands(bench)["qrels export"], "-o", null)
    assert r.exit_code == 0, r.output
    assert stat.S_ISCHR(null.lstat().st_mode) and os.major(null.stat().st_rdev) == 1
    assert [p.name for p in null.parent.iterdir() if p.name.startswith(".null")] == []


@pytest.mark.parametrize("name", sorted(commands(Path("x"))))
def test_a_full_device_is_one_line_and_exit_2(bench, tmp_path, cli_run, name):
    full = device(tmp_path, "full", 1, 7)
    r = cli_run(*commands(bench)[name], "-o", full)
    one_line_exit_2(r, full, "No space left on device")
    assert stat.S_ISCHR(full.lstat().st_mode)


def test_a_symbolic_link_stays_a_link_and_its_target_is_replaced(bench, tmp_path, cli_run):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "qrels.txt"
    target.write_text("old\n")
    link = tmp_path / "qrels.txt"
    link.symlink_to(Path("real") / "qrels.txt")
    r = cli_run(*commands(bench)["qrels export"], "-o", link)
    assert r.exit_code == 0, r.output
    assert link.is_symlink() and os.readlink(link) == str(Path("real") / "qrels.txt")
    assert target.read_bytes() == expected(bench, "qrels export", tmp_path, cli_run)
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["qrels.txt"]


def test_a_dangling_link_gets_the_file_it_names(bench, tmp_path, cli_run):
    link = tmp_path / "out.txt"
    link.symlink_to(tmp_path / "made.txt")
    assert cli_run(*commands(bench)["runs sort"], "-o", link).exit_code == 0
    assert link.is_symlink() and (tmp_path / "made.txt").read_bytes() == expected(bench, "runs sort", tmp_path, cli_run)


@pytest.mark.parametrize("name", ["qrels export", "runs sort", "pool", "report", "eval retrieval"])
def test_a_path_under_a_regular_file_is_one_line_and_exit_2(bench, tmp_path, cli_run, name):
    (tmp_path / "afile").write_text("a file, not a folder\n")
    r = cli_run(*commands(bench)[name], "-o", tmp_path / "afile" / "out.txt")
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert f"{tmp_path / 'afile' / 'out.txt'}: cannot write the file: " in r.stderr
    assert (tmp_path / "afile").read_text() == "a file, not a folder\n"


@pytest.mark.parametrize("name", sorted(commands(Path("x"))))
def test_a_full_disk_is_one_line_exit_2_and_the_old_file_is_kept(bench, tmp_path, cli_run, name):
    with small_tmpfs(tmp_path / "disk") as disk:
        old = disk / "out.txt"
        old.write_text("the old output\n")
        fill(disk)
        r = cli_run(*commands(bench)[name], "-o", old)
        one_line_exit_2(r, old, "No space left on device")
        assert old.read_text() == "the old output\n"
        assert sorted(p.name for p in disk.iterdir()) == [".filler", "out.txt"]


# eval retrieval's -o is refused by click before the command runs ("is not writable"), one line and exit 2 too
@pytest.mark.parametrize("name", sorted(set(commands(Path("x"))) - {"eval retrieval"}))
def test_a_read_only_file_system_is_one_line_exit_2_and_the_old_file_is_kept(bench, tmp_path, cli_run, name):
    folder = tmp_path / "archive"
    folder.mkdir()
    old = folder / "out.txt"
    old.write_text("the old output\n")
    with read_only(folder):
        r = cli_run(*commands(bench)[name], "-o", old)
        one_line_exit_2(r, old, "Read-only file system")
    assert old.read_text() == "the old output\n"
    assert sorted(p.name for p in folder.iterdir()) == ["out.txt"]


def test_dev_stdout_is_the_commands_standard_output_and_stays_a_link(tmp_path):
    # the kernel's link names the open stream (here a pipe): written into, never resolved and replaced
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    plain = tmp_path / "plain.txt"
    subprocess.run([sys.executable, "-m", "trecbench.cli", "runs", "sort", str(RUN), "-o", str(plain)], env=env,
                   check=True, capture_output=True)
    before = os.readlink("/dev/stdout")
    done = subprocess.run([sys.executable, "-m", "trecbench.cli", "runs", "sort", str(RUN), "-o", "/dev/stdout"],
                          env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == plain.read_bytes()
    assert os.path.islink("/dev/stdout") and os.readlink("/dev/stdout") == before
