"""files.columns.split_fields reads a file a block at a time: whatever the block size and whatever the source
(bytes, a BytesIO, an open file), the columns are those of the whole file read at once, lines cut at a block's
edge included, and what makes a file unclean is found wherever a block starts."""
from __future__ import annotations

import io

import numpy as np
import pytest

import trecbench.files.columns as columns
from trecbench.files.columns import gather_ids, split_fields


def run_text(lines: int, seed: int = 1, crlf: bool = False) -> bytes:
    rng = np.random.default_rng(seed)
    out, end = [], "\r\n" if crlf else "\n"
    for i in range(lines):
        doc = "d" * int(rng.integers(1, 30)) + str(i)  # ids of 2 to 36 bytes: one to five words
        score = [repr(float(rng.gamma(2.0, 4.0))), f"{rng.gamma(2.0, 4.0):.4f}", str(int(rng.integers(-99, 99)))][i % 3]
        out.append(f"q{i // 50} Q0 {doc} {i % 50 + 1} {score} tag{end}")
    return "".join(out).encode()


def expected(data: bytes) -> tuple[list[str], list[str], list[float]]:
    fields = [line.split() for line in data.decode().splitlines()]
    return [f[0] for f in fields], [f[2] for f in fields], [float(f[4]) for f in fields]


def read(source, tmp_path, how: str):
    if how == "file":
        path = tmp_path / "run.txt"
        path.write_bytes(source)
        with open(path, "rb") as f:
            return split_fields(f, 6, ids=(0,), floats=(4,), spans=(2,), comments=True)
    return split_fields(io.BytesIO(source) if how == "bytesio" else source, 6, ids=(0,), floats=(4,), spans=(2,),
                        comments=True)


def same(cols, data: bytes) -> bool:
    """qids, docids (as spans of the source) and scores (bit for bit) as the line-by-line split gives them."""
    qids, docs, scores = expected(data)
    return (cols[0].strings() == qids and [data[a:b].decode() for a, b in cols[2].tolist()] == docs
            and gather_ids(data, cols[2]).strings() == docs
            and cols[4].view(np.uint64).tolist() == np.array(scores).view(np.uint64).tolist())


@pytest.mark.parametrize("how", ["bytes", "bytesio", "file"])
@pytest.mark.parametrize("chunk", [64, 97, 1000, 1 << 20])
@pytest.mark.parametrize("ending", ["\n", "", "crlf"])
def test_columns_do_not_depend_on_the_block_size_or_the_source(tmp_path, monkeypatch, how, chunk, ending):
    data = run_text(700, crlf=ending == "crlf")
    if ending == "":
        data = data[:-1]  # the last line without its newline
    monkeypatch.setattr(columns, "_CHUNK", chunk)
    cols = read(data, tmp_path, how)
    assert cols is not None and same(cols, data)
    assert len(cols[0]) == len(cols[4]) == len(cols[2]) == 700


@pytest.mark.parametrize("how", ["bytes", "file"])
def test_a_line_longer_than_a_block_and_a_guess_of_lines_too_short_or_too_long(tmp_path, monkeypatch, how):
    # the first block's lines per byte sizes the columns: short lines then long ones (too many rows guessed,
    # trimmed at the end), long lines then short ones (too few: the columns grow), and one line of 300 bytes
    short = run_text(400, seed=2)
    long = "".join(f"q9 Q0 {'x' * 200}{i} 1 {i}.5 tag\n" for i in range(30)).encode()
    monkeypatch.setattr(columns, "_CHUNK", 256)
    cut = short.index(b"\n", 1000) + 1
    for data in (short + long, long + short, short[:cut] + b"q8 Q0 " + b"y" * 300 + b" 1 2.25 tag\n" + short[cut:]):
        cols = read(data, tmp_path, how)
        assert cols is not None and same(cols, data)
        assert cols[0].words.shape[0] == data.count(b"\n")


@pytest.mark.parametrize("bad", [b"\n", b"# a comment line\n", b"q1 Q0 d1 1 1.5\ttag\n", b"q1 Q0  d1 1 1.5 tag\n",
                                 b"q1 Q0 d1 1 1.5 tag\r\n", b"q1 Q0 d1 1 1.5\n", b" q1 Q0 d1 1 1.5 tag\n",
                                 b"q1 Q0 d1 1 1e5x tag\n", b"q1 Q0 d\x00 1 1 tag\n", b"q1 Q0  1 1.5 tag\n",
                                 b" Q0 d1 1 1.5 tag\n", b"q1 Q0 d1 1 1.5 \n"])
@pytest.mark.parametrize("at", [0, 1, 2])
def test_an_unclean_line_at_the_start_middle_or_end_of_a_later_block_sends_the_file_away(tmp_path, monkeypatch, bad, at):
    data = run_text(300, seed=3)
    monkeypatch.setattr(columns, "_CHUNK", 512)
    cut = [data.index(b"\n", 2000) + 1, data.index(b"\n", 2200) + 1, len(data)][at]
    assert read(data, tmp_path, "bytes") is not None
    spoiled = data[:cut] + bad + data[cut:]
    for how in ("bytes", "file"):
        assert read(spoiled, tmp_path, how) is None


@pytest.mark.parametrize("text", ["1", "12345678", "123456789", "1234567.", ".1234567", "+1234567", "-12345.678901234",
                                  "123456789012345", "1234567890123456", "12345678901234567", "123456789012345678",
                                  "-12345678901234567", "+1234567890.12345678", "1234567890123456789",
                                  "12345678901234567890123", "123456789012345678901234", "1234567890123456789012345",
                                  "-0.00000000000000000001", "0" * 30 + "1.5", "9" * 24])
def test_scores_of_every_width_next_to_short_ones_are_read_as_float_reads_them(text):
    # rows wider than the block's widest row read by arithmetic (24 bytes) and numbers of more than 18 digits
    # go through the exact conversion; a field that fills the row to its first byte is read whole
    texts = [text, "1.5", "-2", text, "0.125"]
    data = "".join(f"q d{i} {t}\n" for i, t in enumerate(texts)).encode()
    cols = split_fields(data, 3, ids=(0, 1), floats=(2,))
    assert cols is not None
    assert cols[2].view(np.uint64).tolist() == np.array([float(t) for t in texts]).view(np.uint64).tolist()


@pytest.mark.parametrize("text", ["1", "+12345678", "-123456789012345678", "123456789012345678", "1234567890123456789",
                                  "-1234567890123456789", "9223372036854775807", "0" * 25 + "7"])
def test_grades_of_every_width_are_read_as_int_reads_them(text):
    texts = [text, "3", "-1", text]
    data = "".join(f"q 0 d{i} {t}\n" for i, t in enumerate(texts)).encode()
    cols = split_fields(data, 4, ids=(0, 2), ints=(3,))
    assert cols is not None and cols[3].tolist() == [int(t) for t in texts]


@pytest.mark.parametrize("grades", [["0", "1", "3", "9"], ["0", "x", "1"], ["2", "-", "1"], ["0", ".", "1"], ["7", "+"]])
def test_one_character_grades_are_digits_or_the_file_goes_to_the_general_reader(grades):
    data = "".join(f"q 0 d{i} {g}\n" for i, g in enumerate(grades)).encode()
    for kind in ("ints", "floats"):
        cols = split_fields(data, 4, ids=(0, 2), **{kind: (3,)})
        if all(g.isdigit() for g in grades):
            assert cols is not None and cols[3].tolist() == [int(g) for g in grades]
            assert cols[3].dtype == (np.int64 if kind == "ints" else np.float64)
        else:
            assert cols is None


@pytest.mark.parametrize("bad", [b"q1 Q0 d1 1 1.5 tag\n", b"q1 Q0 d1 1 1.5\rtag\r\n", b"q1 Q0 d1 1 1.5 t\rag\n",
                                 b"q1 Q0 d1 1 1.5 tag\r\r\n", b"q1 Q0 d1 1 1.5 \r\n", b"\r\n", b"q1 Q0 d1 1 1.5 tag\n\r\n"])
def test_in_a_crlf_file_a_line_without_its_cr_or_with_another_cr_sends_the_file_away(tmp_path, monkeypatch, bad):
    data = run_text(300, seed=4, crlf=True)
    monkeypatch.setattr(columns, "_CHUNK", 512)
    cut = data.index(b"\n", 2000) + 1
    assert read(data, tmp_path, "bytes") is not None
    for how in ("bytes", "file"):
        assert read(data[:cut] + bad + data[cut:], tmp_path, how) is None
