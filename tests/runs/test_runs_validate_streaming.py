"""Validation streams (issue 21): memory is bounded by the problems kept, and their list is capped."""
from __future__ import annotations

from pathlib import Path

import pytest

from peak_rss import run_measured
from trecbench.errors import KEPT
from trecbench.qrels import check_qrels, validate_qrels
from trecbench.runs import check_run, validate_run

# Files of 50-70 MB with a problem every 1,000 lines: the old validation held them as Python objects
# (`runs validate` of the 67 MB run peaked at 680 MB, the qrels at 630 MB); streaming keeps the problems
# and one topic's docids (125 MB, 130 MB). The interpreter with numpy and pandas imported is about
# 110 MB, so 200 MB leaves room for blocks and none for the file.
RSS_BOUND_MB = 200
LINES = 1_200_000  # a problem on every 1,000th: 1,200, more than are kept


def write_lines(path: Path, middle: str, tails: list[str]) -> Path:
    """LINES lines `TOPIC{middle}{i:09d}{tail}`: a topic every 1,000 lines, line i's tail `tails[i % len(tails)]`."""
    period = len(tails)
    with open(path, "w") as f:
        for start in range(0, LINES, 10_000):
            f.write("".join([f"{100_000 + i // 1000}{middle}{i:09d}{tails[i % period]}"
                             for i in range(start, start + 10_000)]))
    return path


def run_tails(bad: bool) -> list[str]:
    """A run's rank, score and tag after its docid, by line within the topic; with `bad`, the 1,000th line's
    score is 'high'."""
    return [f"_passage {r + 1} {'high' if bad and r == 999 else f'{1 - r / 1000:.6f}'} my-run-tag\n" for r in range(1000)]


def qrels_tails(bad: bool) -> list[str]:
    """Qrels grades i % 3 after the docid; with `bad`, every 1,000th line's grade is 'yes'."""
    return [f"_passage_and_more {'yes' if bad and i % 1000 == 999 else i % 3}\n" for i in range(3000)]


def bad_run(path: Path) -> Path:
    return write_lines(path, " Q0 doc_", run_tails(bad=True))


def bad_qrels(path: Path) -> Path:
    return write_lines(path, " 0 doc_", qrels_tails(bad=True))


@pytest.mark.parametrize("group, make, message", [
    ("runs", bad_run, "score 'high' is not a number"),
    ("qrels", bad_qrels, "grade 'yes' is not an integer"),
])
def test_validating_a_big_file_with_problems_keeps_its_memory_bounded(tmp_path, group, make, message):
    path = make(tmp_path / f"{group}.txt")
    assert path.stat().st_size > 45_000_000
    status, _, err, peak_mb = run_measured([group, "validate", str(path)])
    lines = err.splitlines()
    assert lines[0] == f"{path}:1000: {message}"
    assert lines[KEPT - 1].startswith(f"{path}:{KEPT * 1000}: ")
    assert lines[KEPT:] == [f"{path}: {LINES // 1000 - KEPT} more problems not listed"]
    assert status == 2
    assert peak_mb < RSS_BOUND_MB, f"peak RSS {peak_mb:.0f} MB"


def clean_run(path: Path) -> Path:
    return write_lines(path, " Q0 doc_", run_tails(bad=False))


def clean_qrels(path: Path) -> Path:
    return write_lines(path, " 0 doc_", qrels_tails(bad=False))


# A clean file is split into columns (ids as words, then Arrow strings) instead of a table of Python
# objects. Peak MB measured on these files (67 MB run, 50 MB qrels): 412 and 463 before, 246 and 305
# after; each bound sits between the two.
@pytest.mark.parametrize("group, make, summary, bound_mb", [
    ("runs", clean_run, "1200 topics, 1200000 lines, runid my-run-tag", 330),
    ("qrels", clean_qrels, "1200 topics, 1200000 judgments, 800000 relevant", 390),
])
def test_validating_a_big_clean_file_costs_its_columns_not_a_table_of_objects(tmp_path, group, make, summary,
                                                                             bound_mb):
    path = make(tmp_path / f"{group}.txt")
    status, out, err, peak_mb = run_measured([group, "validate", str(path)])
    assert (status, out, err) == (0, f"{path}: ok, {summary}\n", "")
    assert peak_mb < bound_mb, f"peak RSS {peak_mb:.0f} MB"


def test_more_problems_than_are_kept_are_counted_in_a_last_line(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("".join(f"q1 Q0 d{i} {i} x tag\n" for i in range(1, KEPT + 6)))
    problems = [str(p) for p in validate_run(path)]
    assert len(problems) == KEPT + 1
    assert problems[0] == f"{path}:1: score 'x' is not a number"
    assert problems[KEPT - 1] == f"{path}:{KEPT}: score 'x' is not a number"
    assert problems[-1] == f"{path}: 5 more problems not listed"


def test_a_single_problem_more_than_kept_is_counted_in_the_singular(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("".join(f"q1 0 d{i} x\n" for i in range(KEPT + 1)))
    problems = [str(p) for p in validate_qrels(path)]
    assert problems[-1] == f"{path}: 1 more problem not listed"
    assert len(problems) == KEPT + 1


def test_a_docid_repeated_after_its_topic_came_back_is_found_with_its_first_line(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 1 t\nq2 Q0 d1 1 1 t\nq1 Q0 d2 2 0.5 t\nq1 Q0 d1 3 0.2  t\nq2 Q0 d9 2 x t\n")
    assert [str(p) for p in validate_run(run)] == [
        f"{run}:4: docid 'd1' appears twice in topic 'q1' (first on line 1)",
        f"{run}:5: score 'x' is not a number",
    ]
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d1 1\nq1 0 d1  0\nq2 0 d2 x\n")
    assert [str(p) for p in validate_qrels(qrels)] == [
        f"{qrels}:3: docid 'd1' judged twice for topic 'q1' (first on line 1)",
        f"{qrels}:4: grade 'x' is not an integer",
    ]


def test_a_docid_repeated_within_a_topic_whose_lines_are_together_is_found(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 1 t\nq1 Q0 d1 2 0.5 t\nq2 Q0 d1 1 1 t\n")
    assert [str(p) for p in validate_run(run)] == [f"{run}:2: docid 'd1' appears twice in topic 'q1' (first on line 1)"]


@pytest.mark.parametrize("content", [
    "q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 1.5 sys\nq2 Q0 d1 1 0.25 sys\n",  # clean: split into columns
    "q1  Q0 d1 1 2.5 sys\n# a comment\nq1 Q0 d2 2 1.5 sys\r\nq2\tQ0 d1 1 0.25 sys\n",  # valid, read exactly
])
def test_a_valid_run_gives_the_frame_read_run_gives(tmp_path, content):
    from trecbench.runs import read_run

    path = tmp_path / "run.txt"
    path.write_text(content)
    frame, problems = check_run(path)
    assert problems == [] and frame is not None
    expected = read_run(path, strict=True)
    assert frame.astype({"query_id": object, "doc_id": object}).equals(
        expected.astype({"query_id": object, "doc_id": object}))
    assert frame.attrs == expected.attrs


@pytest.mark.parametrize("content", [
    "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n",
    "q1  0 d1 1\n# note\nq1 0 d2 0\r\nq2\t0 d1 2\n",
])
def test_valid_qrels_give_the_frame_read_qrels_gives(tmp_path, content):
    from trecbench.qrels import read_qrels

    path = tmp_path / "qrels.txt"
    path.write_text(content)
    frame, problems = check_qrels(path)
    assert problems == [] and frame is not None
    expected = read_qrels(path)
    assert frame.astype(object).values.tolist() == expected.astype(object).values.tolist()
    assert frame.attrs == expected.attrs
