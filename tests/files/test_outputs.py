"""Output files: written whole or not at all, and a path that cannot be written is a clear error."""
from __future__ import annotations

from paths import ROOT

import os
import signal
import subprocess
import sys
import time

import pytest

from trecbench.errors import InputError
from trecbench.files.output import check_writable, open_output, write_output

SAMPLE = ROOT / "src" / "trecbench" / "sample"


def test_an_output_is_renamed_into_place_only_when_complete(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with open_output(target) as stream:
            stream.write("half of the new")
            raise RuntimeError("stopped")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    write_output(target, "new\n")
    assert target.read_text() == "new\n"


def test_a_new_output_gets_the_usual_permissions_and_an_old_one_keeps_its_own(tmp_path):
    fresh = tmp_path / "fresh.txt"
    write_output(fresh, "x")
    umask = os.umask(0)
    os.umask(umask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask
    fresh.chmod(0o640)
    write_output(fresh, "y")
    assert fresh.stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize("where", ["missing/out.txt", "folder"])
def test_a_path_that_cannot_be_written_is_an_input_error(tmp_path, where):
    (tmp_path / "folder").mkdir()
    with pytest.raises(InputError, match="cannot write the file"):
        write_output(tmp_path / where, "x")
    with pytest.raises(InputError, match="cannot write the file"):
        check_writable(tmp_path / where)


def test_eval_retrieval_to_an_unwritable_path_is_exit_2_without_a_traceback(tmp_path, cli_run):
    r = cli_run("eval", "retrieval", "--qrels", str(SAMPLE / "qrels.txt"), str(SAMPLE / "runs" / "bm25.txt"),
                "-m", "AP", "-o", str(tmp_path / "no" / "such" / "dir.txt"))
    assert r.exit_code == 2
    assert "cannot write the file" in r.output and "Traceback" not in r.output


def test_ctrl_c_exits_130_with_one_line(tmp_path):
    # a pool of the sample's runs read from a FIFO that never ends: the command waits until interrupted
    fifo = tmp_path / "run.txt"
    os.mkfifo(fifo)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "trecbench.cli", "pool", str(fifo), "-o", str(tmp_path / "pool.tsv")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    writer = None
    while writer is None and proc.poll() is None:  # the command opens the FIFO once it has started
        try:
            writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            time.sleep(0.05)
    assert writer is not None, proc.communicate()
    os.write(writer, b"1 Q0 d1 1 1.0 r\n")
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    os.close(writer)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err and "Aborted!" not in err
    assert not (tmp_path / "pool.tsv").exists()


@pytest.mark.parametrize("command", [
    ["eval", "compare", "--qrels", str(SAMPLE / "qrels.txt"), "--baseline", str(SAMPLE / "runs" / "bm25.txt"),
     str(SAMPLE / "runs" / "tfidf.txt"), "-m", "AP"],
    ["eval", "evidence", "--nuggets", str(SAMPLE / "nuggets.jsonl"), "--contexts", str(SAMPLE / "contexts.jsonl"),
     "--funnel"],
])
def test_scoring_commands_refuse_an_unwritable_output_with_exit_2(tmp_path, cli_run, command):
    r = cli_run(*command, "-o", str(tmp_path / "missing" / "out.txt"))
    assert r.exit_code == 2, r.output
    assert "cannot write the file" in r.output and "Traceback" not in r.output


def test_pool_and_export_qrels_refuse_an_unwritable_output_with_exit_2(tmp_path, cli_run):
    runs = [str(SAMPLE / "runs" / "bm25.txt"), str(SAMPLE / "runs" / "tfidf.txt")]
    r = cli_run("pool", *runs, "--depth", "5", "-o", str(tmp_path / "missing" / "pool.tsv"))
    assert r.exit_code == 2 and "cannot write the file" in r.output and "Traceback" not in r.output
    pool = tmp_path / "pool.tsv"
    assert cli_run("pool", *runs, "--depth", "5", "-o", str(pool)).exit_code == 0
    r = cli_run("pool", "export-qrels", str(pool), "--qrels", str(SAMPLE / "qrels.txt"),
                "-o", str(tmp_path / "missing" / "qrels.txt"))
    assert r.exit_code == 2 and "cannot write the file" in r.output and "Traceback" not in r.output
