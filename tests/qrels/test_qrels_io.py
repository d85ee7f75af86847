"""Qrels files: reading, comments, validation with line numbers, writing, stats, and the `qrels` commands."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import cli_support
from cli_support import assert_validate_refuses, run_cli

from trecbench.errors import InputError
from trecbench.qrels import check_qrels, qrels_stats, read_qrels, validate_qrels, write_qrels
from trecbench.qrels.trec import _scan_qrels

GOOD = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n"


def write(tmp_path: Path, content: str | bytes, name: str = "qrels.txt") -> Path:
    return cli_support.write(tmp_path, content, name)


def problems_of(path: Path) -> list[str]:
    return [str(p) for p in validate_qrels(path)]


def data_lines(path: Path) -> int:
    """Non-blank, non-comment lines, counted without the reader."""
    return sum(1 for line in path.read_text().splitlines() if line.strip() and not line.lstrip().startswith("#"))


# --- reading ------------------------------------------------------------------------------------


def test_read_qrels_gives_ids_as_str_and_grades_as_int64_in_file_order(tmp_path):
    path = write(tmp_path, GOOD)
    qrels = read_qrels(path)
    assert list(qrels.columns) == ["query_id", "iteration", "doc_id", "relevance"]
    assert [qrels[c].dtype for c in qrels.columns] == [object, object, object, np.int64]
    assert qrels.values.tolist() == [["q1", "0", "d1", 1], ["q1", "0", "d2", 0], ["q2", "0", "d1", 2]]
    assert qrels.attrs["path"] == str(path)


def test_comment_lines_are_skipped_but_hash_inside_a_docid_is_kept(tmp_path):
    path = write(tmp_path, "# header\nq1 0 d#1 1\n   # indented comment\n\nq1 0 #d2 0\n")
    assert read_qrels(path)["doc_id"].tolist() == ["d#1", "#d2"]


def test_iteration_is_kept_as_text_and_not_checked(tmp_path):
    path = write(tmp_path, "q1 0 d1 1\nq1 Q0 d2 1\nq1 0.5 d3 0\n")
    assert read_qrels(path)["iteration"].tolist() == ["0", "Q0", "0.5"]


def test_negative_grades_are_allowed(tmp_path):
    path = write(tmp_path, "q1 0 d1 -1\nq1 0 d2 +2\nq1 0 d3 007\n")
    assert read_qrels(path)["relevance"].tolist() == [-1, 2, 7]


def test_ids_keep_their_exact_text(tmp_path):
    path = write(tmp_path, 'NA 0 null 1\n007 0 007 1\n007 0 a"b 0\n')
    qrels = read_qrels(path)
    assert qrels["query_id"].tolist() == ["NA", "007", "007"]
    assert qrels["doc_id"].tolist() == ["null", "007", 'a"b']


def test_tabs_runs_of_spaces_and_windows_line_endings_are_accepted(tmp_path):
    path = write(tmp_path, b"  q1\t0 \t d1   1\r\nq1 0 d2 0\r\n")
    assert read_qrels(path).values.tolist() == [["q1", "0", "d1", 1], ["q1", "0", "d2", 0]]


def test_a_file_read_line_by_line_gives_the_same_qrels_as_the_fast_path(shared):
    path = shared / "trec_eval_tests/qrels.test.with-comments"
    slow, problems = _scan_qrels(path.read_bytes(), str(path))
    assert problems == []
    pd.testing.assert_frame_equal(slow, read_qrels(path))


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("line, n", [("q1 0 d2", 3), ("q1 0 d2 1 extra", 5), ("q1", 1)])
def test_a_line_without_four_fields_is_reported(tmp_path, line, n):
    path = write(tmp_path, f"q1 0 d1 1\n{line}\n")
    field_s = "field" if n == 1 else "fields"
    assert problems_of(path) == [f"{path}:2: {n} {field_s}, expected 4: qid iteration docid grade"]
    with pytest.raises(InputError, match="qrels.txt:2: "):
        read_qrels(path)


@pytest.mark.parametrize("grade", ["1.5", "x", "1.0", "1e3", "True", "1_0", "--1", "\u0661"])
def test_a_grade_that_is_not_an_integer_is_reported(tmp_path, grade):
    path = write(tmp_path, f"q1 0 d1 1\nq1 0 d2 {grade}\n")
    assert problems_of(path) == [f"{path}:2: grade {grade!r} is not an integer"]


def test_a_grade_too_large_for_int64_is_reported(tmp_path):
    path = write(tmp_path, "q1 0 d1 99999999999999999999\n")
    assert problems_of(path) == [f"{path}:1: grade '99999999999999999999' is out of range"]


def test_the_same_topic_and_docid_twice_names_both_lines(tmp_path):
    path = write(tmp_path, "q1 0 d1 1\n# comment\nq2 0 d1 0\nq1 0 d1 0\n")
    assert problems_of(path) == [f"{path}:4: docid 'd1' judged twice for topic 'q1' (first on line 1)"]
    with pytest.raises(InputError) as e:
        read_qrels(path)
    assert e.value.line == 4


@pytest.mark.parametrize("content", ["", "\n  \n", "# only a comment\n"])
def test_a_file_without_judgments_is_a_problem_of_the_whole_file(tmp_path, content):
    path = write(tmp_path, content)
    assert problems_of(path) == [f"{path}: empty file: no qrels lines (qid iteration docid grade)"]


def test_invalid_utf8_is_reported_with_its_line(tmp_path):
    path = write(tmp_path, b"q1 0 d1 1\n\xff\xfe 0 d2 1\n")
    assert problems_of(path) == [f"{path}:2: invalid UTF-8: byte 0xff at column 1"]


def test_a_missing_file_cannot_be_read(tmp_path):
    path = tmp_path / "nope.txt"
    with pytest.raises(InputError, match="nope.txt: cannot read: No such file or directory"):
        read_qrels(path)
    assert check_qrels(path) == (None, validate_qrels(path))


def test_every_problem_in_a_file_is_listed_in_line_order(tmp_path):
    path = write(tmp_path, "q1 0 d1 x\nq1 0 d2\nq1 0 d1 2\nq1 0 d3 1.5\n")
    assert problems_of(path) == [
        f"{path}:1: grade 'x' is not an integer",
        f"{path}:2: 3 fields, expected 4: qid iteration docid grade",
        f"{path}:3: docid 'd1' judged twice for topic 'q1' (first on line 1)",
        f"{path}:4: grade '1.5' is not an integer",
    ]


# --- writing and stats --------------------------------------------------------------------------


def test_written_qrels_read_back_identically(tmp_path):
    qrels = pd.DataFrame(
        {"query_id": ["2", "1", "007"], "iteration": ["0", "Q0", "0.5"], "doc_id": ["NA", "d#1", 'x"y'], "relevance": [-1, 3, 0]}
    )
    path = tmp_path / "out.txt"
    write_qrels(qrels, path)
    assert read_qrels(path).values.tolist() == qrels.values.tolist()


def test_written_qrels_without_iteration_get_zero(tmp_path):
    path = tmp_path / "out.txt"
    write_qrels(pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "relevance": [np.int64(2)]}), path)
    assert path.read_text() == "q 0 d 2\n"


def test_stats_count_judged_relevant_and_each_grade_per_topic(tmp_path):
    qrels = read_qrels(write(tmp_path, "q2 0 a 2\nq2 0 b -1\nq1 0 a 0\nq1 0 b 1\nq1 0 c 2\n"))
    stats = qrels_stats(qrels)
    assert stats.index.tolist() == ["q2", "q1", "all"]
    assert stats.columns.tolist() == ["judged", "relevant", "rel=-1", "rel=0", "rel=1", "rel=2"]
    assert stats.loc["q2"].tolist() == [1, 1, 1, 0, 0, 1]
    assert stats.loc["q1"].tolist() == [3, 2, 0, 1, 1, 1]
    assert stats.loc["all"].tolist() == [4, 3, 1, 1, 1, 2]


# --- command line -------------------------------------------------------------------------------


def test_validate_command_prints_a_summary_for_good_qrels(tmp_path):
    path = write(tmp_path, GOOD)
    result = run_cli("qrels", "validate", str(path))
    assert result.exit_code == 0
    assert result.stdout == f"{path}: ok, 2 topics, 3 judgments, 2 relevant\n"


@pytest.mark.parametrize(
    "content, message",
    [
        ("q1 0 d1\n", ":1: 3 fields, expected 4"),
        ("q1 0 d1 1 x\n", ":1: 5 fields, expected 4"),
        ("q1 0 d1 1.5\n", ":1: grade '1.5' is not an integer"),
        ("q1 0 d1 x\n", ":1: grade 'x' is not an integer"),
        ("q1 0 d1 1\nq1 0 d1 0\n", ":2: docid 'd1' judged twice for topic 'q1' (first on line 1)"),
        ("", ": empty file: no qrels lines"),
        (b"\xff\xfe", ":1: invalid UTF-8: byte 0xff at column 1"),
    ],
)
def test_validate_command_reports_bad_qrels_with_exit_status_2(tmp_path, content, message):
    assert_validate_refuses("qrels", write(tmp_path, content), message)


def test_validate_command_lists_every_problem_of_every_file(tmp_path):
    bad = write(tmp_path, "q1 0 d1 x\nq1 0 d2\nq1 0 d1 1\n", "bad.txt")
    good = write(tmp_path, GOOD, "good.txt")
    missing = tmp_path / "missing.txt"
    result = run_cli("qrels", "validate", str(missing), str(bad), str(good))
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"{missing}: cannot read: No such file or directory",
        f"{bad}:1: grade 'x' is not an integer",
        f"{bad}:2: 3 fields, expected 4: qid iteration docid grade",
        f"{bad}:3: docid 'd1' judged twice for topic 'q1' (first on line 1)",
    ]
    assert result.stdout.startswith(f"{good}: ok")
    assert "Traceback" not in result.output


def test_validate_command_reports_a_directory_without_traceback(tmp_path):
    assert_validate_refuses("qrels", tmp_path, ": cannot read: Is a directory")


def test_stats_command_prints_a_table(tmp_path):
    result = run_cli("qrels", "stats", str(write(tmp_path, GOOD)))
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["query_id", "judged", "relevant", "rel=0", "rel=1", "rel=2"]
    assert lines[-1].split() == ["all", "3", "2", "1", "1", "1"]


def test_stats_command_writes_csv_and_json(tmp_path):
    path = str(write(tmp_path, GOOD))
    csv = run_cli("qrels", "stats", path, "--format", "csv").stdout
    assert csv.splitlines()[:2] == ["query_id,judged,relevant,rel=0,rel=1,rel=2", "q1,2,1,1,1,0"]
    records = json.loads(run_cli("qrels", "stats", path, "-f", "json").stdout)
    assert records[1] == {"query_id": "q2", "judged": 1, "relevant": 1, "rel=0": 0, "rel=1": 0, "rel=2": 1}


def test_stats_command_on_bad_qrels_exits_2_without_traceback(tmp_path):
    path = write(tmp_path, "q1 0 d1 x\n")
    result = run_cli("qrels", "stats", str(path))
    assert result.exit_code == 2
    assert f"{path}:1: grade 'x' is not an integer" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize("args", [["qrels"], ["qrels", "validate"], ["qrels", "stats"]])
def test_every_qrels_command_help_ends_with_an_example(args):
    result = run_cli(*args, "--help")
    assert result.exit_code == 0
    assert "Example:\n    trecbench qrels" in result.output


# --- real files ---------------------------------------------------------------------------------


def test_trec_eval_qrels_with_comment_lines(shared):
    path = shared / "trec_eval_tests/qrels.test.with-comments"
    qrels = read_qrels(path)
    assert len(qrels) == 3681 == data_lines(path)  # grep -vc '^#'
    plain = read_qrels(shared / "trec_eval_tests/qrels.test")
    differs = (qrels != plain).any(axis=1)  # the same judgments but for one docid edited to hold a '#'
    assert qrels.loc[differs, "doc_id"].tolist() == ["CR#93E-1860"]
    assert plain.loc[differs, "doc_id"].tolist() == ["CR93E-1860"]


def test_trec_eval_rag_qrels_keep_hash_in_docids(shared):
    path = shared / "trec_eval_tests/qrels.comment.test"
    qrels = read_qrels(path)
    assert len(qrels) == 5890 == data_lines(path)
    assert qrels["query_id"].nunique() == 31
    assert qrels["doc_id"].str.contains("#").all()
    assert int((qrels["relevance"] > 0).sum()) == 4463  # awk '$4>0'
    assert qrels.iloc[0].tolist() == ["2024-127266", "0", "msmarco_v2.1_doc_00_880019750#4_1633802806", 1]


def test_covid_qrels_have_fractional_iterations(shared):
    path = shared / "real/anserini-tools/qrels.covid-round2-cumulative.txt"
    qrels = read_qrels(path)
    assert len(qrels) == 20728 == data_lines(path)
    assert int((qrels["iteration"] == "0.5").sum()) == 2627  # awk '$2=="0.5"'
    assert qrels["query_id"].nunique() == 35
    assert validate_qrels(path) == []


def test_trec_eval_graded_qrels_keep_negative_grades(shared):
    qrels = read_qrels(shared / "trec_eval_tests/qrels.rel_level")
    assert len(qrels) == 3681
    assert qrels["relevance"].value_counts().sort_index().to_dict() == {-1: 304, 0: 2818, 1: 462, 2: 14, 3: 77, 4: 6}
    stats = qrels_stats(qrels)
    assert stats.loc["303", "rel=-1"] == 304
    assert stats.loc["all", "judged"] == 3681 - 304


def test_writing_refuses_ids_that_would_not_read_back_as_one_field(tmp_path):
    qrels = pd.DataFrame({"query_id": ["q"], "iteration": [0], "doc_id": ["a b"], "relevance": [1]})
    with pytest.raises(ValueError, match="doc_id"):
        write_qrels(qrels, tmp_path / "out.txt")
    assert not (tmp_path / "out.txt").exists()
