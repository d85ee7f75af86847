"""Files built to hurt (issue 21): a gzip bomb is refused after one block, in every reading command.

The bomb is a real small file followed by 1 GiB of NUL bytes, gzipped (about 1 MB). A reader that
inflates it whole, or reads it as lines (NUL bytes have no newline: one line of 1 GiB), holds at least
1 GiB; a reader that checks each block as it streams stops at the first one. Each of 17 commands (every
reader) runs in its own process and its peak RSS (tests/support/peak_rss.py) must stay under 300 MB:
the interpreter with numpy and pandas imported is about 110 MB, so the bound leaves room for the
import and a few blocks, and none for the inflated file.
"""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from peak_rss import run_measured

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
    """A folder with one bomb per format: its real head, then NUL_BYTES zeros (4 MiB of them compressed once and
    repeated: gzip members in a row read as their concatenation, RFC 1952)."""
    folder = tmp_path_factory.mktemp("bombs")
    zeros = bytes(1 << 22)
    zeros_members = gzip.compress(zeros, compresslevel=9, mtime=0) * (NUL_BYTES // len(zeros))
    for name, head in HEADS.items():
        (folder / name).write_bytes(gzip.compress(head) + zeros_members)
    (folder / "ok.run").write_text("1 Q0 d1 1 1.0 r\n")
    (folder / "ok.qrels").write_text("1 0 d1 1\n")
    (folder / "ok.contexts.jsonl").write_text('{"qid": "1", "contexts": ["x"]}\n')
    (folder / "ok.corpus.jsonl").write_text('{"docid": "d1", "text": "x"}\n')
    (folder / "ok.topics.tsv").write_text("1\tx\n")
    from cli_support import run_cli

    made = run_cli("init", folder / "bench", "--corpus", folder / "ok.corpus.jsonl", "--topics", folder / "ok.topics.tsv")
    assert made.exit_code == 0, made.output
    return folder


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
    ("nuggets.jsonl.gz", ["eval", "evidence", "--evidence", "{bomb}", "--contexts", "{folder}/ok.contexts.jsonl"]),
    ("nuggets.jsonl.gz", ["nuggets", "import", "{bomb}", "-w", "{folder}/bench"]),
    ("qrels.gz", ["qrels", "import", "{bomb}", "-w", "{folder}/bench", "--judge", "nist"]),
    ("qrels.gz", ["qrels", "agree", "{folder}/ok.qrels", "{bomb}"]),
    ("run.gz", ["pool", "build", "{bomb}", "-w", "{folder}/bench"]),
    ("corpus.jsonl.gz", ["corpus", "get", "{bomb}", "d1"]),
]


@pytest.mark.parametrize("bomb, args", COMMANDS, ids=[f"{a[0]} {a[1]} ({b})" for b, a in COMMANDS])
def test_a_gzip_bomb_is_refused_in_one_line_with_bounded_memory(bombs, bomb, args):
    path = bombs / bomb
    status, _, err, peak_mb = run_measured([a.format(bomb=path, folder=bombs) for a in args])
    assert err.splitlines() == [f"{path}: binary file (NUL bytes), not text"]
    assert status == 2
    assert peak_mb < RSS_BOUND_MB, f"peak RSS {peak_mb:.0f} MB"


def test_a_gzip_bomb_on_standard_input_is_refused_in_one_line_with_bounded_memory(bombs):
    status, _, err, peak_mb = run_measured(["qrels", "validate", "-"], stdin=bombs / "qrels.gz")
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


def swapped_files(tmp_path: Path) -> tuple[Path, Path]:
    """A run and qrels of 1,200 lines each (12 topics of 100 documents)."""
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("".join(f"q{i // 100} Q0 d{i} {i % 100 + 1} {1 - i / 2000:.4f} myrun\n" for i in range(1200)))
    qrels.write_text("".join(f"q{i // 100} 0 d{i} {i % 2}\n" for i in range(1200)))
    return run, qrels


def test_a_run_given_as_qrels_lists_20_problems_counts_the_rest_and_says_the_files_look_swapped(tmp_path):
    from cli_support import run_cli

    run, qrels = swapped_files(tmp_path)
    result = run_cli("eval", "retrieval", "--qrels", run, qrels)
    assert result.stderr.splitlines() == [
        *(f"{run}:{n}: 6 fields, expected 4: qid iteration docid grade" for n in range(1, 21)),
        "... and 1180 more problems",
        f"{run}: this looks like a run file; did you swap --qrels and the run?",
    ]
    assert result.exit_code == 2


def test_qrels_given_as_a_run_say_the_files_look_swapped(tmp_path):
    from cli_support import run_cli

    _, qrels = swapped_files(tmp_path)
    result = run_cli("eval", "retrieval", "--qrels", qrels, qrels)
    lines = result.stderr.splitlines()
    assert lines[0] == f"{qrels}:1: 4 fields, expected 6: qid Q0 docid rank score tag"
    assert lines[20:] == ["... and 1180 more problems",
                          f"{qrels}: this looks like a qrels file; did you swap --qrels and the run?"]
    assert result.exit_code == 2


def test_many_problems_of_a_file_of_its_own_format_are_capped_without_a_swap_hint(tmp_path):
    from cli_support import run_cli

    run, qrels = swapped_files(tmp_path)
    bad = tmp_path / "bad.qrels"
    bad.write_text("q1 0 d1 1\n" + "".join(f"q1 0 e{i} high\n" for i in range(25)))
    result = run_cli("eval", "retrieval", "--qrels", bad, run)
    lines = result.stderr.splitlines()
    assert lines[:2] == [f"{bad}:2: grade 'high' is not an integer", f"{bad}:3: grade 'high' is not an integer"]
    assert lines[20:] == ["... and 5 more problems"]
    assert result.exit_code == 2


def test_up_to_20_problems_are_all_listed_as_before(tmp_path):
    from cli_support import run_cli

    run, _ = swapped_files(tmp_path)
    bad = tmp_path / "bad.qrels"
    bad.write_text("".join(f"q1 0 e{i} high\n" for i in range(20)))
    result = run_cli("eval", "retrieval", "--qrels", bad, run)
    assert result.stderr.splitlines() == [f"{bad}:{n}: grade 'high' is not an integer" for n in range(1, 21)]


@pytest.mark.parametrize("block", [1, 3, 7, 1 << 20])
def test_lines_read_a_block_at_a_time_are_the_lines_iterating_the_file_gives(monkeypatch, block):
    import io
    import random

    from trecbench.files import lines

    monkeypatch.setattr(lines, "_BLOCK", block)
    rng = random.Random(block)
    for _ in range(200):
        data = bytes(rng.choice(b"ab\n\r \xc3") for _ in range(rng.randrange(0, 40)))
        assert list(lines.raw_lines(io.BytesIO(data), "x")) == list(io.BytesIO(data))


@pytest.mark.parametrize("block", [1, 2, 5, 1 << 20])
def test_fields_read_a_block_at_a_time_are_the_fields_of_the_whole_file(tmp_path, monkeypatch, block):
    import random

    from trecbench.files import trec

    monkeypatch.setattr(trec, "_BLOCK", block)
    rng = random.Random(block)
    path = tmp_path / "run.txt"
    for _ in range(100):
        data = bytes(rng.choice(b"ab#\n\r \t\xc3\xa9") for _ in range(rng.randrange(0, 30)))
        path.write_bytes(rng.choice([b"", b"\xef\xbb\xbf"]) + data)
        whole = trec.read_bytes(path)
        assert list(trec.streamed_fields(path, comments=True)) == list(trec.numbered_fields(whole, str(path),
                                                                                              comments=True))
