"""`release create` where writing fails or was killed: one line and exit 2 for a folder under a file, a full
disk or a read-only file system; the temporary folder a killed run left is removed by the next run of the same
version, unless its process is alive."""
from __future__ import annotations

from paths import ROOT

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mounts import fill, read_only, small_tmpfs

SAMPLE = ROOT / "src" / "trecbench" / "sample"


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    """A workspace over the sample's corpus and topics, with the sample's qrels imported as judge nist."""
    from cli_support import run_cli

    root = tmp_path_factory.mktemp("release-writing")
    assert run_cli("init", root / "bench", "--topics", SAMPLE / "topics.tsv",
                   "--corpus", SAMPLE / "corpus.jsonl").exit_code == 0
    assert run_cli("qrels", "import", SAMPLE / "qrels.txt", "-w", root / "bench", "--judge", "nist").exit_code == 0
    return root / "bench"


def release(cli_run, bench: Path, *options):
    return cli_run("release", "create", "-w", bench, "--version", "v1", "--quiet", "--allow-missing-nuggets", *options)


def one_line_exit_2(r, line: str) -> None:
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    assert r.stderr.strip().splitlines() == [line]


def test_a_release_under_a_regular_file_is_one_line_and_exit_2(bench, tmp_path, cli_run):
    (tmp_path / "afile").write_text("not a folder\n")
    r = release(cli_run, bench, "-o", tmp_path / "afile" / "sub" / "v1")
    one_line_exit_2(r, f"{tmp_path / 'afile' / 'sub' / 'v1'}: cannot write the release: "
                       f"{str(tmp_path / 'afile')!r} is not a folder")
    assert (tmp_path / "afile").read_text() == "not a folder\n"


def test_a_release_on_a_full_disk_is_one_line_exit_2_and_leaves_nothing(bench, tmp_path, cli_run):
    with small_tmpfs(tmp_path / "disk") as disk:
        fill(disk, leave=8192)  # room for the folder and a file or two, not for the release
        r = release(cli_run, bench, "-o", disk / "v1")
        assert r.exit_code == 2 and "Traceback" not in r.output, r.output
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert r.stderr.startswith(f"{disk / 'v1'}") and r.stderr.strip().endswith("No space left on device")
        assert sorted(p.name for p in disk.iterdir()) == [".filler"]


def test_a_release_on_a_read_only_file_system_is_one_line_and_exit_2(bench, tmp_path, cli_run):
    folder = tmp_path / "media"
    folder.mkdir()
    with read_only(folder):
        r = release(cli_run, bench, "-o", folder / "v1")
        one_line_exit_2(r, f"{folder / 'v1'}: cannot write the release: Read-only file system")
    assert list(folder.iterdir()) == []


def a_dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    return int(done.stdout)


def test_the_next_release_removes_partial_folders_of_dead_processes_only(bench, tmp_path, cli_run):
    out = tmp_path / "releases"
    dead = out / f".v1.partial-{a_dead_pid()}"
    (dead / "half").mkdir(parents=True)
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        live = out / f".v1.partial-{alive.pid}"
        live.mkdir()
        other = out / f".v2.partial-{a_dead_pid()}"  # another version's: not this run's business
        other.mkdir()
        r = release(cli_run, bench, "-o", out / "v1")
        assert r.exit_code == 0, r.output
        assert sorted(p.name for p in out.iterdir()) == sorted([live.name, other.name, "v1"])
    finally:
        alive.kill()
        alive.wait()


def test_a_killed_release_leaves_a_partial_folder_that_the_next_run_removes(bench, tmp_path, cli_run):
    # the child stops for good after writing its first file, and is killed there
    child = textwrap.dedent(f"""
        import sys, time
        from trecbench.release import bundle
        write_topics = bundle._write_topics
        def stopped(folder, topics):
            name = write_topics(folder, topics)
            print(folder, flush=True)
            time.sleep(600)
            return name
        bundle._write_topics = stopped
        bundle.make_release({str(bench)!r}, "v1", {str(tmp_path / 'v1')!r}, allow_missing_nuggets=True)
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    partial = Path(proc.stdout.readline().strip())
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert partial.name == f".v1.partial-{proc.pid}" and (partial / "topics.tsv").is_file()
    r = release(cli_run, bench, "-o", tmp_path / "v1")
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v1"]
