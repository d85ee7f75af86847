"""Run files: reading, validation with line numbers, writing in trec_eval order, and the `runs` commands."""
from __future__ import annotations

import math
import random
import struct
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import cli_support
from cli_support import assert_validate_refuses, run_cli

from trecbench.errors import InputError
from trecbench.runs import check_run, read_run, trec_order, validate_run, write_run
from trecbench.runs.trec import _scan_run

GOOD = "q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 1.5 sys\nq2 Q0 d1 1 0.25 sys\n"


def write(tmp_path: Path, content: str | bytes, name: str = "run.txt") -> Path:
    return cli_support.write(tmp_path, content, name)


def problems_of(path: Path) -> list[str]:
    return [str(p) for p in validate_run(path)]


# --- reading ------------------------------------------------------------------------------------


def test_read_run_gives_ids_as_str_scores_as_float_in_file_order(tmp_path):
    path = write(tmp_path, GOOD)
    run = read_run(path)
    assert list(run.columns) == ["query_id", "doc_id", "score"]
    assert pd.api.types.is_string_dtype(run["query_id"]) and pd.api.types.is_string_dtype(run["doc_id"])
    assert run["score"].dtype == np.float64
    assert run.values.tolist() == [["q1", "d1", 2.5], ["q1", "d2", 1.5], ["q2", "d1", 0.25]]
    assert run.attrs == {"runid": "sys", "path": str(path)}


def test_tabs_runs_of_spaces_leading_whitespace_and_blank_lines_are_accepted(tmp_path):
    path = write(tmp_path, "\n  q1\tQ0   d1 \t 1\t2.5 sys\n\n   \n\tq1 Q0 d2 2 1.5 sys  \n")
    assert read_run(path).values.tolist() == [["q1", "d1", 2.5], ["q1", "d2", 1.5]]
    assert validate_run(path) == []


def test_ids_keep_their_exact_text(tmp_path):
    path = write(tmp_path, 'q Q0 NA 1 5 t\nq Q0 null 2 4 t\nq Q0 007 3 3 t\nq Q0 a"b 4 2 t\nq Q0 d#1 5 1 t\n007 Q0 nan 1 0 t\n')
    run = read_run(path)
    assert run["doc_id"].tolist() == ["NA", "null", "007", 'a"b', "d#1", "nan"]
    assert run["query_id"].tolist()[-1] == "007"
    assert all(type(d) is str for d in run["doc_id"])


def test_rank_and_q0_columns_are_ignored(tmp_path):
    path = write(tmp_path, "q1 whatever d1 x 2.5 sys\nq1 0 d2 rank 1.5 sys\n")
    assert read_run(path)["doc_id"].tolist() == ["d1", "d2"]


def test_windows_line_endings_and_byte_order_mark_are_accepted(tmp_path):
    path = write(tmp_path, b"\xef\xbb\xbfq1 Q0 d1 1 2.5 sys\r\nq1 Q0 d2 2 1.5 sys\r\n")
    run = read_run(path)
    assert run.values.tolist() == [["q1", "d1", 2.5], ["q1", "d2", 1.5]]
    assert run.attrs["runid"] == "sys"


def test_scores_are_parsed_exactly_like_strtod(tmp_path):
    rng = random.Random(7)
    texts = []
    while len(texts) < 2000:
        x = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        if math.isfinite(x):
            texts.append(rng.choice([repr(x), f"{x:.25e}", f"{rng.random():.30f}"]))
    path = write(tmp_path, "".join(f"q Q0 d{i} {i} {t} sys\n" for i, t in enumerate(texts)))
    assert read_run(path)["score"].tolist() == [float(t) for t in texts]


def test_scores_of_zero_and_one_are_numbers_not_booleans(tmp_path):
    path = write(tmp_path, "q Q0 d1 1 1 sys\nq Q0 d2 2 0 sys\nq Q0 d3 3 1.0 sys\n")
    assert read_run(path)["score"].tolist() == [1.0, 0.0, 1.0]


def test_true_and_false_are_not_scores(tmp_path):
    path = write(tmp_path, "q Q0 d1 1 True sys\nq Q0 d2 2 false sys\n")
    with pytest.raises(InputError) as e:
        read_run(path)
    assert [p.line for p in e.value.problems] == [1, 2]
    assert "score 'True' is not a number" in str(e.value)


def test_extra_fields_are_tolerated_unless_strict(tmp_path):
    path = write(tmp_path, "q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 1.5 sys junk here\n")
    assert read_run(path)["doc_id"].tolist() == ["d1", "d2"]
    with pytest.raises(InputError, match=r"run.txt:2: 8 fields, expected 6"):
        read_run(path, strict=True)
    assert problems_of(path) == [f"{path}:2: 8 fields, expected 6: qid Q0 docid rank score tag (extra: 'junk here')"]


def test_extra_fields_on_the_first_line_are_tolerated_too(tmp_path):
    path = write(tmp_path, "q1 Q0 d1 1 2.5 sys junk\nq1 Q0 d2 2 1.5 sys\n")
    assert read_run(path).values.tolist() == [["q1", "d1", 2.5], ["q1", "d2", 1.5]]
    assert [p.line for p in validate_run(path)] == [1]


def test_a_file_read_line_by_line_gives_the_same_run_as_the_fast_path(shared):
    path = shared / "trec_eval_tests/results.test"
    slow, problems = _scan_run(path.read_bytes(), str(path))
    assert problems == []
    pd.testing.assert_frame_equal(slow, read_run(path))
    assert slow.attrs == read_run(path).attrs


def test_a_vertical_tab_separates_fields_like_other_whitespace(tmp_path):
    path = write(tmp_path, b"q1 Q0 d1 1\x0b2.5 sys\nq1 Q0 d2 2 1.5\rsys\n")
    assert read_run(path).values.tolist() == [["q1", "d1", 2.5], ["q1", "d2", 1.5]]


# --- bad input ----------------------------------------------------------------------------------


def test_too_few_fields_is_reported_with_its_line(tmp_path):
    path = write(tmp_path, "q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 1.5\nq1 Q0 d3\n")
    assert problems_of(path) == [
        f"{path}:2: 5 fields, expected 6: qid Q0 docid rank score tag",
        f"{path}:3: 3 fields, expected 6: qid Q0 docid rank score tag",
    ]
    with pytest.raises(InputError) as e:
        read_run(path)
    assert [(p.line, p.path) for p in e.value.problems] == [(2, str(path)), (3, str(path))]


@pytest.mark.parametrize(
    "score, why",
    [("abc", "is not a number"), ("1,5", "is not a number"), ("1_0", "is not a number"), ("0x10", "is not a number"),
     ("nan", "is not a finite number"), ("NaN", "is not a finite number"), ("inf", "is not a finite number"),
     ("-Infinity", "is not a finite number"), ("1e400", "is not a finite number")],
)
def test_a_score_that_is_not_a_finite_number_is_reported(tmp_path, score, why):
    path = write(tmp_path, f"q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 {score} sys\n")
    assert problems_of(path) == [f"{path}:2: score {score!r} {why}"]
    with pytest.raises(InputError, match="run.txt:2: score"):
        read_run(path)


def test_the_same_docid_twice_in_a_topic_names_both_lines(tmp_path):
    path = write(tmp_path, "q1 Q0 d1 1 3 sys\nq2 Q0 d1 1 3 sys\nq1 Q0 d2 2 2 sys\nq1 Q0 d1 3 1 sys\n")
    assert problems_of(path) == [f"{path}:4: docid 'd1' appears twice in topic 'q1' (first on line 1)"]


def test_the_same_docid_in_different_topics_is_fine(tmp_path):
    path = write(tmp_path, "q1 Q0 d1 1 3 sys\nq2 Q0 d1 1 3 sys\n")
    assert validate_run(path) == []


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_an_empty_file_is_a_problem_of_the_whole_file(tmp_path, content):
    path = write(tmp_path, content)
    assert problems_of(path) == [f"{path}: empty file: no run lines (qid Q0 docid rank score tag)"]
    with pytest.raises(InputError) as e:
        read_run(path)
    assert e.value.line == 0


def test_invalid_utf8_is_reported_with_its_line(tmp_path):
    path = write(tmp_path, b"q1 Q0 d1 1 2.5 sys\nq1 Q0 d\xff\xfe 2 1.5 sys\n")
    assert problems_of(path) == [f"{path}:2: invalid UTF-8: byte 0xff at column 8"]
    with pytest.raises(InputError, match="run.txt:2: invalid UTF-8"):
        read_run(path)


def test_a_missing_file_cannot_be_read(tmp_path):
    path = tmp_path / "nope.txt"
    with pytest.raises(InputError, match=r"nope.txt: cannot read: No such file or directory"):
        read_run(path)
    assert problems_of(path) == [f"{path}: cannot read: No such file or directory"]
    assert check_run(path)[0] is None


def test_every_problem_in_a_file_is_listed_in_line_order(tmp_path):
    path = write(tmp_path, "q1 Q0 d1 1 abc sys extra\nq1 Q0 d2\n\nq1 Q0 d1 3 nan sys\nq2 Q0 d1 1 1 sys\n")
    assert problems_of(path) == [
        f"{path}:1: 7 fields, expected 6: qid Q0 docid rank score tag (extra: 'extra')",
        f"{path}:1: score 'abc' is not a number",
        f"{path}:2: 3 fields, expected 6: qid Q0 docid rank score tag",
        f"{path}:4: score 'nan' is not a finite number",
        f"{path}:4: docid 'd1' appears twice in topic 'q1' (first on line 1)",
    ]


def test_hash_lines_are_comments_in_runs_as_trec_eval_10_reads_them(tmp_path):
    path = write(tmp_path, "# run: bm25 k1=0.9\n  #q Q0 #d 1 2.5 sys\nq Q0 #d 1 2.5 sys\nq Q0 d#1 2 1.5 sys\n")
    run = read_run(path)
    assert run["query_id"].tolist() == ["q", "q"]
    assert run["doc_id"].tolist() == ["#d", "d#1"]


def test_a_topic_starting_with_hash_is_not_written(tmp_path):
    with pytest.raises(ValueError, match="must not start with '#'"):
        write_run(pd.DataFrame({"query_id": ["#1"], "doc_id": ["d"], "score": [1.0]}), tmp_path / "r.txt")


# --- writing ------------------------------------------------------------------------------------


def test_trec_order_sorts_by_topic_then_score_descending_then_docid_descending():
    run = pd.DataFrame({"query_id": ["2", "1", "1", "1", "1"], "doc_id": ["x", "a", "c", "b", "z"],
                        "score": [1.0, 1.0, 1.0, 1.0, 2.0]})
    ordered = trec_order(run)
    assert list(zip(ordered["query_id"], ordered["doc_id"])) == [("1", "z"), ("1", "c"), ("1", "b"), ("1", "a"), ("2", "x")]


def test_trec_order_compares_topics_and_docids_as_strings():
    run = pd.DataFrame({"query_id": ["10", "9", "10"], "doc_id": ["d10", "d9", "d9"], "score": [0.0, 0.0, 0.0]})
    assert trec_order(run)[["query_id", "doc_id"]].values.tolist() == [["10", "d9"], ["10", "d10"], ["9", "d9"]]


def test_written_run_reads_back_with_identical_scores_and_trec_order(tmp_path):
    rng = np.random.default_rng(3)
    scores = np.concatenate([rng.normal(size=200), [0.1 + 0.2, 1 / 3, 1e-300, -0.0, 5e15 + 0.5, 1.0, 1.0]])
    docids = ["NA", "007", 'q"uote', "null", "#x", "d#1", "nan"] + [f"doc{i}" for i in range(len(scores) - 7)]
    run = pd.DataFrame({"query_id": ["b", "a"] * (len(scores) // 2) + ["a"], "doc_id": docids, "score": scores})
    path = tmp_path / "out.txt"
    write_run(run, path, runid="mine")
    back = read_run(path)
    expected = trec_order(run)
    assert back["score"].tolist() == expected["score"].tolist()
    assert back[["query_id", "doc_id"]].values.tolist() == expected[["query_id", "doc_id"]].values.tolist()
    assert set(back["doc_id"]) >= {"NA", "007", 'q"uote', "null", "nan"}
    assert back.attrs["runid"] == "mine"


def test_written_ranks_count_from_one_in_each_topic(tmp_path):
    path = tmp_path / "out.txt"
    write_run(pd.DataFrame({"query_id": ["q2", "q1", "q1"], "doc_id": ["a", "b", "c"], "score": [1.0, 1.0, 2.0]}), path)
    assert path.read_text() == "q1 Q0 c 1 2.0 trecbench\nq1 Q0 b 2 1.0 trecbench\nq2 Q0 a 1 1.0 trecbench\n"


def test_written_tag_comes_from_the_frame_when_not_given(tmp_path):
    run = read_run(write(tmp_path, GOOD))
    path = tmp_path / "out.txt"
    write_run(run, path)
    assert read_run(path).attrs["runid"] == "sys"


def test_writing_refuses_ids_with_whitespace(tmp_path):
    with pytest.raises(ValueError, match="doc_id"):
        write_run(pd.DataFrame({"query_id": ["q"], "doc_id": ["a b"], "score": [1.0]}), tmp_path / "out.txt")


# --- command line -------------------------------------------------------------------------------


def test_validate_command_prints_a_summary_for_a_good_run(tmp_path):
    path = write(tmp_path, GOOD)
    result = run_cli("runs", "validate", str(path))
    assert result.exit_code == 0
    assert result.stdout == f"{path}: ok, 2 topics, 3 lines, runid sys\n"


@pytest.mark.parametrize(
    "content, message",
    [
        ("q1 Q0 d1 1 2.5\n", ":1: 5 fields, expected 6"),
        ("q1 Q0 d1 1 abc sys\n", ":1: score 'abc' is not a number"),
        ("q1 Q0 d1 1 nan sys\n", ":1: score 'nan' is not a finite number"),
        ("q1 Q0 d1 1 inf sys\n", ":1: score 'inf' is not a finite number"),
        ("q1 Q0 d1 1 1 sys\nq1 Q0 d1 2 1 sys\n", ":2: docid 'd1' appears twice in topic 'q1' (first on line 1)"),
        ("q1 Q0 d1 1 1 sys x\n", ":1: 7 fields, expected 6"),
        ("", ": empty file: no run lines"),
        (b"\xff\xfe", ":1: invalid UTF-8: byte 0xff at column 1"),
    ],
)
def test_validate_command_reports_bad_runs_with_exit_status_2(tmp_path, content, message):
    assert_validate_refuses("runs", write(tmp_path, content), message)


def test_validate_command_lists_every_problem_of_every_file(tmp_path):
    bad = write(tmp_path, "q1 Q0 d1 1 x sys\nq1 Q0 d2\nq1 Q0 d1 1 1 sys\n", "bad.txt")
    good = write(tmp_path, GOOD, "good.txt")
    missing = tmp_path / "missing.txt"
    result = run_cli("runs", "validate", str(bad), str(missing), str(good))
    assert result.exit_code == 2
    assert [line.split(": ")[0] for line in result.stderr.splitlines()] == [f"{bad}:1", f"{bad}:2", f"{bad}:3", str(missing)]
    assert f"{missing}: cannot read: No such file or directory" in result.stderr
    assert result.stdout.startswith(f"{good}: ok")
    assert "Traceback" not in result.output


def test_sort_command_rewrites_a_run_in_trec_order(tmp_path):
    path = write(tmp_path, "q2 Q0 a 1 1 t\nq1 Q0 b 9 1.5 t\nq1 Q0 c 3 2 t extra\n")
    out = tmp_path / "sorted.txt"
    result = run_cli("runs", "sort", str(path), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_text() == "q1 Q0 c 1 2.0 t\nq1 Q0 b 2 1.5 t\nq2 Q0 a 1 1.0 t\n"


def test_sort_command_can_rename_the_run_and_write_to_stdout(tmp_path):
    path = write(tmp_path, GOOD)
    result = run_cli("runs", "sort", str(path), "-o", "-", "--runid", "new")
    assert result.stdout.splitlines()[0] == "q1 Q0 d1 1 2.5 new"


def test_sort_command_on_a_bad_run_exits_2_without_traceback(tmp_path):
    path = write(tmp_path, "q1 Q0 d1 1 x sys\n")
    result = run_cli("runs", "sort", str(path), "-o", str(tmp_path / "out.txt"))
    assert result.exit_code == 2
    assert f"{path}:1: score 'x' is not a number" in result.stderr
    assert "Traceback" not in result.output
    assert not (tmp_path / "out.txt").exists()


def test_sort_command_reports_an_unwritable_output(tmp_path):
    result = run_cli("runs", "sort", str(write(tmp_path, GOOD)), "-o", str(tmp_path / "no/such/dir.txt"))
    assert result.exit_code == 2
    assert "cannot write" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize("args", [["runs"], ["runs", "validate"], ["runs", "sort"]])
def test_every_runs_command_help_ends_with_an_example(args):
    result = run_cli(*args, "--help")
    assert result.exit_code == 0
    assert "Example:\n    trecbench runs" in result.output


# --- real files ---------------------------------------------------------------------------------


def test_trec_eval_results_test_has_1500_lines_of_run_standard(shared):
    run = read_run(shared / "trec_eval_tests/results.test")
    assert len(run) == 1500
    assert run.attrs["runid"] == "STANDARD"
    assert sorted(run["query_id"].unique()) == ["301", "302", "303"]
    assert run.iloc[0].tolist() == ["301", "FR940202-2-00150", 2.129133]
    assert validate_run(shared / "trec_eval_tests/results.test") == []


def test_trec_eval_truncated_run_is_read_but_its_junk_columns_are_reported(shared):
    path = shared / "trec_eval_tests/results.trunc"
    run = read_run(path)
    assert len(run) == 584  # grep -c . results.trunc
    assert sorted(run["query_id"].unique()) == ["301", "303"]
    assert run.attrs["runid"] == "STANDARD"
    problems = validate_run(path)
    assert [p.line for p in problems] == [1, 2, 3, 4, 5]  # awk 'NF>6'
    assert all("fields, expected 6" in p.message for p in problems)
    with pytest.raises(InputError):
        read_run(path, strict=True)


def test_trec_eval_comment_run_keeps_hash_in_docids(shared):
    run = read_run(shared / "trec_eval_tests/results.comment.test")
    assert len(run) == 30100
    assert run["query_id"].nunique() == 301
    assert run["doc_id"].str.contains("#").all()
    assert run.iloc[0].tolist() == ["2024-224960", "msmarco_v2.1_doc_50_2286987788#13_3087841662", 0.7]
    assert run.attrs["runid"] == "comment.test"


def test_trec_order_matches_a_plain_python_sort_with_many_ties():
    rng = np.random.default_rng(11)
    n = 3000
    run = pd.DataFrame(
        {
            "query_id": pd.Series(rng.integers(0, 12, n).astype(str), dtype=object),
            "doc_id": pd.Series([f"d{i}" for i in rng.permutation(n)], dtype=object),
            "score": rng.integers(-2, 3, n) / 2,
        }
    )
    run.loc[::5, "score"] = -0.0  # equal to 0.0, so a tie broken by docid
    rows = sorted(zip(run["query_id"], run["score"], run["doc_id"]), key=lambda r: r[2], reverse=True)
    expected = sorted(rows, key=lambda r: (r[0], -r[1]))  # stable: docid descending among ties
    ordered = trec_order(run)
    assert list(zip(ordered["query_id"], ordered["score"], ordered["doc_id"])) == expected


def test_sort_command_refuses_a_runid_with_whitespace(tmp_path):
    result = run_cli("runs", "sort", str(write(tmp_path, GOOD)), "-o", str(tmp_path / "out.txt"), "--runid", "my run")
    assert result.exit_code == 2
    assert "runid" in result.stderr


def test_a_missing_field_between_two_spaces_is_refused_as_the_exact_reader_refuses_it(tmp_path):
    # one space everywhere but a double one where the rank is missing: 5 fields, not an empty sixth
    path = write(tmp_path, "q1 Q0 d0 1 3.5 r\nq1 Q0 d1  2.5 r\n", "run.txt")
    with pytest.raises(InputError) as e:
        read_run(path)
    assert str(e.value) == f"{path}:2: 5 fields, expected 6: qid Q0 docid rank score tag"


def test_a_space_beside_a_tab_is_whitespace_not_part_of_an_id(tmp_path):
    path = write(tmp_path, "q1\tQ0\tx1\t1\t3.5\tr\nq1\tQ0\tx2 \t2\t2.5\tr\n", "run.txt")
    assert read_run(path)["doc_id"].tolist() == ["x1", "x2"]
    path = write(tmp_path, "q1\tQ0\tx1\t1\t3.5\tr\nq1\tQ0\t\tx2\t2\t2.5\tr\n", "run2.txt")
    assert read_run(path)["doc_id"].tolist() == ["x1", "x2"]
