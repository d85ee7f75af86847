"""Files built to hurt (issue 21): a gzip bomb is refused after one block, in every reading command.

The bomb is a real small file followed by 1 GiB of NUL bytes, gzipped (about 1 MB). A reader that
inflates it whole, or reads it as lines (NUL bytes have no newline: one line of 1 GiB), holds at least
1 GiB; a reader that checks each block as it streams stops at the first one. Each command runs in its
own process and its peak RSS (os.wait4) must stay under 300 MB: the interpreter with numpy and pandas
imported is about 110 MB, so the bound leaves room for the import and a few blocks, and none for the
inflated file.
"""
from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paths import SRC

NUL_BYTES = 1 << 30
RSS_BOUND_MB = 300
HEADS = {
    "run.gz": b"1 Q0 d1 1 1.0 r\n",
    "qrels.gz": b"1 0 d1 1\n",
    "topics.jsonl.gz": b'{"qid": "1", "query": "x"}\n',
    "topics.tsv.gz": b"1\tx\n",
    "corpus.jsonl.gz": b'{"docid": "d1", "text": "x"}\n',
    "answers.jsonl.gz": b'{"topic_id": "1", "answer": []}\n',
    "nuggets.jsonl.gz": b'{"qid": "1", "nuggets": []}\n',
}


@pytest.fixture(scope="module")
def bombs(tmp_path_factory) -> Path:
    """A folder with one bomb per format: its real head, then NUL_BYTES zeros (streamed into gzip once)."""
    folder = tmp_path_factory.mktemp("bombs")
    zeros = bytes(1 << 22)
    with gzip.open(folder / "zeros.gz", "wb", compresslevel=9) as f:
        for _ in range(NUL_BYTES // len(zeros)):
            f.write(zeros)
    zeros_member = (folder / "zeros.gz").read_bytes()
    for name, head in HEADS.items():  # a gzip file of two members reads as their concatenation (RFC 1952)
        (folder / name).write_bytes(gzip.compress(head) + zeros_member)
    (folder / "ok.run").write_text("1 Q0 d1 1 1.0 r\n")
    (folder / "ok.qrels").write_text("1 0 d1 1\n")
    return folder


def run_measured(args: list[str], stdin: Path | None = None) -> tuple[int, str, float]:
    """(exit status, stderr, peak RSS in MB) of `trecbench ARGS` in a child process."""
    env = dict(os.environ, PYTHONPATH=str(SRC.parent), LITELLM_LOCAL_MODEL_COST_MAP="True")
    with open(stdin or os.devnull, "rb") as source:
        proc = subprocess.Popen([sys.executable, "-m", "trecbench", *args], env=env, stdin=source,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert proc.stderr is not None
        err = proc.stderr.read().decode()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, err, usage.ru_maxrss / 1024  # ru_maxrss is in KiB on Linux


COMMANDS = [
    ("run.gz", ["runs", "validate", "{bomb}"]),
    ("run.gz", ["runs", "sort", "{bomb}", "-o", "{folder}/sorted.txt"]),
    ("run.gz", ["eval", "retrieval", "--qrels", "{folder}/ok.qrels", "{bomb}"]),
    ("run.gz", ["eval", "context-recall", "--mode", "id", "--contexts", "{bomb}", "--qrels", "{folder}/ok.qrels"]),
    ("qrels.gz", ["qrels", "validate", "{bomb}"]),
    ("qrels.gz", ["qrels", "stats", "{bomb}"]),
    ("qrels.gz", ["eval", "retrieval", "--qrels", "{bomb}", "{folder}/ok.run"]),
    ("topics.jsonl.gz", ["topics", "validate", "{bomb}"]),
    ("topics.tsv.gz", ["topics", "show", "{bomb}"]),
    ("corpus.jsonl.gz", ["corpus", "stats", "{bomb}"]),
    ("answers.jsonl.gz", ["answers", "validate", "{bomb}"]),
    ("nuggets.jsonl.gz", ["eval", "answers", "--nuggets", "{bomb}", "{folder}/answers.jsonl.gz"]),
]


@pytest.mark.parametrize("bomb, args", COMMANDS, ids=[" ".join(a[:2]) + f" ({b})" for b, a in COMMANDS])
def test_a_gzip_bomb_is_refused_in_one_line_with_bounded_memory(bombs, bomb, args):
    path = bombs / bomb
    status, err, peak_mb = run_measured([a.format(bomb=path, folder=bombs) for a in args])
    assert err.splitlines() == [f"{path}: binary file (NUL bytes), not text"]
    assert status == 2
    assert peak_mb < RSS_BOUND_MB, f"peak RSS {peak_mb:.0f} MB"


def test_a_gzip_bomb_on_standard_input_is_refused_in_one_line_with_bounded_memory(bombs):
    status, err, peak_mb = run_measured(["qrels", "validate", "-"], stdin=bombs / "qrels.gz")
    assert err.splitlines() == ["-: binary file (NUL bytes), not text"]
    assert status == 2
    assert peak_mb < RSS_BOUND_MB, f"peak RSS {peak_mb:.0f} MB"


def test_a_nul_byte_after_the_first_block_is_refused_too(tmp_path):
    from trecbench.errors import InputError
    from trecbench.files.lines import iter_lines
    from trecbench.files.trec import read_bytes

    path = tmp_path / "late.jsonl"
    path.write_bytes(b'{"qid": "1", "query": "x"}\n' * 100_000 + b"\x00\n")  # 2.7 MB: the NUL is in the third block
    with pytest.raises(InputError) as e:
        read_bytes(path)
    assert str(e.value) == f"{path}: binary file (NUL bytes), not text"
    with pytest.raises(InputError) as e:
        list(iter_lines(path))
    assert str(e.value) == f"{path}: binary file (NUL bytes), not text"


DEEP = '{"x":' * 200_000  # deeper than Python's recursion limit: json's parser raised RecursionError


@pytest.mark.parametrize("args", [
    ["answers", "validate", "{deep}"],
    ["topics", "validate", "{deep}"],
    ["corpus", "stats", "{deep}"],
    ["eval", "answers", "--nuggets", "{deep}", "{answers}"],
    ["eval", "evidence", "--evidence", "{deep}", "--contexts", "{answers}"],
    ["nuggets", "import", "{deep}", "-w", "{bench}"],
], ids=lambda args: " ".join(args[:2]))
def test_json_nested_too_deeply_is_one_line_and_exit_2(tmp_path, args):
    from cli_support import run_cli

    deep = tmp_path / "deep.jsonl"
    deep.write_text(DEEP + "\n")
    answers = tmp_path / "answers.jsonl"
    answers.write_text('{"topic_id": "1", "answer": [{"text": "x", "citations": []}]}\n')
    bench = tmp_path / "bench"
    if "-w" in args:
        (tmp_path / "corpus.jsonl").write_text('{"docid": "d1", "text": "x"}\n')
        (tmp_path / "topics.tsv").write_text("1\tx\n")
        assert run_cli("init", bench, "--corpus", tmp_path / "corpus.jsonl", "--topics", tmp_path / "topics.tsv").exit_code == 0
    result = run_cli(*[a.format(deep=deep, answers=answers, bench=bench) for a in args])
    assert result.stderr.splitlines() == [f"{deep}:1: invalid JSON: nested too deeply"]
    assert result.exit_code == 2


def test_a_scores_file_nested_too_deeply_is_one_line(tmp_path):
    from trecbench.errors import InputError
    from trecbench.evaluation.topic_scores import read_scores

    path = tmp_path / "scores.json"
    path.write_text("[" + DEEP + "\n")
    with pytest.raises(InputError) as e:
        read_scores(path)
    assert str(e.value) == f"{path}: invalid JSON: nested too deeply"
